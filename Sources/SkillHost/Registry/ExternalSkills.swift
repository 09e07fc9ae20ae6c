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
    /// `sandbox`: how the source's process is confined, for `list`. `origin`: what the source is (an MCP server
    /// unless said otherwise). `snapshot`: the source's state as the model sees it (like a plugin's ABI 1.1
    /// snapshot), taken before each model request that offers one of its skills; short and non-blocking.
    @discardableResult
    public func registerExternal(
        source: String, version: String, description: String, location: String, skills: [ExternalSkill],
        sandbox: Sandbox? = nil, origin: PluginOrigin? = nil, snapshot: (@Sendable () -> JSONValue)? = nil
    ) -> [String] {
        if origin == .builtIn { pins?.exempt(source) }
        return lifecycle.loading.withLock { _ in
            catalog.registerExternal(
                source: source, version: version, description: description, location: location, skills: skills,
                sandbox: sandbox, origin: origin ?? .mcp(server: source), snapshot: snapshot)
        }
    }

    /// Removes an external source's skills.
    public func unregisterExternal(source: String) {
        lifecycle.loading.withLock { _ in catalog.unregisterExternal(source: source) }
    }
}
