import Foundation
import Shell
import SkillFolders
import SkillHost
import SkillJSON

/// Renders `skillhost list`.
enum ListOutput {
    static func table(_ setup: HostSetup, skillFolders: SkillFolderTools? = nil, mcpFailures: [String] = []) -> String {
        let registry = setup.registry
        let skills = registry.skills
        let plugins = registry.plugins
        var out =
            "\(skills.count) skill\(skills.count == 1 ? "" : "s") from \(plugins.count) "
            + "plugin\(plugins.count == 1 ? "" : "s")\n"
        if !skills.isEmpty {
            let rows = skills.map { skill in
                [
                    skill.id, skill.title, "\(skill.plugin) \(skill.pluginVersion)", skill.risk.rawValue,
                    skill.flags.names.isEmpty ? "-" : skill.flags.names.joined(separator: ","), skill.argumentSummary,
                ]
            }
            out += "\n" + Table.render(header: ["SKILL", "TITLE", "PLUGIN", "RISK", "FLAGS", "ARGUMENTS"], rows: rows)
        }
        out += PolicyCommand.rulesPerSkill(registry)
        out += TrustCommand.changes(registry)
        if !plugins.isEmpty { out += "\n" + pluginTable(plugins) }
        if let skillFolders, !skillFolders.scan.skills.isEmpty { out += "\n" + skillFolderTable(skillFolders) }
        let failures = registry.failures.map(\.description) + mcpFailures
        if !failures.isEmpty {
            out += "\nFailed to load (\(failures.count)):\n"
            for failure in failures { out += "  \(failure)\n" }
        }
        let folders = setup.folders.map { $0.bundled ? "\($0.path) (bundled)" : $0.path }
        if !folders.isEmpty { out += "\nFolders: \(folders.joined(separator: ", "))\n" }
        if let notice = setup.missingBundledNotice { out += "\nwarning: \(notice)\n" }
        return out
    }

    /// The plugins: name and version, how many skills, the file (or server), where it runs.
    static func pluginTable(_ plugins: [PluginSummary]) -> String {
        let rows = plugins.map { plugin in
            ["\(plugin.name) \(plugin.version)", "\(plugin.skillIDs.count)", plugin.file, plugin.placementText]
        }
        return Table.render(header: ["PLUGIN", "SKILLS", "SOURCE", "RUNS"], rows: rows)
    }

    /// The skill folders: name, folder, what their scripts may do — the defaults and what the person granted that
    /// folder (`"skills": {"grant": {…}}`, by name for their own skills, by folder for a project's).
    static func skillFolderTable(_ tools: SkillFolderTools) -> String {
        let grants = tools.settings.grants
        let rows = tools.scan.skills.map { skill in
            [skill.name, skill.folder, skill.scope.rawValue, grants.summary(for: skill)]
        }
        return Table.render(header: ["SKILL FOLDER", "FOLDER", "FROM", "ITS SCRIPTS"], rows: rows)
    }

    static func skillFolderJSON(_ tools: SkillFolderTools) -> JSONValue {
        .array(
            tools.scan.skills.map { skill in
                let granted = tools.settings.grants.grant(for: skill)
                let sandbox = granted?.sandbox ?? Sandbox()
                return [
                    "name": .string(skill.name), "folder": .string(skill.folder), "from": .string(skill.scope.rawValue),
                    "scripts": [
                        "network": .bool(sandbox.network), "read": .array(sandbox.read.map { .string($0) }),
                        "write": .array(sandbox.write.map { .string($0) }),
                        "granted_as": granted.map { .string($0.key) } ?? .null,
                    ],
                ]
            })
    }

    /// `list --watch`: after the listing, one line per registry change until interrupted (with `--json`, one
    /// JSON object per line).
    static func follow(_ setup: HostSetup, json: Bool) async {
        let changes = setup.registry.changes()
        let watch = setup.watch()
        let count = setup.folders.count
        if !json { writeOut("\nWatching \(count) folder\(count == 1 ? "" : "s") for changes (Ctrl-C to stop)\n") }
        for await change in changes {
            if json {
                writeOut(changeJSON(change, registry: setup.registry).jsonText + "\n")
            } else {
                writeText(change.line + "\n")
            }
        }
        watch.stop()
    }

    static func changeJSON(_ change: RegistryChange, registry: SkillRegistry) -> JSONValue {
        var object = JSONObject()
        switch change {
        case .loaded(let plugin):
            object["change"] = "loaded"
            object["plugin"] = .string(plugin.name)
            object["version"] = .string(plugin.version)
            object["added"] = .array(plugin.skillIDs.map { .string($0) })
        case .replaced(let old, let new, let added, let removed, let updated):
            object["change"] = "replaced"
            object["plugin"] = .string(new.name)
            object["old_version"] = .string(old.version)
            object["version"] = .string(new.version)
            object["added"] = .array(added.map { .string($0) })
            object["removed"] = .array(removed.map { .string($0) })
            object["updated"] = .array(updated.map { .string($0) })
        case .unloaded(let plugin):
            object["change"] = "unloaded"
            object["plugin"] = .string(plugin.name)
            object["version"] = .string(plugin.version)
            object["removed"] = .array(plugin.skillIDs.map { .string($0) })
        case .failed(let error):
            object["change"] = "failed"
            object["file"] = .string(error.file)
            object["error"] = .string(error.description)
        }
        object["line"] = .string(change.line)
        object["kept_images"] = keptImagesJSON(registry)
        return .object(object)
    }

