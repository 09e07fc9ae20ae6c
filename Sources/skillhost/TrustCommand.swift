import SkillHost

/// `skillhost trust NAME`: approves the current definitions of a skill, or of every skill of a plugin or MCP server
/// (`NAME` is either), after a change made them unapproved.
enum TrustCommand {
    static func run(_ name: String, registry: SkillRegistry) throws(CLIError) -> String {
        guard let pins = registry.pins else { throw .failure("skill definitions are not pinned here") }
        let skills = registry.skills.filter { $0.id == name || $0.plugin == name || $0.plugin == "mcp:" + name }
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
        let changes = registry.skills.compactMap { pins.change($0) }
        guard !changes.isEmpty else { return "" }
        var out = "\nChanged since first seen (not run until trusted: skillhost trust SKILL or SERVER):\n"
        for change in changes {
            out += "  \(change.skill): \(change.parts.joined(separator: ", "))\n"
            for line in change.diff { out += "    \(line)\n" }
        }
        return out
    }
}
