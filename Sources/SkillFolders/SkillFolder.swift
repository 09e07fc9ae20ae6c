import Foundation

/// A skill of the Agent Skills format: a folder with a `SKILL.md` (YAML front matter, then markdown instructions)
/// and optional `scripts/`, `references/`, `assets/`. Read leniently (what the client guide says to load anyway is
/// loaded, with a warning); `SkillFolderCheck` is the strict verdict.
package struct SkillFolder: Sendable, Equatable {
    /// Where a skill folder was found; a project's skills override the user's of the same name.
    package enum Scope: String, Sendable, Comparable {
        /// Folders named in config.json.
        case configured
        /// `$XDG_DATA_HOME/skillhost/skills`, `~/.agents/skills`, `~/.claude/skills`.
        case user
        /// `<project>/.agents/skills`, `<project>/.claude/skills` of a trusted project.
        case project

        package static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rank < rhs.rank }

        private var rank: Int {
            switch self {
            case .configured: return 0
            case .user: return 1
            case .project: return 2
            }
        }
    }

    package let name: String
    package let description: String
    package let license: String?
    package let compatibility: String?
    /// `metadata` as text to text (other shapes are kept out, with a warning).
    package let metadata: [(key: String, value: String)]
    /// `allowed-tools` (experimental in the specification): shown, never acted on.
    package let allowedTools: String?
    /// The front matter as written, for clients that want it verbatim (MCP `skills/list`).
    package let frontMatter: YAMLValue
    /// The folder (absolute, as found) and its `SKILL.md`.
    package let folder: String
    package let file: String
    package let scope: Scope
    /// What is not as the specification says but did not stop the skill from loading.
    package let warnings: [String]

    package static func == (lhs: SkillFolder, rhs: SkillFolder) -> Bool {
        lhs.name == rhs.name && lhs.description == rhs.description && lhs.folder == rhs.folder
            && lhs.frontMatter == rhs.frontMatter && lhs.scope == rhs.scope && lhs.warnings == rhs.warnings
    }

    /// The instructions: `SKILL.md` after its front matter, read now (the file may have changed since the scan).
    package func body() -> Result<String, SkillFolderError> {
        switch SkillFile.read(file) {
        case .failure(let error): return .failure(error)
        case .success(let text):
            switch SkillFile.split(text, file: file) {
            case .failure(let error): return .failure(error)
            case .success(let parts): return .success(parts.body)
            }
        }
    }
}

/// Why a skill folder cannot be used: one sentence naming the file and what to do.
package struct SkillFolderError: Error, Sendable, Equatable, CustomStringConvertible {
    package let message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}

/// Reading `SKILL.md`: bounded in size, text only, split into front matter and body.
package enum SkillFile {
    /// The largest `SKILL.md` read (the specification recommends under 500 lines; long material belongs in
    /// `references/`).
    package static let maximumBytes = 1 << 20
    /// The largest front matter parsed.
    package static let maximumFrontMatterBytes = 64 << 10

    /// The `SKILL.md` of `folder` (`skill.md` is accepted too, as the reference validator does), or nil.
    package static func locate(in folder: String) -> String? {
        for name in ["SKILL.md", "skill.md"] {
            var info = stat()
            let path = folder + "/" + name
            if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG { return path }
        }
        return nil
    }

    /// The file's text: at most `maximumBytes`, valid UTF-8 without NUL bytes.
    package static func read(_ path: String) -> Result<String, SkillFolderError> {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            return .failure(SkillFolderError("\(path) cannot be read: \(String(cString: strerror(errno)))"))
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return .failure(SkillFolderError("\(path) is not a regular file"))
        }
        guard Int(info.st_size) <= maximumBytes else {
            return .failure(
                SkillFolderError(
                    "\(path) is \(Int(info.st_size) / 1024) KB; a SKILL.md may be at most \(maximumBytes / 1024) KB — "
                        + "move long material into references/ and point to it"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                Foundation.read(descriptor, buffer.baseAddress.map { $0 + filled }, buffer.count - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(SkillFolderError("\(path) is not text (it is not UTF-8, or holds NUL bytes)"))
        }
        return .success(text)
    }

    /// Front matter (between a first line `---` and the next line `---`) and body (what follows, trimmed; only
    /// with `body`, the scan needs none). Works on the bytes: a scan splits a thousand files.
    package static func split(_ text: String, file: String, body wantsBody: Bool = true) -> Result<
        (frontMatter: String, body: String), SkillFolderError
    > {
        var text = text
        return text.withUTF8 { bytes -> Result<(frontMatter: String, body: String), SkillFolderError> in
            /// The end of the line starting at `start` (the index of its "\n", or the end).
            func lineEnd(_ start: Int) -> Int {
                var index = start
                while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                return index
            }
            /// Whether bytes[start..<end] is "---", give or take spaces, tabs and a "\r".
            func isDelimiter(_ start: Int, _ end: Int) -> Bool {
                var low = start
                var high = end
                while low < high, bytes[low] == 0x20 || bytes[low] == 0x09 { low += 1 }
                while high > low, [0x20, 0x09, 0x0D].contains(bytes[high - 1]) { high -= 1 }
                return high - low == 3 && bytes[low] == 0x2D && bytes[low + 1] == 0x2D && bytes[low + 2] == 0x2D
            }
            let firstEnd = lineEnd(0)
            guard isDelimiter(0, firstEnd) else {
                return .failure(
                    SkillFolderError(
                        "\(file) does not start with front matter: its first line must be \"---\", then the YAML "
                            + "fields (name, description, …), then a line \"---\""))
            }
            let start = min(firstEnd + 1, bytes.count)
            var line = start
            while line < bytes.count {
                let end = lineEnd(line)
                if isDelimiter(line, end) {
                    guard line - start <= maximumFrontMatterBytes else {
                        return .failure(
                            SkillFolderError(
                                "\(file): the front matter is \((line - start) / 1024) KB; it may be at most "
                                    + "\(maximumFrontMatterBytes / 1024) KB (the instructions go after it)"))
                    }
                    // Line ends as Windows editors write them read as "\n" (as Python's universal newlines do).
                    let frontMatter = String(decoding: bytes[start..<line], as: UTF8.self)
                        .replacingOccurrences(of: "\r\n", with: "\n")
                    guard wantsBody else { return .success((frontMatter, "")) }
                    let rest = String(decoding: bytes[min(end + 1, bytes.count)...], as: UTF8.self)
                    return .success((frontMatter, rest.trimmingCharacters(in: .whitespacesAndNewlines)))
                }
                line = end + 1
            }
            return .failure(
                SkillFolderError("\(file): the front matter is not closed — add a line \"---\" after it"))
        }
    }
}
