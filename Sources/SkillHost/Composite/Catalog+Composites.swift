import SkillJSON

/// A registered composite skill: its definition and what resolving its steps against the catalog found — its
/// risk (the highest of its own and its steps'; a step whose skill is not registered counts as destructive until
/// it is) and every skill it can end up calling. Immutable; resolution makes a new one when something changed.
final class CompositeSkill: Sendable {
    let definition: CompositeDefinition
    let file: String
    let fingerprint: UInt64
    let info: SkillInfo

    init(_ definition: CompositeDefinition, file: String, fingerprint: UInt64, risk: SkillRisk, plan: CompositePlan) {
        self.definition = definition
        self.file = file
        self.fingerprint = fingerprint
        info = SkillInfo(
            id: definition.id, title: definition.title, description: definition.description, plugin: definition.id,
            pluginVersion: definition.version, file: file, risk: risk, flags: [], timeout: definition.timeout,
            inputSchema: definition.inputSchema, schemaIsGenerated: false, kind: .composite(plan))
    }

    var plan: CompositePlan? {
        if let plan = info.kind.compositePlan { return plan }
        return nil
    }

    var summary: PluginSummary {
        PluginSummary(
            name: definition.id, version: definition.version, description: definition.description, file: file,
            skillIDs: [definition.id], origin: .composite)
    }
}

extension Catalog {
    /// Files composites are loaded from.
    var compositeFiles: [String] { state.withLock { Array($0.composites.keys) } }

    /// The composite loaded from `file`, if any.
    func composite(file: String) -> CompositeSkill? { state.withLock { $0.composites[file] } }

    /// Registers (or replaces) the composite of `file`, unless its id is taken by another skill or its steps
    /// would close a cycle of composites calling each other. Publishes the change like a plugin load.
    func commitComposite(_ definition: CompositeDefinition, file: String, fingerprint: UInt64) -> Result<
        PluginSummary, PluginProblem
    > {
        let result = state.withLock { state -> Result<(old: CompositeSkill?, new: CompositeSkill), PluginProblem> in
            let id = definition.id
            if let owner = state.entries[id], !Self.isComposite(owner, file: file) {
                return .failure(.skillIDTaken(id, plugin: owner.info.plugin))
            }
            if let cycle = Self.cycle(through: definition, file: file, state) {
                return .failure(
                    .composite(
                        "its steps make a cycle of composite skills calling each other: "
                            + cycle.joined(separator: " → ") + "; remove one of the calls"))
            }
            let old = state.composites[file]
            if let old, old.definition.id != id { state.entries[old.definition.id] = nil }
            let placeholder = CompositePlan(steps: definition.written, lines: [], calls: [], missing: [])
            let new = CompositeSkill(
                definition, file: file, fingerprint: fingerprint, risk: .destructive, plan: placeholder)
            state.composites[file] = new
            state.entries[id] = .composite(new)
            Self.resolveComposites(&state)
            return .success((old, state.composites[file] ?? new))
        }
        switch result {
        case .failure(let problem): return .failure(problem)
        case .success(let (old, new)):
            if let old {
                publishReplacement(old: old.summary, new: new.summary)
            } else {
                broadcaster.publish(.loaded(new.summary))
            }
            return .success(new.summary)
        }
    }

    /// Unregisters the composite of `file` and publishes it.
    func removeComposite(file: String) -> PluginSummary? {
        let old = state.withLock { state -> CompositeSkill? in
            guard let old = state.composites.removeValue(forKey: file) else { return nil }
            state.entries[old.definition.id] = nil
            Self.resolveComposites(&state)
            return old
        }
        guard let old else { return nil }
        broadcaster.publish(.unloaded(old.summary))
        return old.summary
    }

    private static func isComposite(_ entry: SkillEntry, file: String) -> Bool {
        if case .composite(let composite) = entry { return composite.file == file }
        return false
    }

    /// The cycle `definition` would close, as ids from it back to it, if any.
    private static func cycle(through definition: CompositeDefinition, file: String, _ state: State) -> [String]? {
        var byID: [String: CompositeDefinition] = [:]
        for (other, composite) in state.composites where other != file {
            byID[composite.definition.id] = composite.definition
        }
        byID[definition.id] = definition
        var path: [String] = [definition.id]
        var visited = Set<String>()
        func walk(_ id: String) -> Bool {
            for next in byID[id]?.calledSkills ?? [] {
                if next == definition.id {
                    path.append(next)
                    return true
                }
                guard byID[next] != nil, visited.insert(next).inserted else { continue }
                path.append(next)
                if walk(next) { return true }
                path.removeLast()
            }
            return false
        }
        return walk(definition.id) ? path : nil
    }

    /// Recomputes every composite's risk and the skills it calls after any change to the entries (a step's
    /// plugin loaded, replaced or removed). Lock held. Cycles are refused at commit, so the walk ends; the visited
    /// set makes sure of it.
    static func resolveComposites(_ state: inout State) {
        guard !state.composites.isEmpty else { return }
        var resolved: [String: (risk: SkillRisk, calls: [String], missing: [String])] = [:]
        func resolve(_ definition: CompositeDefinition, visiting: inout Set<String>) -> (
            risk: SkillRisk, calls: [String], missing: [String]
        ) {
            if let done = resolved[definition.id] { return done }
            var risk = definition.declaredRisk
            var calls: [String] = []
            var missing: [String] = []
            var seen = Set<String>()
            func add(_ id: String) { if seen.insert(id).inserted { calls.append(id) } }
            visiting.insert(definition.id)
            for id in definition.calledSkills {
                add(id)
                switch state.entries[id] {
                case .composite(let inner)? where !visiting.contains(id):
                    let nested = resolve(inner.definition, visiting: &visiting)
                    risk = SkillRisk.max(risk, nested.risk)
                    nested.calls.forEach(add)
                    missing += nested.missing.filter { !missing.contains($0) }
                case let entry?:
                    risk = SkillRisk.max(risk, entry.info.risk)
                case nil:
                    risk = .destructive
                    missing.append(id)
                }
            }
            visiting.remove(definition.id)
            resolved[definition.id] = (risk, calls, missing)
            return (risk, calls, missing)
        }
        for (file, composite) in state.composites {
            var visiting = Set<String>()
            let (risk, calls, missing) = resolve(composite.definition, visiting: &visiting)
            let plan = CompositePlan(
                steps: composite.definition.written, lines: composite.definition.planLines, calls: calls,
                missing: missing)
            guard risk != composite.info.risk || plan != composite.plan else { continue }
            let new = CompositeSkill(
                composite.definition, file: file, fingerprint: composite.fingerprint, risk: risk, plan: plan)
            state.composites[file] = new
            state.entries[composite.definition.id] = .composite(new)
        }
    }
}
