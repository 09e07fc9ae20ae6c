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

extension SkillRegistry {
    /// Registers (or replaces) the skills of an external source such as an MCP server. Ids already taken by a
    /// plugin or another source are skipped and returned with the reason. Publishes a change like a plugin load.
    /// `sandbox`: how the source's process is confined, for `list`.
    @discardableResult
    public func registerExternal(
        source: String, version: String, description: String, location: String, skills: [ExternalSkill],
        sandbox: Sandbox? = nil
    ) -> [String] {
        lifecycle.loading.withLock { _ in
            catalog.registerExternal(
                source: source, version: version, description: description, location: location, skills: skills,
                sandbox: sandbox)
        }
    }

    /// Removes an external source's skills.
    public func unregisterExternal(source: String) {
        lifecycle.loading.withLock { _ in catalog.unregisterExternal(source: source) }
    }
}
