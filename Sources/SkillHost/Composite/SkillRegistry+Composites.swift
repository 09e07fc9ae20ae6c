import Foundation
import SkillJSON

/// Composite skills' files (`NAME.skill.json`): loaded, replaced, removed and checked like plugin files, with the
/// same notices — a broken replacement leaves the old version registered.
extension SkillRegistry {
    /// `*.skill.json`, not hidden or temporary.
    static func isCompositeFileName(_ name: String) -> Bool {
        name.hasSuffix(".skill.json") && name.count > ".skill.json".count && !name.hasPrefix(".")
            && !name.hasPrefix("#")
    }

    /// Loads (or replaces) the composite skill of `file`. Lock held.
    func loadCompositeLocked(_ file: String) -> Result<PluginSummary, PluginLoadError> {
        let bytes: [UInt8]
        switch PluginLoader.read(file, maximumSize: CompositeLimits.fileBytes, elf: false) {
        case .success(let b): bytes = b
        case .failure(let error): return lifecycle.fail(error, hash: nil)
        }
        let hash = fingerprint(bytes)
        if let current = catalog.composite(file: file), current.fingerprint == hash { return .success(current.summary) }
        let definition: CompositeDefinition
        switch CompositeDefinition.parse(bytes) {
        case .success(let d): definition = d
        case .failure(let errors):
            return lifecycle.fail(
                PluginLoadError(file: file, problems: errors.list.map { PluginProblem.composite($0.description) }),
                hash: hash)
        }
        switch catalog.commitComposite(definition, file: file, fingerprint: hash) {
        case .failure(let problem):
            // Not tied to the content: the same file may load once the other skill is gone.
            return lifecycle.fail(PluginLoadError(file: file, problems: [problem]), hash: nil)
        case .success(let summary):
            lifecycle.state.withLock { $0.failures[file] = nil }
            configuration.log(LogRecord(level: .info, source: "host", message: "loaded \(file)"))
            return .success(summary)
        }
    }

    /// Validates a composite skill's file without registering it: its syntax, references and limits, and against
    /// the skills registered now — the skills its steps call (missing ones are warnings: they may be loaded later),
    /// the arguments that need nothing but literals, and cycles.
    public func checkComposite(file: String) -> Result<CompositeCheck, PluginLoadError> {
        let bytes: [UInt8]
        switch PluginLoader.read(file, maximumSize: CompositeLimits.fileBytes, elf: false) {
        case .success(let b): bytes = b
        case .failure(let error): return .failure(error)
        }
        let definition: CompositeDefinition
        switch CompositeDefinition.parse(bytes) {
        case .success(let d): definition = d
        case .failure(let errors):
            return .failure(
                PluginLoadError(file: file, problems: errors.list.map { PluginProblem.composite($0.description) }))
        }
        var problems: [PluginProblem] = []
        var warnings: [String] = []
        for (offset, step) in definition.steps.enumerated() {
            guard case .call(let call) = step else { continue }
            guard let entry = catalog.entry(call.skill) else {
                warnings.append(
                    "step \(offset + 1) calls \(call.skill), which is not registered now; the composite fails until "
                        + "it is")
                continue
            }
            if case .literal(let arguments) = call.arguments, let schema = entry.schema,
                case .failure(let invalid) = schema.check(arguments, options: .lenient)
            {
                problems.append(
                    .composite(
                        "step \(offset + 1) (\(call.skill)): its arguments are invalid: \(invalid.issues.summary)"))
            }
        }
        // Resolved as it would be registered: risk, the skills it reaches, a cycle with what is loaded.
        // The file may be loaded already (it is in a plugins folder): it is checked as its own replacement.
        let scratch = Catalog()
        let real = Self.realPath(file)
        catalog.state.withLock { state in
            scratch.state.withLock { copy in
                copy.entries = state.entries
                copy.composites = state.composites
                for (loaded, composite) in state.composites where Self.realPath(loaded) == real {
                    copy.composites[loaded] = nil
                    copy.entries[composite.definition.id] = nil
                }
            }
        }
        let hash = fingerprint(bytes)
        if case .failure(let problem) = scratch.commitComposite(definition, file: file, fingerprint: hash) {
            problems.append(problem)
        }
        guard problems.isEmpty, let entry = scratch.entry(definition.id) else {
            return .failure(
                PluginLoadError(
                    file: file, problems: problems.isEmpty ? [.composite("cannot be registered")] : problems))
        }
        return .success(CompositeCheck(skill: entry.info, warnings: warnings))
    }
}

extension SkillRegistry {
    /// The file's path with symbolic links and `..` resolved (the path as given when it cannot be).
    fileprivate static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

/// What `checkComposite(file:)` found in a composite that would load: the skill as it would be registered, and
/// what may still trip it up.
public struct CompositeCheck: Sendable {
    public let skill: SkillInfo
    public let warnings: [String]
}
