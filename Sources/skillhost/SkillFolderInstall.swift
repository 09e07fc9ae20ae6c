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
        do {
            _ = try PrivateFiles.directory(target)
            try? FileManager.default.removeItem(atPath: staging)
            try FileManager.default.copyItem(atPath: folder, toPath: staging)
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
        return out
    }
}
