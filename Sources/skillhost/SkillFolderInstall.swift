import Foundation
import SkillFolders
import SkillHost

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
        var files = 0
        var bytes = 0
        if let walker = FileManager.default.enumerator(atPath: folder) {
            while let entry = walker.nextObject() as? String {
                files += 1
                let attributes = try? FileManager.default.attributesOfItem(atPath: folder + "/" + entry)
                bytes += (attributes?[.size] as? Int) ?? 0
                guard files <= maximumFiles, bytes <= maximumBytes else {
                    throw .failure(
                        "not installed: \(folder) holds more than \(maximumFiles) files or \(maximumBytes >> 20) MB; a "
                            + "skill folder is instructions, scripts and small assets")
                }
            }
        }
        let target = HostSetup.dataHome(environment) + "/skills"
        let destination = target + "/" + skill.name
        let staging = target + "/.installing-\(skill.name)-\(getpid())"
        var skipped: [String] = []
        do {
            _ = try PrivateFiles.directory(target)
            try? FileManager.default.removeItem(atPath: staging)
            try copyTree(folder, to: staging, skipped: &skipped, depth: 0)
            if FileManager.default.fileExists(atPath: destination) {
                let old = target + "/.replaced-\(skill.name)-\(getpid())"
                try FileManager.default.moveItem(atPath: destination, toPath: old)
                try FileManager.default.moveItem(atPath: staging, toPath: destination)
                try? FileManager.default.removeItem(atPath: old)
            } else {
                try FileManager.default.moveItem(atPath: staging, toPath: destination)
            }
        } catch {
            try? FileManager.default.removeItem(atPath: staging)
            throw .failure("cannot install \(folder) into \(destination): \(error.localizedDescription)")
        }
        var out = "installed skill \(skill.name) into \(destination)\n"
        for warning in inspection.warnings { out += "  warning: \(warning)\n" }
        for entry in skipped {
            out +=
                "  warning: \(entry) was not copied: only files, folders and symbolic links are (it is a FIFO, "
                + "socket or device, or lies too deep)\n"
        }
        return out
    }

    /// Copies `source` into a new folder `destination`: folders (at most 16 deep), regular files (opened without
    /// following a link and without waiting — a FIFO swapped in is not read — and checked to be one) and symbolic
    /// links as links (never followed; `skill_read` refuses one that leads out). Anything else is skipped, named in
    /// `skipped` relative to the top.
    static func copyTree(_ source: String, to destination: String, skipped: inout [String], depth: Int, at: String = "")
        throws
    {
        try FileManager.default.createDirectory(
            atPath: destination, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        for entry in try FileManager.default.contentsOfDirectory(atPath: source).sorted() {
            let from = source + "/" + entry
            let to = destination + "/" + entry
            let relative = at.isEmpty ? entry : at + "/" + entry
            var info = stat()
            guard lstat(from, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR where depth < 16:
                try copyTree(from, to: to, skipped: &skipped, depth: depth + 1, at: relative)
            case S_IFREG:
                guard try copyFile(from, to: to) else {
                    skipped.append(relative)
                    continue
                }
            case S_IFLNK:
                try FileManager.default.createSymbolicLink(
                    atPath: to, withDestinationPath: try FileManager.default.destinationOfSymbolicLink(atPath: from))
            default:
                skipped.append(relative)
            }
        }
    }

    /// Copies one regular file (its bytes and whether it is executable); false when `from` is not one by the time it
    /// is opened.
    private static func copyFile(_ from: String, to: String) throws -> Bool {
        let input = open(from, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard input >= 0 else { throw CocoaError(.fileReadUnknown, userInfo: [NSFilePathErrorKey: from]) }
        defer { close(input) }
        var info = stat()
        guard fstat(input, &info) == 0, info.st_mode & S_IFMT == S_IFREG, Int(info.st_size) <= maximumBytes else {
            return false
        }
        let handle = FileHandle(fileDescriptor: input, closeOnDealloc: false)
        let data = try handle.read(upToCount: maximumBytes + 1) ?? Data()
        let mode: Int = info.st_mode & 0o111 != 0 ? 0o755 : 0o644
        guard FileManager.default.createFile(atPath: to, contents: data, attributes: [.posixPermissions: mode]) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: to])
        }
        return true
    }
}
