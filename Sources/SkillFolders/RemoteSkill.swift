import Foundation
import SkillJSON
import Support

/// A skill an MCP server serves (Skills Over MCP: its `skills/list` entry), offered beside the local skill folders
/// under `<server>/<name>` — a name of its origin's own, so it never shadows a local skill or another server's. Its
/// files are read through the server (`resources/read`), each checked against the entry's digest, `SKILL.md`'s
/// front matter against the entry's; its scripts never run here (a remote party's code).
package struct RemoteSkill: Sendable {
    package let server: String
    package let name: String
    package let description: String
    /// The entry's `SKILL.md` URI, and the folder URI the files are under.
    package let uri: String
    /// The entry's front matter, as JSON.
    package let frontMatter: JSONValue
    /// Every file's digest (`sha256:…`) by URI.
    package let digests: [String: String]
    /// Reads a resource of the server: its bytes, or why not.
    package let read: @Sendable (String) async -> Result<[UInt8], SkillFolderError>

    /// The name the model and the person use: `<server>/<name>`.
    package var label: String { server + "/" + name }

    package var root: String { uri.hasSuffix("/SKILL.md") ? String(uri.dropLast("SKILL.md".count)) : uri + "/" }

    /// A `skills/list` entry as a remote skill; nil for an entry without a usable URI or name.
    package init?(
        entry: JSONValue, server: String, read: @escaping @Sendable (String) async -> Result<[UInt8], SkillFolderError>
    ) {
        guard let uri = entry["uri"]?.stringValue, uri.hasSuffix("/SKILL.md"),
            let name = entry["frontmatter"]?["name"]?.stringValue, !name.isEmpty, !name.contains("/")
        else { return nil }
        self.server = server
        self.name = name
        self.uri = uri
        description = entry["frontmatter"]?["description"]?.stringValue ?? ""
        frontMatter = entry["frontmatter"] ?? .null
        var digests: [String: String] = [:]
        for resource in entry["resources"]?.arrayValue ?? [] {
            if let file = resource["uri"]?.stringValue, let digest = resource["digest"]?.stringValue {
                digests[file] = digest
            }
        }
        self.digests = digests
        self.read = read
    }

    /// A file of the skill (`SKILL.md` or a relative path), read through the server and checked: it must be listed
    /// in the entry and match its digest.
    package func file(_ relative: String) async -> Result<String, SkillFolderError> {
        let parts = relative.split(separator: "/")
        guard !relative.hasPrefix("/"), !parts.contains("..") else {
            return .failure(SkillFolderError("\(relative) is not a path inside skill \(label)"))
        }
        let address = root + parts.joined(separator: "/")
        guard let digest = digests[address] else {
            return .failure(
                SkillFolderError(
                    "skill \(label) lists no file \(relative) (MCP server \(server) publishes its files with digests); "
                        + "its activation lists the files"))
        }
        let bytes: [UInt8]
        switch await read(address) {
        case .failure(let error): return .failure(error)
        case .success(let read): bytes = read
        }
        guard bytes.count <= SkillFile.maximumBytes else {
            return .failure(
                SkillFolderError(
                    "\(address) from MCP server \(server) is larger than \(SkillFile.maximumBytes >> 10) KB; it was not "
                        + "used"))
        }
        let actual = "sha256:" + HTTPGuard.sha256(bytes: bytes).map { String(format: "%02x", $0) }.joined()
        guard actual == digest else {
            return .failure(
                SkillFolderError(
                    "\(address) from MCP server \(server) is not what its listing promised (digest \(actual), listed "
                        + "\(digest)); it was not used — the skill changed or was tampered with"))
        }
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(SkillFolderError("\(relative) in skill \(label) is a binary file; only text is read"))
        }
        return .success(text)
    }

    /// The instructions: `SKILL.md` read and checked, its front matter compared with the entry's.
    package func activation() async -> Result<String, SkillFolderError> {
        let text: String
        switch await file("SKILL.md") {
        case .failure(let error): return .failure(error)
        case .success(let read): text = read
        }
        guard case .success(let parts) = SkillFile.split(text, file: uri),
            case .success(let value?) = YAMLReader.read(parts.frontMatter, strict: false), value.json == frontMatter
        else {
            return .failure(
                SkillFolderError(
                    "\(uri) from MCP server \(server) does not carry the front matter its listing gave; it was not "
                        + "loaded"))
        }
        let files = digests.keys.filter { $0 != uri }.map { String($0.dropFirst(root.count)) }.sorted()
        var out = "<skill_content name=\"\(label)\">\n\(parts.body)\n\n"
        out += "This skill is served by MCP server \(server). Read its files with skill_read (name \(label)); its "
        out += "scripts do not run here.\n"
        if !files.isEmpty {
            out += "<skill_resources>\n" + files.map { "  <file>\($0)</file>\n" }.joined() + "</skill_resources>\n"
        }
        return .success(out + "</skill_content>")
    }
}
