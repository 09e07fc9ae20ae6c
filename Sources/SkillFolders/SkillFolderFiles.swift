import Foundation

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

    /// Text of a file of the skill, bounded; a sentence for binary or too large files.
    package static func read(_ relative: String, in skill: SkillFolder) -> Result<String, SkillFolderError> {
        let path: String
        switch resolve(relative, in: skill) {
        case .failure(let error): return .failure(error)
        case .success(let resolved): path = resolved
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            return .failure(SkillFolderError("\(relative) in skill \(skill.name) cannot be read"))
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maximumReadBytes + 1)) ?? Data()
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
                // lstat: a symbolic link is listed as a file, never followed into another tree.
                guard lstat(folder + "/" + entry, &info) == 0 else { continue }
                if info.st_mode & S_IFMT == S_IFDIR {
                    if path.split(separator: "/").count < 4 { pending.append(path) }
                } else if path != "SKILL.md", path != "skill.md" {
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
