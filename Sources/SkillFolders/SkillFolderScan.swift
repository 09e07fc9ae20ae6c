import Foundation

/// Where skill folders are looked for, and what was found there.
package struct SkillFolderRoot: Sendable, Equatable {
    package let path: String
    package let scope: SkillFolder.Scope

    package init(_ path: String, scope: SkillFolder.Scope) {
        self.path = path
        self.scope = scope
    }

    /// The folders skillhost looks in, by precedence: configured folders, then the user's
    /// (`$XDG_DATA_HOME/skillhost/skills`, `~/.agents/skills`, `~/.claude/skills`), then — for a project the user
    /// trusts — `<project>/.agents/skills` and `<project>/.claude/skills`.
    package static func standard(
        dataHome: String, home: String, project: String?, configured: [String]
    ) -> [SkillFolderRoot] {
        var roots = configured.map { SkillFolderRoot($0, scope: .configured) }
        roots += [dataHome + "/skills", home + "/.agents/skills", home + "/.claude/skills"].map {
            SkillFolderRoot($0, scope: .user)
        }
        if let project {
            roots += [project + "/.agents/skills", project + "/.claude/skills"].map {
                SkillFolderRoot($0, scope: .project)
            }
        }
        return roots
    }
}

/// The skill folders found: by name, the one that wins; and what the scan has to say (shadowed names, folders that
/// cannot be loaded, the bounds reached), one sentence each.
package struct SkillFolderScan: Sendable {
    package let skills: [SkillFolder]
    package let notices: [String]

    /// Folders looked at per root at most (a skills folder that holds more is not read further, with a notice).
    package static let maximumEntries = 2000
    /// How deep below a root a skill folder may be (`root/name` is 1; `root/group/name` 2…).
    package static let maximumDepth = 3

    package func skill(_ name: String) -> SkillFolder? { skills.first { $0.name == name } }

    /// Scans `roots` in order. A skill of a later scope (a project's) overrides one of the same name from an earlier
    /// (the user's), said once; within one scope the first found stays, and the other is said to be shadowed.
    package static func scan(_ roots: [SkillFolderRoot]) -> SkillFolderScan {
        var byName: [String: SkillFolder] = [:]
        var order: [String] = []
        var notices: [String] = []
        var seenRoots: Set<String> = []
        for root in roots {
            let real = (root.path as NSString).resolvingSymlinksInPath
            guard seenRoots.insert(real).inserted else { continue }
            var budget = maximumEntries
            for folder in folders(in: root.path, depth: 1, budget: &budget) {
                let inspection = SkillFolderCheck.inspect(folder, scope: root.scope)
                switch inspection.skill {
                case .failure(let error):
                    notices.append("skill folder \(folder) not loaded: \(error.message)")
                case .success(let skill):
                    if let existing = byName[skill.name] {
                        if skill.scope > existing.scope {
                            notices.append(
                                "skill \(skill.name): the project's \(skill.folder) overrides \(existing.folder)")
                            byName[skill.name] = skill
                        } else {
                            notices.append(
                                "skill \(skill.name): \(skill.folder) is shadowed by \(existing.folder) (same name)")
                        }
                    } else {
                        byName[skill.name] = skill
                        order.append(skill.name)
                    }
                }
            }
            if budget <= 0 {
                notices.append(
                    "skill folders: \(root.path) holds more than \(maximumEntries) folders; the rest were not read")
            }
        }
        return SkillFolderScan(skills: order.compactMap { byName[$0] }.sorted { $0.name < $1.name }, notices: notices)
    }

    /// Folders under `path` that hold a `SKILL.md`, not looking inside a skill (its nested skills are its own
    /// files), nor in hidden folders, `node_modules`, or deeper than `maximumDepth`.
    static func folders(in path: String, depth: Int, budget: inout Int) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: path) else { return [] }
        var found: [String] = []
        for entry in entries.sorted() where !entry.hasPrefix(".") && entry != "node_modules" {
            guard budget > 0 else { break }
            budget -= 1
            let child = path + "/" + entry
            var info = stat()
            // A symbolic link to a skill folder is followed (skills are often linked in); stat follows it.
            guard stat(child, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { continue }
            if SkillFile.locate(in: child) != nil {
                found.append(child)
            } else if depth < maximumDepth {
                found += folders(in: child, depth: depth + 1, budget: &budget)
            }
        }
        return found
    }
}
