import Foundation
import JSONRPC
import SkillFolders
import SkillHost
import SkillJSON
import Support
import Synchronization

/// Skill folders over MCP, as the Skills Over MCP working group's extension (SEP-2640, `io.modelcontextprotocol/
/// skills`) has them: every file of a skill folder is a resource `skill://<name>/<path>` (`SKILL.md` as
/// `text/markdown`); `skills/list` gives each skill's entry — the `SKILL.md` URI, its front matter verbatim as JSON,
/// and every file with its `sha256:` digest; `skills/get` one entry by its URI (`-32602` for none). Clients that know
/// nothing of skills use the tools (`skill_activate`, `skill_read`, `skill_run`) like any other.
extension MCPServer {
    static let skillScheme = "skill://"
    /// The extension's identifier, declared in the capabilities.
    static let skillsExtension = "io.modelcontextprotocol/skills"
    /// Files listed per skill at most (a skill is instructions, scripts and small assets).
    static let maximumSkillFiles = 1000

    /// The skill folders served now.
    var servedSkills: [SkillFolder] { skillFolders?.scan.skills ?? [] }

    /// `skills/list`: every skill's entry.
    func skillsList() -> JSONValue {
        ["skills": .array(servedSkills.map { skillEntry($0) })]
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is `params.uri`.
    func skillsGet(_ request: MCPRequest, _ context: MCPMethod.Context) {
        let uri = request.params["uri"]?.stringValue ?? ""
        guard let skill = servedSkills.first(where: { Self.skillScheme + $0.name + "/SKILL.md" == uri }) else {
            respond(
                request.id, code: .invalidParams,
                message: "Invalid params: \(uri.isEmpty ? "skills/get needs a uri" : "no skill at \(uri)")",
                data: ["uri": .string(uri)], to: context.exchange)
            return
        }
        context.finish(["skill": skillEntry(skill)])
    }

    /// A skill's entry: its `SKILL.md` URI, front matter, and files with digests.
    func skillEntry(_ skill: SkillFolder) -> JSONValue {
        let resources: [JSONValue] = (["SKILL.md"] + skillFiles(skill)).compactMap { file in
            guard let opened = try? SkillFolderFiles.open(file, in: skill).get(),
                let digest = skillDigests.digest(of: opened, key: skill.folder + "/" + file)
            else { return nil }
            return ["uri": .string(Self.skillScheme + skill.name + "/" + file), "digest": .string(digest)]
        }
        return [
            "uri": .string(Self.skillScheme + skill.name + "/SKILL.md"), "frontmatter": skill.frontMatter.json,
            "resources": .array(resources),
        ]
    }

    /// The files of a skill other than `SKILL.md` a client may read: exactly those `resources/read` serves (no
    /// hidden file, no link, at most three folders down).
    func skillFiles(_ skill: SkillFolder) -> [String] {
        SkillFolderFiles.list(skill, limit: Self.maximumSkillFiles).files
    }

    /// `resources/list`'s skill part: each skill's `SKILL.md` (named and described from its front matter), then its
    /// other files.
    func skillResourceList() -> [JSONValue] {
        servedSkills.flatMap { skill -> [JSONValue] in
            let main: JSONValue = [
                "uri": .string(Self.skillScheme + skill.name + "/SKILL.md"), "name": .string(skill.name),
                "description": .string(skill.description), "mimeType": "text/markdown",
            ]
            return [main]
                + skillFiles(skill).map { file in
                    [
                        "uri": .string(Self.skillScheme + skill.name + "/" + file),
                        "name": .string(skill.name + "/" + file), "mimeType": .string(Self.mimeType(file)),
                    ]
                }
        }
    }

    /// `resources/read` of a `skill://` URI: the file's text (or base64 for binary), or why not.
    func readSkillResource(_ uri: String) -> Result<JSONValue, SkillFolderError> {
        let rest = uri.dropFirst(Self.skillScheme.count)
        guard let slash = rest.firstIndex(of: "/") else { return .failure(SkillFolderError("Resource not found")) }
        let name = String(rest[..<slash])
        let file = String(rest[rest.index(after: slash)...])
        guard let skill = servedSkills.first(where: { $0.name == name }) else {
            return .failure(SkillFolderError("Resource not found"))
        }
        // Opened once beneath the folder and read from what was opened (a link swapped in after a check returned a
        // file outside the folder).
        let opened: SkillFolderFiles.Opened
        switch SkillFolderFiles.open(file, in: skill) {
        case .failure(let error): return .failure(error)
        case .success(let file): opened = file
        }
        guard let data = opened.read(upTo: SkillFile.maximumBytes + 1) else {
            return .failure(SkillFolderError("\(uri) cannot be read"))
        }
        guard data.count <= SkillFile.maximumBytes else {
            return .failure(SkillFolderError("\(uri) is larger than \(SkillFile.maximumBytes >> 10) KB"))
        }
        var content = JSONObject([
            (key: "uri", value: .string(uri)), (key: "mimeType", value: .string(Self.mimeType(file))),
        ])
        if !data.contains(0), let text = String(data: data, encoding: .utf8) {
            content["text"] = .string(text)
        } else {
            content["blob"] = .string(data.base64EncodedString())
        }
        return .success(["contents": [.object(content)]])
    }

    static func mimeType(_ file: String) -> String {
        switch (file as NSString).pathExtension.lowercased() {
        case "md": return "text/markdown"
        case "py": return "text/x-python"
        case "sh", "bash": return "text/x-shellscript"
        case "js": return "text/javascript"
        case "json": return "application/json"
        case "txt": return "text/plain"
        case "yaml", "yml": return "application/yaml"
        case "html": return "text/html"
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        case "pdf": return "application/pdf"
        default: return "application/octet-stream"
        }
    }
}

/// SHA-256 digests of skill files (`sha256:<hex>`), kept while a file's size and modification time stay the same.
final class SkillDigests: Sendable {
    private let cache = Mutex<[String: (size: Int, modified: Int, digest: String)]>([:])

    /// The digest of the opened file (`key`: its path, for the cache).
    func digest(of file: SkillFolderFiles.Opened, key path: String) -> String? {
        let info = file.info
        let size = Int(info.st_size)
        // Wrapping: a file's time is a stranger's number (a far-future mtime trapped), and this is only a key.
        let modified = Int(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int(info.st_mtim.tv_nsec)
        if let cached = cache.withLock({ $0[path] }), cached.size == size, cached.modified == modified {
            return cached.digest
        }
        guard size <= 64 << 20, let data = file.read(upTo: 64 << 20) else { return nil }
        let digest = "sha256:" + HTTPGuard.sha256(bytes: Array(data)).map { String(format: "%02x", $0) }.joined()
        cache.withLock { $0[path] = (size, modified, digest) }
        return digest
    }
}
