import SkillHost
import SkillJSON

/// Renders `skillhost check`.
enum CheckOutput {
    static func text(_ result: Result<(PluginSummary, [SkillInfo]), PluginLoadError>, file: String) -> String {
        switch result {
        case .failure(let error):
            let count = error.problems.count
            var out = "\(file): rejected, \(count) problem\(count == 1 ? "" : "s"):\n"
            for problem in error.problems { out += "  - \(problem)\n" }
            return out
        case .success(let (plugin, skills)):
            var out = "\(file): ok — plugin \(plugin.name) \(plugin.version)"
            if !plugin.description.isEmpty { out += " (\(plugin.description))" }
            out += ", \(skills.count) skill\(skills.count == 1 ? "" : "s")"
            out += plugin.keepsMapped ? ", carries Swift runtime metadata (kept mapped after unload)\n" : "\n"
            let capabilities = plugin.capabilities.names
            out +=
                "declares: compute\(capabilities.isEmpty ? " only" : ", " + capabilities.joined(separator: ", "))"
                + (plugin.readPaths.isEmpty ? "" : "; also read \(plugin.readPaths.joined(separator: ", "))") + "\n"
            out += "runs: \(plugin.placementText)\n"
            for skill in skills {
                let flags = skill.flags.names.isEmpty ? "" : ", " + skill.flags.names.joined(separator: ", ")
                out += "\n\(skill.id) — \(skill.title) [\(skill.risk.rawValue)\(flags)]\n"
                switch skill.kind {
                case .json: out += "  JSON skill\n"
                case .typed(let signature): out += "  typed skill: \(signature)\n"
                case .external: out += "  external tool\n"
                }
                out += "  \(skill.description)\n"
                out += "  arguments: \(skill.argumentSummary)\n"
                out += "  input schema (\(skill.schemaIsGenerated ? "generated from the signature" : "declared")):\n"
                for line in skill.inputSchema.prettyJSONText.split(separator: "\n") { out += "    \(line)\n" }
                if let output = skill.outputSchema {
                    out += "  output schema (every result is checked against it):\n"
                    for line in output.prettyJSONText.split(separator: "\n") { out += "    \(line)\n" }
                }
            }
            return out
        }
    }

    static func json(_ result: Result<(PluginSummary, [SkillInfo]), PluginLoadError>) -> String {
        let document: JSONValue
        switch result {
        case .failure(let error):
            document = [
                "ok": false, "file": .string(error.file),
                "problems": .array(error.problems.map { .string($0.description) }),
            ]
        case .success(let (plugin, skills)):
            document = [
                "ok": true, "file": .string(plugin.file), "plugin": .string(plugin.name),
                "version": .string(plugin.version), "keeps_mapped": .bool(plugin.keepsMapped),
                "capabilities": .array(plugin.capabilities.names.map { .string($0) }),
                "read_paths": .array(plugin.readPaths.map { .string($0) }),
                "runs": ListOutput.placementJSON(plugin),
                "skills": .array(skills.map(ListOutput.skillJSON)),
            ]
        }
        return document.prettyJSONText + "\n"
    }
}
