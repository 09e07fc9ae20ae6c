import SkillHost

/// `skillhost trust NAME`: approves the current definitions of a skill, or of every skill of a plugin or MCP server
/// (`NAME` is either), after a change made them unapproved.
enum TrustCommand {
    static func run(_ name: String, registry: SkillRegistry) throws(CLIError) -> String {
        guard let pins = registry.pins else { throw .failure("skill definitions are not pinned here") }
        // `skill:NAME`, `plugin:NAME`, `server:NAME` say which; a bare name that is more than one of them is refused
        // (trusting a skill `helper` also approved a changed skill of a plugin called helper).
        let kinds = ["skill", "plugin", "server"]
        let prefix = name.split(separator: ":", maxSplits: 1).first.map(String.init)
        let chosen = prefix.flatMap { kinds.contains($0) && name.contains(":") ? $0 : nil }
        let bare = chosen.map { String(name.dropFirst($0.count + 1)) } ?? name
        let groups: [(kind: String, skills: [SkillInfo])] = [
            ("skill", registry.skills.filter { $0.id == bare }),
            (
                "plugin",
                registry.skills.filter { skill in
                    // A composite carries its own id as its plugin's name: it is a skill, not a plugin.
                    if skill.kind.compositePlan != nil { return false }
                    return skill.plugin == bare
                }
            ),
            ("server", registry.skills.filter { $0.plugin == "mcp:" + bare }),
        ].filter { chosen == nil || $0.kind == chosen }.filter { !$0.skills.isEmpty }
        if groups.count > 1 {
            let choices = groups.map { "skillhost trust \($0.kind):\(bare)" }.joined(separator: " or ")
            throw .failure("\(bare) names a \(groups.map(\.kind).joined(separator: " and a ")); say which: \(choices)")
        }
        let skills = groups.first?.skills ?? []
        guard !skills.isEmpty else {
            throw .failure(
                "no skill, plugin or MCP server is called \(name); skillhost list shows their names")
        }
        let changed = pins.trust(skills)
        guard !changed.isEmpty else {
            return "nothing to trust: \(skills.count == 1 ? skills[0].id + " is" : "the skills of \(name) are") "
                + "as first seen\n"
        }
        return "trusted the new definition of \(changed.joined(separator: ", "))\n"
    }

    /// `list`'s section: each skill whose definition changed since it was first seen, with the change.
    static func changes(_ registry: SkillRegistry) -> String {
        guard let pins = registry.pins else { return "" }
        let changes = pins.changes(registry.skills).compactMap { $0 }
        guard !changes.isEmpty else { return "" }
        var out = "\nChanged since first seen (not run until trusted: skillhost trust SKILL or SERVER):\n"
        for change in changes {
            out += "  \(change.skill): \(change.parts.joined(separator: ", "))\n"
            for line in change.diff { out += "    \(line)\n" }
        }
        return out
    }
}
