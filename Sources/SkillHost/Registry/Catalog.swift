import Foundation
import SkillJSON
import Synchronization

/// A registered skill and what runs it. One reference either way, so a lookup costs one retain.
enum SkillEntry: Sendable {
    /// A skill of a loaded plugin (in this process or in its worker).
    case plugin(Skill)
    /// A tool of another program (an MCP server).
    case external(ExternalTool)
    /// A composite skill: its steps call other entries.
    case composite(CompositeSkill)

    var info: SkillInfo {
        switch self {
        case .plugin(let skill): return skill.info
        case .external(let tool): return tool.skill.info
        case .composite(let composite): return composite.info
        }
    }

    /// The skill's id, read without copying its description.
    var id: String {
        switch self {
        case .plugin(let skill): return skill.info.id
        case .external(let tool): return tool.skill.info.id
        case .composite(let composite): return composite.info.id
        }
    }

    /// The skill's own deadline (`timeout_ms`), read without copying its description.
    var timeout: Duration? {
        switch self {
        case .plugin(let skill): return skill.info.timeout
        case .external(let tool): return tool.skill.info.timeout
        case .composite(let composite): return composite.definition.timeout
        }
    }

    /// nil: an external tool whose schema uses something the validator does not support (its arguments pass
    /// unchecked; the server validates them itself).
    var schema: JSONSchema? {
        switch self {
        case .plugin(let skill): return skill.schema
        case .external(let tool): return tool.schema
        case .composite(let composite): return composite.definition.schema
        }
    }

    /// The plugin whose code runs the skill (nil for external tools).
    var plugin: LoadedPlugin? {
        if case .plugin(let skill) = self { return skill.plugin }
        return nil
    }
}

/// An external tool and the schema its arguments are checked against.
final class ExternalTool: Sendable {
    let skill: ExternalSkill
    let schema: JSONSchema?

    init(_ skill: ExternalSkill, schema: JSONSchema?) {
        self.skill = skill
        self.schema = schema
    }
}

/// What is registered: one map of skill entries by id — plugin skills and external tools alike — with the plugins
/// and external sources they come from, and the broadcast of every change.
///
/// Each method is one critical section: a lookup sees either the old or the new version of a plugin, never a mix.
final class Catalog: Sendable {
    /// A loaded plugin and its skills.
    struct Plugin: Sendable {
        let plugin: LoadedPlugin
        let skills: [Skill]
        /// FNV-1a of the file's bytes: a file whose bytes did not change is not loaded again.
        let fingerprint: UInt64

        var summary: PluginSummary { PluginSummary(plugin, skills: skills) }
    }

    struct State {
        var entries: [String: SkillEntry] = [:]
        /// By plugin name.
        var plugins: [String: Plugin] = [:]
        /// File path → plugin name.
        var owners: [String: String] = [:]
        /// External sources by name.
        var sources: [String: PluginSummary] = [:]
        /// The state snapshots of the external sources that have one.
        var sourceSnapshots: [String: @Sendable () -> JSONValue] = [:]
        /// Composite skills by file.
        var composites: [String: CompositeSkill] = [:]
    }

    let state = Mutex(State())
    let broadcaster = ChangeBroadcaster()

    // MARK: Lookups

    /// The entry for `id`; a plugin skill's plugin counts one more user, taken under the same lock as the lookup
    /// so a replaced plugin cannot gain users after the switch. The caller gives it back when the call is over.
    func acquire(_ id: String) -> SkillEntry? {
        state.withLock { state in
            guard let entry = state.entries[id] else { return nil }
            entry.plugin?.users.add(1, ordering: .acquiring)
            return entry
        }
    }

    func entry(_ id: String) -> SkillEntry? { state.withLock { $0.entries[id] } }

    var infos: [SkillInfo] { state.withLock { $0.entries.values.map(\.info) } }

    var ids: [String] { state.withLock { Array($0.entries.keys) } }

    var summaries: [PluginSummary] {
        state.withLock { $0.plugins.values.map(\.summary) + $0.sources.values + $0.composites.values.map(\.summary) }
    }

    func plugin(named name: String) -> LoadedPlugin? { state.withLock { $0.plugins[name]?.plugin } }

    /// The plugin loaded from `file`, if any.
    func plugin(file: String) -> Plugin? {
        state.withLock { state in state.owners[file].flatMap { state.plugins[$0] } }
    }

    /// Files a plugin is loaded from.
    var files: [String] { state.withLock { Array($0.owners.keys) } }

    /// Problems that stop a plugin named `name` with these skills from being registered for `file`.
    /// The plugin names loaded plugins hold, with their files, but `file`'s own: what a worker loading `file` may
    /// not take (`WorkerLaunch.takenNames`).
    func takenNames(besides file: String) -> [String: String] {
        state.withLock { state in
            let own = state.owners[file]
            var taken: [String: String] = [:]
            for (name, plugin) in state.plugins where name != own { taken[name] = plugin.plugin.file }
            return taken
        }
    }

