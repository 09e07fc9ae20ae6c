import SkillHost
import SkillJSON

/// Renders `skillhost check`.
enum CheckOutput {
    /// - Parameter bundled: the file is one of the bundled plugins (built with the host): remarks about how it was
    ///   built are for plugin authors, and its user can do nothing about them.
    static func text(
        _ result: Result<(PluginSummary, [SkillInfo]), PluginLoadError>, file: String, bundled: Bool = false
    ) -> String {
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
            let report = PluginFileReport.inspect(file)
            if plugin.keepsMapped, report?.containsSwiftCode == false, !bundled {
                // SwiftPM links C libraries with swiftc, which adds empty Swift metadata the runtime registers.
                out +=
                    ", linked by swiftc without Swift code (SwiftPM links C libraries that way): its empty Swift "
                    + "metadata is registered with the runtime, so it stays mapped after unload (cc -shared avoids that)\n"
            } else {
                out +=
                    plugin.keepsMapped && report?.containsSwiftCode != false
                    ? ", contains Swift code (kept mapped after unload)\n" : "\n"
            }
            let capabilities = plugin.capabilities.names
            out +=
                "declares: compute\(capabilities.isEmpty ? " only" : ", " + capabilities.joined(separator: ", "))"
                + (plugin.readPaths.isEmpty ? "" : "; also read \(plugin.readPaths.joined(separator: ", "))") + "\n"
            out += "runs: \(plugin.placementText)\n"
            var views: [SkillView] = []
            for view in skills.compactMap(\.view) where !views.contains(view) { views.append(view) }
            for view in views {
                let reach = view.csp.map { "may reach what its csp declares: \($0.jsonText)" } ?? "reaches nothing"
                out +=
                    "view: \(view.uri) — \(view.title), \(view.html.utf8.count) bytes, \(reach)"
                    + (view.permissions.map { "; asks for \($0.jsonText)" } ?? "") + "\n"
            }
            if let extra = report?.extraExports, !extra.isEmpty {
                let shown = extra.prefix(5).joined(separator: ", ") + (extra.count > 5 ? ", …" : "")
                out +=
                    "warning: it exports \(extra.count) symbol\(extra.count == 1 ? "" : "s") besides skill_plugin_entry "
                    + "(\(shown)); build it with -fvisibility=hidden so its names cannot clash with the host's or another "
                    + "plugin's (SKILL_PLUGIN exports the entry point)\n"
            }
            for skill in skills {
                let flags = skill.flags.names.isEmpty ? "" : ", " + skill.flags.names.joined(separator: ", ")
                out += "\n\(skill.id) — \(skill.title) [\(skill.risk.rawValue)\(flags)]\n"
                out += skillText(skill)
            }
            return out
        }
    }

    /// One skill's part of the report: kind, description, arguments, schemas.
    private static func skillText(_ skill: SkillInfo) -> String {
        var out = ""
        if let signature = skill.kind.signature {
            out += "  typed skill: \(signature)\n"
        } else if let plan = skill.kind.compositePlan {
            out += "  composite skill, \(plan.lines.count) step\(plan.lines.count == 1 ? "" : "s"):\n"
            for line in plan.lines { out += "    \(line)\n" }
        } else {
            out += skill.kind.isExternal ? "  external tool\n" : "  JSON skill\n"
        }
        out += "  \(skill.description)\n"
        if let view = skill.view { out += "  shows its results in \(view.uri)\n" }
        if skill.audience == .view { out += "  only for its plugin's views: never offered to a model\n" }
        if skill.audience == .model { out += "  only for models: its plugin's views cannot call it\n" }
        out += "  arguments: \(skill.argumentSummary)\n"
        out += "  input schema (\(skill.schemaIsGenerated ? "generated from the signature" : "declared")):\n"
        for line in skill.inputSchema.prettyJSONText.split(separator: "\n") { out += "    \(line)\n" }
        if let output = skill.outputSchema {
            out += "  output schema (every result is checked against it):\n"
            for line in output.prettyJSONText.split(separator: "\n") { out += "    \(line)\n" }
        }
        return out
    }

    /// `skillhost check FILE.skill.json`: the composite as it would be registered (its risk resolved against the
    /// skills registered now) and what may still trip it up.
    static func compositeText(_ result: Result<CompositeCheck, PluginLoadError>, file: String) -> String {
        switch result {
        case .failure(let error): return text(.failure(error), file: file)
        case .success(let check):
            let skill = check.skill
            var out = "\(file): ok — composite skill \(skill.id) \(skill.pluginVersion)\n"
            if let plan = skill.kind.compositePlan, !plan.calls.isEmpty {
                out += "calls: \(plan.calls.joined(separator: ", "))\n"
            }
            out += "\n\(skill.id) — \(skill.title) [\(skill.risk.rawValue): the highest of its steps]\n"
            out += skillText(skill)
            for warning in check.warnings { out += "\nwarning: \(warning)" }
            return out + (check.warnings.isEmpty ? "" : "\n")
        }
    }

    static func compositeJSON(_ result: Result<CompositeCheck, PluginLoadError>) -> String {
        switch result {
        case .failure(let error): return json(.failure(error))
        case .success(let check):
            let document: JSONValue = [
                "ok": true, "file": .string(check.skill.file), "composite": .string(check.skill.id),
                "version": .string(check.skill.pluginVersion), "skills": [ListOutput.skillJSON(check.skill)],
                "warnings": .array(check.warnings.map { .string($0) }),
            ]
            return document.prettyJSONText + "\n"
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
