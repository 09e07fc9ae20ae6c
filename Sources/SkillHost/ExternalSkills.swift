import Foundation
import SkillJSON

/// A skill served by another program (an MCP server): its description and how to call it. The registry validates
/// arguments against its schema (when the schema is one it can compile), applies the deadline, and passes
/// cancellation on.
public struct ExternalSkill: Sendable {
    public let info: SkillInfo
    /// Calls the tool with validated arguments. Must return promptly when its task is cancelled.
    public let call: @Sendable (JSONValue) async -> SkillOutcome

    public init(info: SkillInfo, call: @escaping @Sendable (JSONValue) async -> SkillOutcome) {
        self.info = info
        self.call = call
    }
}

struct ExternalEntry: Sendable {
    let source: String
    let skill: ExternalSkill
    /// nil when the tool's schema uses something the validator does not support: arguments then pass unchecked
    /// (the server validates them itself).
    let schema: JSONSchema?
}

extension SkillRegistry {
    /// Registers (or replaces) the skills of an external source such as an MCP server. Ids already taken by a
    /// plugin or another source are skipped and returned with the reason. Publishes a change like a plugin load.
    @discardableResult
    public func registerExternal(
        source: String, version: String, description: String, location: String, skills: [ExternalSkill]
    ) -> [String] {
        loading.withLock { _ in
            var skipped: [String] = []
            let (old, summary) = state.withLock { state -> (PluginSummary?, PluginSummary) in
                let old = state.sources.removeValue(forKey: source)
                for id in old?.skillIDs ?? [] { state.external[id] = nil }
                var ids: [String] = []
                for skill in skills {
                    let id = skill.info.id
                    if state.skills[id] != nil || state.external[id] != nil {
                        skipped.append(
                            "\(id): the id is already taken by \(state.skills[id]?.info.plugin ?? state.external[id]?.source ?? "another source")"
                        )
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
                    state.external[id] = ExternalEntry(source: source, skill: skill, schema: schema)
                    ids.append(id)
                }
                let summary = PluginSummary(
                    name: source, version: version, description: description, file: location, skillIDs: ids)
                state.sources[source] = summary
                return (old, summary)
            }
            if let old {
                let before = Set(old.skillIDs)
                let after = Set(summary.skillIDs)
                broadcaster.publish(
                    .replaced(
                        old: old, new: summary, added: after.subtracting(before).sorted(),
                        removed: before.subtracting(after).sorted(), updated: before.intersection(after).sorted()))
            } else {
                broadcaster.publish(.loaded(summary))
            }
            return skipped
        }
    }

    /// Removes an external source's skills.
    public func unregisterExternal(source: String) {
        loading.withLock { _ in
            let old = state.withLock { state -> PluginSummary? in
                let old = state.sources.removeValue(forKey: source)
                for id in old?.skillIDs ?? [] { state.external[id] = nil }
                return old
            }
            if let old { broadcaster.publish(.unloaded(old)) }
        }
    }

    /// Validates, then runs the external call racing its deadline; cancellation of the caller cancels the call.
    func invokeExternal(_ entry: ExternalEntry, arguments text: String, timeout: Duration) async -> SkillOutcome {
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: text.allSatisfy(\.isWhitespace) ? "{}" : text)
        } catch {
            return .failure(.invalidArgs, "arguments are not valid JSON: \(error)")
        }
        var arguments = parsed
        if let schema = entry.schema {
            switch schema.check(parsed) {
            case .failure(let invalid): return .failure(.invalidArgs, invalid.issues.summary)
            case .success(let replacement): arguments = replacement ?? parsed
            }
        }
        let id = entry.skill.info.id
        let call = entry.skill.call
        let value = arguments
        return await withTaskGroup(of: SkillOutcome?.self) { group in
            group.addTask { await call(value) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return Task.isCancelled ? nil : .failure(.timeout, "\(id) timed out after \(humanDuration(timeout))")
            }
            var outcome: SkillOutcome = .failure(.cancelled, "\(id) was cancelled")
            for await result in group {
                if let result {
                    outcome = result
                    break
                }
            }
            group.cancelAll()
            if Task.isCancelled { return .failure(.cancelled, "\(id) was cancelled") }
            return outcome
        }
    }
}
