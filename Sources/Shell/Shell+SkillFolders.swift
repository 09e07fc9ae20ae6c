import Agent
import Foundation
import SessionUI
import SkillFolders
import SkillHost
import SkillJSON

extension Shell {
    var skillFolders: SkillFolderTools? { environment.skillFolders }

    /// `/skills`' second part: the skill folders (name, where from, description).
    func listSkillFolders(filter: String) {
        guard let tools = skillFolders else { return }
        let query = filter.lowercased()
        let all =
            tools.scan.skills.map { [$0.name, $0.scope.rawValue, $0.description] }
            + tools.remoteSkills.map { [$0.label, "mcp:" + $0.server, $0.description] }
        let rows = all.filter { query.isEmpty || $0[0].contains(query) || $0[2].lowercased().contains(query) }
        guard !rows.isEmpty else { return }
        say("\n  Skill folders (Agent Skills: the model activates one with skill_activate; /use NAME does it now):\n")
        let table = Table.render(
            header: ["SKILL FOLDER", "FROM", "DESCRIPTION"], rows: rows, width: terminal.width - 2)
        for line in table.split(separator: "\n") { say("  " + InertText.make(String(line)) + "\n") }
    }

    /// `/skill NAME` for a skill folder: its front matter, its files, what loading forgave.
    func showSkillFolder(_ name: String) {
        guard let skill = skillFolders?.scan.skill(name) else { return }
        var out = "\(skill.name) — skill folder (\(skill.scope.rawValue)): \(skill.folder)\n  \(skill.description)\n"
        if let license = skill.license { out += "  license: \(license)\n" }
        if let compatibility = skill.compatibility { out += "  compatibility: \(compatibility)\n" }
        if let tools = skill.allowedTools { out += "  allowed-tools (shown, not acted on): \(tools)\n" }
        for entry in skill.metadata { out += "  metadata \(entry.key): \(entry.value)\n" }
        let (files, more) = SkillFolderFiles.list(skill)
        out += "  files: " + (files.isEmpty ? "SKILL.md only" : files.joined(separator: ", ")) + (more ? ", …" : "")
        out += "\n"
        for warning in skill.warnings { out += "  warning: \(warning)\n" }
        tell(out)
    }

    /// `/use NAME`: the skill folder's instructions go into the conversation at once, as the model's activation
    /// would put them.
    func use(_ name: String) {
        guard let tools = skillFolders, !name.isEmpty else {
            say("Usage: /use <skill folder> (see /skills)\n")
            return
        }
        switch waitFor(cancelling: true, { await tools.activate(named: name) }) {
        case .failure(let error):
            let names = tools.scan.skills.map(\.name) + tools.remoteSkills.map(\.label)
            let suggestion = EditDistance.closest(to: name, among: names)
            tell(error.message + (suggestion.map { " — did you mean \($0)?" } ?? "") + "\n")
        case .success(let text):
            session.addContext("[the person activated skill \(name)]\n" + text)
            tell("Activated \(name): its instructions are part of the conversation from now on.\n")
        }
    }
}
