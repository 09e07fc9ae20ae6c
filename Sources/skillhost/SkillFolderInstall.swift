import Foundation
import SkillFolders
import SkillHost
import SkillJSON

/// `skillhost plugin install FOLDER` for an Agent Skills folder: checked, then copied into
/// `$XDG_DATA_HOME/skillhost/skills/NAME`: copied under a hidden name (which scans skip), then moved into place — an
/// older copy moved aside first — so a running host never reads half a folder.
enum SkillFolderInstall {
    /// The most a skill folder may hold to be installed.
    static let maximumFiles = 5000
    static let maximumBytes = 64 << 20

    static func install(_ folder: String, environment: [String: String]) throws(CLIError) -> String {
        let inspection = SkillFolderCheck.inspect(folder, scope: .user)
        let skill: SkillFolder
        switch inspection.skill {
        case .failure(let error): throw .failure("not installed: \(error.message)")
        case .success(let loaded): skill = loaded
        }
        let target = HostSetup.dataHome(environment) + "/skills"
        let destination = target + "/" + skill.name
        let staging = target + "/.installing-\(skill.name)-\(getpid())"
        var skipped: [(String, String)] = []
        do {
            _ = try PrivateFiles.directory(target)
            try? FileManager.default.removeItem(atPath: staging)
            var copy = Copy(top: SkillFolderFiles.realPath(folder) ?? folder)
            try copy.tree(folder, to: staging, depth: 0)
            skipped = copy.skipped
            // What is installed is what was judged: the copy's front matter is the one inspected.
            guard case .success(let staged) = SkillFolderCheck.inspect(staging, scope: .user).skill,
                staged.frontMatter == skill.frontMatter
            else { throw CopyError.changed }
            if FileManager.default.fileExists(atPath: destination) {
                let old = target + "/.replaced-\(skill.name)-\(getpid())"
                try FileManager.default.moveItem(atPath: destination, toPath: old)
                try FileManager.default.moveItem(atPath: staging, toPath: destination)
                try? FileManager.default.removeItem(atPath: old)
            } else {
                try FileManager.default.moveItem(atPath: staging, toPath: destination)
            }
        } catch let problem as CopyError {
            try? FileManager.default.removeItem(atPath: staging)
            throw .failure("not installed: \(folder) \(problem.sentence)")
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw .failure("cannot install \(folder) into \(destination): \(error.localizedDescription)")
        }
        var out = "installed skill \(skill.name) into \(destination)\n"
        for warning in inspection.warnings { out += "  warning: \(warning)\n" }
        for (entry, why) in skipped {
            // Quoted: a file name is a stranger's text (a newline in it would forge a line of this report).
            out += "  warning: \(JSONValue.string(entry).jsonText) was not copied: \(why)\n"
        }
        return out
    }

    /// Why an install stopped while copying.
    enum CopyError: Error {
        case tooLarge, changed
        var sentence: String {
            switch self {
            case .tooLarge:
                return "holds more than \(maximumFiles) files or \(maximumBytes >> 20) MB; a skill folder is "
                    + "instructions, scripts and small assets"
            case .changed: return "changed while it was being installed; install it again"
            }
        }
    }

    /// One install's copy: folders (at most 16 deep), regular files (opened without following a link and without
    /// waiting — a FIFO swapped in is not read — and checked to be one) and symbolic links that stay inside the
    /// folder, as links; at most `maximumFiles` entries and `maximumBytes` in all, counted as they are copied.
    /// Anything else is skipped and named in `skipped` (relative to the top, with why).
    struct Copy {
        let top: String
        var skipped: [(String, String)] = []
        var entries = 0
        var bytes = 0

        mutating func tree(_ source: String, to destination: String, depth: Int, at: String = "") throws {
            try FileManager.default.createDirectory(
                atPath: destination, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            for entry in try FileManager.default.contentsOfDirectory(atPath: source).sorted() {
                entries += 1
                guard entries <= maximumFiles else { throw CopyError.tooLarge }
                let from = source + "/" + entry
                let to = destination + "/" + entry
                let relative = at.isEmpty ? entry : at + "/" + entry
                var info = stat()
                guard lstat(from, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR where depth < 16:
                    try tree(from, to: to, depth: depth + 1, at: relative)
                case S_IFDIR:
                    skipped.append((relative, "it lies more than 16 folders deep"))
                case S_IFREG:
                    if !(try file(from, to: to)) { skipped.append((relative, "it is no longer a regular file")) }
                case S_IFLNK:
                    let target = try FileManager.default.destinationOfSymbolicLink(atPath: from)
                    guard let resolved = SkillFolderFiles.realPath(from),
                        resolved == top || resolved.hasPrefix(top + "/")
                    else {
                        skipped.append((relative, "it is a link that leads out of the folder (or nowhere)"))
                        continue
                    }
                    try FileManager.default.createSymbolicLink(atPath: to, withDestinationPath: target)
                default:
                    skipped.append(
                        (relative, "only files, folders and links are copied (it is a FIFO, socket or device)"))
                }
            }
        }

        /// Copies one regular file (its bytes, and whether it is executable); false when `from` is not one by the
        /// time it is opened.
        private mutating func file(_ from: String, to: String) throws -> Bool {
            let input = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard input >= 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: from]) }
            defer { close(input) }
            var info = stat()
            guard fstat(input, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
            let handle = FileHandle(fileDescriptor: input, closeOnDealloc: false)
            let data = try handle.read(upToCount: maximumBytes - bytes + 1) ?? Data()
            bytes += data.count
            guard bytes <= maximumBytes else { throw CopyError.tooLarge }
            let mode: Int = info.st_mode & 0o111 != 0 ? 0o755 : 0o644
            guard FileManager.default.createFile(atPath: to, contents: data, attributes: [.posixPermissions: mode])
            else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: to]) }
            return true
        }
    }
}
