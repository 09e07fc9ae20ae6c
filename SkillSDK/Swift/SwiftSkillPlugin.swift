import Foundation
import SkillSDK
import Synchronization

/// Builds the C descriptors for a plugin whose skills are `SwiftSkill` types, and dispatches calls to them.
///
/// - Important: `@unchecked Sendable` is safe because every property is written once in `init` and only read
///   afterwards. The C strings and descriptor arrays are deliberately never freed: images with Swift code are never
///   unmapped by the host (RTLD_NODELETE), so they must stay valid for the life of the process anyway.
public final class SwiftSkillPlugin: @unchecked Sendable {
    private typealias Handler = (UnsafePointer<skill_call_api>, OpaquePointer, UnsafePointer<CChar>) -> Int32

    private let plugin: UnsafeMutablePointer<skill_plugin>
    private let handlers: [String: Handler]

    /// The plugin this image exports (each plugin image has its own copy of this module).
    private static let exported = Mutex<SwiftSkillPlugin?>(nil)

    /// Builds the plugin once and returns the pointer `skill_plugin_entry` must return.
    ///
    /// Call it from your `@_cdecl("skill_plugin_entry")` function. Later calls return the same pointer.
    public static func export(
        name: String, version: String, description: String, skills: [any SwiftSkill.Type],
        capabilities: SwiftPluginCapabilities = [], views: [SwiftSkillView] = []
    ) -> UnsafePointer<skill_plugin>? {
        exported.withLock { current in
            if let current { return UnsafePointer(current.plugin) }
            let built = SwiftSkillPlugin(
                name: name, version: version, description: description, skills: skills, capabilities: capabilities,
                views: views)
            current = built
            return UnsafePointer(built.plugin)
        }
    }

    private init(
        name: String, version: String, description: String, skills: [any SwiftSkill.Type],
        capabilities: SwiftPluginCapabilities, views: [SwiftSkillView]
    ) {
        let descriptors = UnsafeMutablePointer<skill_descriptor>.allocate(capacity: max(1, skills.count))
        var handlers: [String: Handler] = [:]
        for (index, skill) in skills.enumerated() {
            descriptors[index] = Self.descriptor(for: skill)
            handlers[skill.id] = Self.handler(for: skill)
        }
        self.handlers = handlers
        let records = UnsafeMutablePointer<skill_view>.allocate(capacity: max(1, views.count))
        for (index, view) in views.enumerated() {
            records[index] = skill_view(
                struct_size: UInt32(MemoryLayout<skill_view>.size), name: Self.keep(view.name),
                title: Self.keep(view.title), html: Self.keep(view.html), csp: view.csp.flatMap(Self.keep),
                permissions: view.permissions.flatMap(Self.keep), flags: view.prefersBorder ? 1 : 0)
        }
        plugin = .allocate(capacity: 1)
        plugin.initialize(
            to: skill_plugin(
                struct_size: UInt32(MemoryLayout<skill_plugin>.size), abi_major: UInt16(SKILL_ABI_MAJOR),
                abi_minor: UInt16(SKILL_ABI_MINOR), name: Self.keep(name), version: Self.keep(version),
                description: Self.keep(description), skill_count: UInt32(skills.count),
                skills: UnsafePointer(descriptors), init: nil, deinit: nil, free_string: nil,
                capabilities: capabilities.rawValue, read_paths: nil, snapshot: nil, view_count: UInt32(views.count),
                views: views.isEmpty ? nil : UnsafePointer(records)))
    }

    /// A C string that lives for the rest of the process.
    private static func keep(_ string: String) -> UnsafePointer<CChar>? { UnsafePointer(strdup(string)) }

    private static func descriptor(for skill: any SwiftSkill.Type) -> skill_descriptor {
        skill_descriptor(
            struct_size: UInt32(MemoryLayout<skill_descriptor>.size), id: keep(skill.id), title: keep(skill.title),
            description: keep(skill.description), input_schema: keep(skill.inputSchema), risk: skill.risk.rawValue,
            flags: skill.flags.rawValue, timeout_ms: skill.timeoutMilliseconds, invoke: invokeTrampoline,
            signature: nil, function: nil, output_schema: skill.outputSchema.flatMap(keep),
            answer: skill.answer.flatMap(keep), view: skill.view.flatMap(keep), audience: skill.audience.rawValue)
    }

    /// The one C entry point for every Swift skill: finds the skill by `skill_id(call)` and runs it.
    private static let invokeTrampoline: skill_invoke_fn = { _, api, call, arguments in
        guard let api, let call, let arguments,
            // skill_id is a v1.0 field (it ends at 64 bytes); a v1.0 host's table is that long.
            Int(api.pointee.struct_size) >= 64, let idPointer = api.pointee.skill_id(call)
        else { return Int32(SKILL_ERR_UNAVAILABLE) }
        let id = String(cString: idPointer)
        guard let handler = exported.withLock({ $0?.handlers[id] }) else {
            "no Swift skill is registered as \(id)".withCString { api.pointee.set_error(call, $0) }
            return Int32(SKILL_ERR_UNAVAILABLE)
        }
        return handler(api, call, arguments)
    }

    private static func handler<S: SwiftSkill>(for skill: S.Type) -> Handler {
        { api, call, arguments in
            let context = SkillContext(api: api, call: call)
            func fail(_ code: Int32, _ message: String) -> Int32 {
                message.withCString { api.pointee.set_error(call, $0) }
                return code
            }
            let decoded: S.Arguments
            do {
                let data = Data(bytes: arguments, count: strlen(arguments))
                decoded = try JSONDecoder().decode(S.Arguments.self, from: data)
            } catch let error as DecodingError {
                return fail(Int32(SKILL_ERR_INVALID_ARGS), describe(error))
            } catch {
                return fail(Int32(SKILL_ERR_INVALID_ARGS), "arguments cannot be read: \(error)")
            }
            do {
                let output = try S.call(decoded, context: context)
                let encoder = JSONEncoder()
                // Sorted keys: the same result reads the same on every run (JSONEncoder's own order is not stable).
                encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
                let data = try encoder.encode(output)
                data.withUnsafeBytes { bytes in
                    api.pointee.set_result(call, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), bytes.count)
                }
                return Int32(SKILL_OK)
            } catch let failure as SkillFailure {
                return fail(failure.code, failure.message)
            } catch {
                return fail(Int32(SKILL_ERR_FAILED), "\(error)")
            }
        }
    }

    /// "$.time_zone: expected String" style sentences for decoding errors.
    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            "$" + codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }.joined()
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "\(path(context.codingPath)): missing required property \"\(key.stringValue)\""
        case .typeMismatch(let type, let context): return "\(path(context.codingPath)): expected \(type)"
        case .valueNotFound(let type, let context): return "\(path(context.codingPath)): expected \(type), got null"
        case .dataCorrupted(let context): return "\(path(context.codingPath)): \(context.debugDescription)"
        @unknown default: return "arguments cannot be decoded: \(error)"
        }
    }
}