    func conflicts(name: String, skillIDs: [String], file: String) -> [PluginProblem] {
        state.withLock { state -> [PluginProblem] in
            let replacing = state.owners[file]
            var problems: [PluginProblem] = []
            if let other = state.plugins[name], name != replacing {
                problems.append(.duplicatePluginName(name, otherFile: other.plugin.file))
            }
            for id in skillIDs {
                if let owner = state.entries[id], owner.info.plugin != replacing {
                    problems.append(.skillIDTaken(id, plugin: owner.info.plugin))
                }
            }
            return problems
        }
    }

    // MARK: Changes

    /// The switch: one critical section replaces the file's old plugin (if any) with `new`, then publishes the
    /// change. Returns the old plugin, for retirement.
    func commit(_ new: Plugin, file: String) -> Plugin? {
        let old = state.withLock { state -> Plugin? in
            let old = state.owners[file].flatMap { state.plugins.removeValue(forKey: $0) }
            for skill in old?.skills ?? [] { state.entries[skill.info.id] = nil }
            state.plugins[new.plugin.name] = new
            state.owners[file] = new.plugin.name
            for skill in new.skills { state.entries[skill.info.id] = .plugin(skill) }
            Self.resolveComposites(&state)
            return old
        }
        if let old {
            publishReplacement(old: old.summary, new: new.summary)
        } else {
            broadcaster.publish(.loaded(new.summary))
        }
        return old
    }

    /// Unregisters the plugin loaded from `file` (its skills disappear at once) and publishes it.
    func remove(file: String) -> Plugin? {
        let old = state.withLock { state -> Plugin? in
            guard let name = state.owners.removeValue(forKey: file),
                let plugin = state.plugins.removeValue(forKey: name)
            else { return nil }
            for skill in plugin.skills { state.entries[skill.info.id] = nil }
            Self.resolveComposites(&state)
            return plugin
        }
        if let old { broadcaster.publish(.unloaded(old.summary)) }
        return old
    }

    /// Unregisters every plugin (at shutdown) and returns them; nothing is published.
    func removeAllPlugins() -> [Plugin] {
        state.withLock { state in
            let plugins = Array(state.plugins.values)
            for plugin in plugins {
                for skill in plugin.skills { state.entries[skill.info.id] = nil }
            }
            state.plugins = [:]
            state.owners = [:]
            return plugins
        }
    }

    /// The state snapshot of the external source `name`, if it has one.
    func sourceSnapshot(_ name: String) -> (@Sendable () -> JSONValue)? {
        state.withLock { $0.sourceSnapshots[name] }
    }

    /// Registers (or replaces) an external source's tools. Ids taken by a plugin or another source are skipped and
    /// returned with the reason; so is a tool whose schema would hang the host.
    func registerExternal(
        source: String, version: String, description: String, location: String, skills: [ExternalSkill],
        sandbox: Sandbox? = nil, origin: PluginOrigin, snapshot: (@Sendable () -> JSONValue)? = nil
    ) -> [String] {
        var skipped: [String] = []
        let (old, summary) = state.withLock { state -> (PluginSummary?, PluginSummary) in
            let old = state.sources.removeValue(forKey: source)
            for id in old?.skillIDs ?? [] { state.entries[id] = nil }
            var ids: [String] = []
            for skill in skills {
                let id = skill.info.id
                if let owner = state.entries[id] {
                    skipped.append("\(id): the id is already taken by \(owner.info.plugin)")
                    continue
                }
                let schema: JSONSchema?
                do throws(SchemaError) { schema = try JSONSchema(skill.info.inputSchema) } catch {
                    // Unsupported keywords leave arguments unchecked; a schema that would hang the host is refused.
                    guard !error.isHazard else {
                        skipped.append("\(id): its input schema cannot be used: \(error)")
                        continue
                    }
                    schema = nil
                }
                state.entries[id] = .external(ExternalTool(skill, schema: schema))
                ids.append(id)
            }
            let summary = PluginSummary(
                name: source, version: version, description: description, file: location, skillIDs: ids,
                sandbox: sandbox, origin: origin)
            state.sources[source] = summary
            state.sourceSnapshots[source] = snapshot
            Self.resolveComposites(&state)
            return (old, summary)
        }
        if let old {
            publishReplacement(old: old, new: summary)
        } else {
            broadcaster.publish(.loaded(summary))
        }
        return skipped
    }

    /// Removes an external source's tools.
    func unregisterExternal(source: String) {
        let old = state.withLock { state -> PluginSummary? in
            let old = state.sources.removeValue(forKey: source)
            state.sourceSnapshots[source] = nil
            for id in old?.skillIDs ?? [] { state.entries[id] = nil }
            Self.resolveComposites(&state)
            return old
        }
        if let old { broadcaster.publish(.unloaded(old)) }
    }

    func publishReplacement(old: PluginSummary, new: PluginSummary) {
        let before = Set(old.skillIDs)
        let after = Set(new.skillIDs)
        broadcaster.publish(
            .replaced(
                old: old, new: new, added: after.subtracting(before).sorted(),
                removed: before.subtracting(after).sorted(),
                updated: before.intersection(after).sorted()))
    }
}