    /// Retired images that stay mapped (Swift code, or calls that never returned).
    static func keptImagesJSON(_ registry: SkillRegistry) -> JSONValue {
        let kept = registry.keptImages
        return ["count": .int(Int64(kept.count)), "bytes": .int(Int64(kept.bytes))]
    }

    static func json(_ setup: HostSetup, skillFolders: SkillFolderTools? = nil, mcpFailures: [String] = []) -> String {
        let registry = setup.registry
        let plugins = registry.plugins
        var document: JSONValue = [
            "skills": .array(registry.skills.map(skillJSON)),
            "plugins": .array(
                plugins.map { plugin in
                    [
                        "name": .string(plugin.name), "version": .string(plugin.version),
                        "description": .string(plugin.description), "file": .string(plugin.file),
                        "skills": .array(plugin.skillIDs.map { .string($0) }),
                        "keeps_mapped": .bool(plugin.keepsMapped), "isolation": .string(plugin.isolation.rawValue),
                        "image_bytes": .int(Int64(plugin.imageSize)),
                        "capabilities": .array(plugin.capabilities.names.map { .string($0) }),
                        "read_paths": .array(plugin.readPaths.map { .string($0) }),
                        "runs": placementJSON(plugin),
                    ]
                }),
            "failures": .array(
                registry.failures.map(failureJSON)
                    + mcpFailures.map { ["file": "mcp", "error": .string($0), "problems": [.string($0)]] }),
            "kept_images": keptImagesJSON(registry),
            "folders": .array(setup.folders.map { .string($0.path) }),
        ]
        if let skillFolders, var object = document.objectValue {
            object["skill_folders"] = skillFolderJSON(skillFolders)
            document = .object(object)
        }
        return document.prettyJSONText + "\n"
    }

    /// Where a plugin runs and, in a worker, what the kernel lets it do — for `list --json` and `check --json`.
    static func placementJSON(_ plugin: PluginSummary) -> JSONValue {
        var object = JSONObject([
            (key: "isolation", value: .string(plugin.isolation.rawValue)),
            (key: "text", value: .string(plugin.placementText)),
        ])
        if plugin.isolation == .process, case .file = plugin.origin, let report = plugin.confinement {
            object["confined"] = .string(report.shortfall == nil ? "fully" : "partly")
            if let shortfall = report.shortfall { object["shortfall"] = .string(shortfall) }
            object["may"] = .array(report.confinement.capabilities.names.map { .string($0) })
            object["read_paths"] = .array(report.confinement.readPaths.map { .string($0) })
            object["write_paths"] = .array(report.confinement.writePaths.map { .string($0) })
            object["landlock_abi"] = .int(Int64(report.landlockABI))
            object["kernel"] = .string(report.kernel)
        }
        return .object(object)
    }

    static func skillJSON(_ skill: SkillInfo) -> JSONValue {
        var object = JSONObject([
            (key: "id", value: .string(skill.id)), (key: "title", value: .string(skill.title)),
            (key: "description", value: .string(skill.description)), (key: "plugin", value: .string(skill.plugin)),
            (key: "version", value: .string(skill.pluginVersion)), (key: "file", value: .string(skill.file)),
            (key: "risk", value: .string(skill.risk.rawValue)),
            (key: "flags", value: .array(skill.flags.names.map { .string($0) })),
        ])
        if let timeout = skill.timeout {
            object["timeout_ms"] = .int(Int64(timeout.milliseconds))
        }
        if let signature = skill.kind.signature {
            object["kind"] = "typed"
            object["signature"] = .string(signature)
        } else if let plan = skill.kind.compositePlan {
            object["kind"] = "composite"
            object["steps"] = .array(plan.steps)
            object["calls"] = .array(plan.calls.map { .string($0) })
            if !plan.missing.isEmpty { object["missing"] = .array(plan.missing.map { .string($0) }) }
        } else {
            object["kind"] = skill.kind.isExternal ? "external" : "json"
        }
        object["arguments"] = .string(skill.argumentSummary)
        object["input_schema"] = skill.inputSchema
        object["schema_generated"] = .bool(skill.schemaIsGenerated)
        if let output = skill.outputSchema { object["output_schema"] = output }
        return .object(object)
    }

    static func failureJSON(_ failure: PluginLoadError) -> JSONValue {
        [
            "file": .string(failure.file), "error": .string(failure.description),
            "problems": .array(failure.problems.map { .string($0.description) }),
        ]
    }
}
