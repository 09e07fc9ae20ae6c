import Foundation
import Glibc

/// The files of a skill folder, as the model may reach them: paths relative to the folder, never out of it (no
/// `..`, no absolute path, no symbolic link that leads elsewhere), bounded in size.
package enum SkillFolderFiles {
    /// The largest file `skill_read` returns.
    package static let maximumReadBytes = 256 << 10
    /// Files listed at activation at most.
    package static let maximumListed = 100

    /// The real path of `relative` in `skill`'s folder, when it is a regular file inside it.
    package static func resolve(_ relative: String, in skill: SkillFolder) -> Result<String, SkillFolderError> {
        let trimmed = relative.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return .failure(SkillFolderError("give a path inside the skill's folder")) }
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: true)
        guard !trimmed.hasPrefix("/"), !trimmed.hasPrefix("~"), !parts.contains("..") else {
            return .failure(
                SkillFolderError(
                    "\(relative) is not a path inside skill \(skill.name)'s folder: give it relative to the folder, "
                        + "without \"..\", such as references/REFERENCE.md"))
        }
        guard let folder = realPath(skill.folder) else {
            return .failure(SkillFolderError("skill \(skill.name)'s folder \(skill.folder) is gone"))
        }
        guard let file = realPath(skill.folder + "/" + parts.joined(separator: "/")) else {
            return .failure(
                SkillFolderError("skill \(skill.name) has no file \(relative); its activation lists the files"))
        }
        guard file.hasPrefix(folder + "/") else {
            return .failure(
                SkillFolderError(
                    "\(relative) in skill \(skill.name) is a symbolic link that leads out of the skill's folder; it "
                        + "is not read"))
        }
        var info = stat()
        guard stat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return .failure(SkillFolderError("\(relative) in skill \(skill.name) is not a file"))
        }
        return .success(file)
    }

    /// A file of a skill's folder, opened once: what is checked is what is read.
    package final class Opened {
        /// The open descriptor (closed with this object).
        package let descriptor: Int32
        /// Its `fstat`: a regular file.
        package let info: stat

        init(descriptor: Int32, info: stat) {
            self.descriptor = descriptor
            self.info = info
        }

        deinit { close(descriptor) }

        /// Up to `limit` bytes from the start.
        package func read(upTo limit: Int) -> Data? {
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while data.count < limit {
                let count = buffer.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress, min($0.count, limit - data.count), off_t(data.count))
                }
                if count < 0, errno == EINTR { continue }
                if count < 0 { return nil }
                if count == 0 { break }
                data.append(contentsOf: buffer[0..<count])
            }
            return data
        }
    }

    /// Opens `relative` in `skill`'s folder the way it is served (`skill_read`, `resources/read`): one component at
    /// a time beneath the folder, no `..`, no symbolic link on the way or at the end, no hidden file or folder, no
    /// deeper than the listing goes (three folders down) — exactly the files `list` names — and only a regular file
    /// (a FIFO is refused without waiting). Opened once, so a link swapped in after a check is never followed.
    package static func open(_ relative: String, in skill: SkillFolder) -> Result<Opened, SkillFolderError> {
        let trimmed = relative.trimmingCharacters(in: .whitespaces)
        let parts = trimmed.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !parts.isEmpty, !trimmed.hasPrefix("/"), !trimmed.hasPrefix("~"), !parts.contains("..") else {
            return .failure(
                SkillFolderError(
                    "\(relative) is not a path inside skill \(skill.name)'s folder: give it relative to the folder, "
                        + "without \"..\", such as references/REFERENCE.md"))
        }
        guard parts.count <= 4, !parts.contains(where: { $0.hasPrefix(".") }) else {
            return .failure(
                SkillFolderError(
                    "skill \(skill.name) has no file \(relative) it serves (hidden files and files more than three "
                        + "folders down are not served); its activation lists the files"))
        }
        var directory = Glibc.open(skill.folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else {
            return .failure(SkillFolderError("skill \(skill.name)'s folder \(skill.folder) is gone"))
        }
        for (index, part) in parts.enumerated() {
            let last = index == parts.count - 1
            let flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK | O_NOCTTY : O_DIRECTORY)
            let next = openat(directory, part, flags)
            let failure = errno
            close(directory)
            guard next >= 0 else {
                if failure == ELOOP || (failure == ENOTDIR && !last) {
                    return .failure(
                        SkillFolderError(
                            "\(relative) in skill \(skill.name) goes through a symbolic link or is one; links are not "
                                + "followed"))
                }
                return .failure(
                    SkillFolderError("skill \(skill.name) has no file \(relative); its activation lists the files"))
            }
            directory = next
        }
        var info = stat()
        guard fstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(directory)
            return .failure(SkillFolderError("\(relative) in skill \(skill.name) is not a file"))
        }
        return .success(Opened(descriptor: directory, info: info))
    }

    /// Text of a file of the skill, bounded; a sentence for binary or too large files.
    package static func read(_ relative: String, in skill: SkillFolder) -> Result<String, SkillFolderError> {
        let file: Opened
        switch open(relative, in: skill) {
        case .failure(let error): return .failure(error)
        case .success(let opened): file = opened
        }
        guard let data = file.read(upTo: maximumReadBytes + 1) else {
            return .failure(SkillFolderError("\(relative) in skill \(skill.name) cannot be read"))
        }
        guard data.count <= maximumReadBytes else {
            return .failure(
                SkillFolderError(
                    "\(relative) in skill \(skill.name) is larger than \(maximumReadBytes / 1024) KB; it is not read "
                        + "whole"))
        }
        guard !data.contains(0), let text = String(data: data, encoding: .utf8) else {
            return .failure(
                SkillFolderError(
                    "\(relative) in skill \(skill.name) is a binary file of \(data.count) bytes; only text is read"))
        }
        return .success(text)
    }

    /// The skill's files, relative to its folder, sorted (`SKILL.md` left out), at most `limit`; whether there
    /// were more.
    package static func list(_ skill: SkillFolder, limit: Int = maximumListed) -> (files: [String], more: Bool) {
        var files: [String] = []
        var more = false
        var pending = [""]
        var visited = 0
        while let relative = pending.popLast() {
            let folder = relative.isEmpty ? skill.folder : skill.folder + "/" + relative
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { continue }
            for entry in entries.sorted().reversed() where !entry.hasPrefix(".") {
                visited += 1
                guard visited <= 10 * limit else {
                    more = true
                    break
                }
                let path = relative.isEmpty ? entry : relative + "/" + entry
                var info = stat()
                // lstat: a symbolic link is never followed, nor listed (it is not served: `open`).
                guard lstat(folder + "/" + entry, &info) == 0, info.st_mode & S_IFMT != S_IFLNK else { continue }
                if info.st_mode & S_IFMT == S_IFDIR {
                    if path.split(separator: "/").count < 4 { pending.append(path) }
                } else if info.st_mode & S_IFMT == S_IFREG, path != "SKILL.md", path != "skill.md" {
                    files.append(path)
                }
            }
        }
        files.sort()
        if files.count > limit {
            files = Array(files.prefix(limit))
            more = true
        }
        return (files, more)
    }

    package static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
