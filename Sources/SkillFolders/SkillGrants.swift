import Foundation
import SkillHost

/// What the person granted skill folders' scripts beyond the defaults (`"skills": {"grant": {…}}` in config.json),
/// and which skill each grant belongs to. A grant belongs to what the person approved, never to a name a folder
/// declares or a project chose:
/// - by name (`"pdf": ["read:~/Documents"]`): the person's own skill of that name — found in a configured folder or
///   one of the user's, in a folder of that name (a skill is known by its folder's name);
/// - by folder (`"~/src/app/.agents/skills/pdf": ["network"]`): that folder, wherever it is found — the way to grant
///   a trusted project's skill.
package struct SkillGrants: Sendable {
    /// Skill names and folders (absolute, or starting with `~`) to what their scripts may do.
    package var byKey: [String: Sandbox] = [:]
    /// The home folder `~` stands for.
    package var home: String = NSHomeDirectory()

    package init(_ byKey: [String: Sandbox] = [:], home: String = NSHomeDirectory()) {
        self.byKey = byKey
        self.home = home
    }

    /// The grant for `skill`, and the key it was found under; `realFolder` is its folder's real path when the
    /// caller resolved it already (and then uses that same path: the folder matched is the folder given).
    package func grant(for skill: SkillFolder, realFolder: String? = nil) -> (key: String, sandbox: Sandbox)? {
        let folder = realFolder ?? SkillFolderFiles.realPath(skill.folder)
        for (key, sandbox) in byKey where key.hasPrefix("/") || key.hasPrefix("~") {
            if let folder, SkillFolderFiles.realPath(expand(key)) == folder { return (key, sandbox) }
        }
        guard skill.scope != .project, let sandbox = byKey[skill.name], Self.isNamedByItsFolder(skill) else {
            return nil
        }
        return (skill.name, sandbox)
    }

    /// The key that grants `skill` more: its name for the person's own skills, its folder for a project's.
    package func key(for skill: SkillFolder) -> String {
        if let found = grant(for: skill) { return found.key }
        guard skill.scope == .project || !Self.isNamedByItsFolder(skill) else { return skill.name }
        let folder = SkillFolderFiles.realPath(skill.folder) ?? skill.folder
        let realHome = SkillFolderFiles.realPath(home) ?? home
        return folder.hasPrefix(realHome + "/") ? "~" + folder.dropFirst(realHome.count) : folder
    }

    /// What `skill`'s scripts may do, in words: `no network, reads its folder and ~/Documents, writes only its
    /// temporary folder`.
    package func summary(for skill: SkillFolder) -> String {
        let sandbox = grant(for: skill)?.sandbox ?? Sandbox()
        let reads = (["its folder"] + sandbox.read).joined(separator: ", ")
        let writes = (["its temporary folder"] + sandbox.write).joined(separator: ", ")
        return "\(sandbox.network ? "network" : "no network"), reads \(reads) and the system, writes "
            + (sandbox.write.isEmpty ? "only " : "") + writes
    }

    private static func isNamedByItsFolder(_ skill: SkillFolder) -> Bool {
        let folderName = ((skill.folder as NSString).standardizingPath as NSString).lastPathComponent
        return folderName.precomposedStringWithCompatibilityMapping
            == skill.name.precomposedStringWithCompatibilityMapping
    }

    private func expand(_ path: String) -> String {
        path == "~" ? home : path.hasPrefix("~/") ? home + path.dropFirst(1) : path
    }
}
