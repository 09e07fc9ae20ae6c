import Foundation
@_exported import SkillSDK
import Synchronization

/// A skill written in Swift: an id, words for people and the model, `Decodable` arguments and a `call` method.
///
/// ```swift
/// struct Greet: SwiftSkill {
///     struct Arguments: Decodable { let name: String }
///     static let id = "greet"
///     static let title = "Greet"
///     static let description = "Says hello to someone by name."
///     static let inputSchema = #"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#
///     static func call(_ arguments: Arguments, context: SkillContext) throws -> String { "Hello, \(arguments.name)!" }
/// }
///
/// @_cdecl("skill_plugin_entry")
/// public func skillPluginEntry() -> UnsafePointer<skill_plugin>? {
///     SwiftSkillPlugin.export(name: "greeter", version: "1.0.0", description: "Greetings", skills: [Greet.self])
/// }
/// ```
/// The helper owns every C string and descriptor, decodes arguments, encodes the result as JSON and turns thrown
/// errors into `set_error` sentences — no unsafe pointer code in the skill itself.
public protocol SwiftSkill {
    /// Decoded from the argument JSON (already validated by the host against `inputSchema`).
    associatedtype Arguments: Decodable
    /// Encoded as the JSON result.
    associatedtype Output: Encodable

    /// `^[a-z][a-z0-9_]{0,63}$`
    static var id: String { get }
    static var title: String { get }
    /// For the model: what it does, when to use it, side effects.
    static var description: String { get }
    /// JSON Schema with `"type": "object"`.
    static var inputSchema: String { get }
    static var risk: SwiftSkillRisk { get }
    static var flags: SwiftSkillFlags { get }
    /// 0 = host default.
    static var timeoutMilliseconds: UInt32 { get }
    /// JSON Schema of the encoded `Output` (since ABI 1.1); nil declares none. The host validates every result
    /// against it and shows it to MCP clients.
    static var outputSchema: String? { get }
    /// How a result reads as a sentence for people (since ABI 1.3), such as `"{args.expression} = {result}"`;
    /// nil declares none. The slots and filters are those of `skill_descriptor.answer`.
    static var answer: String? { get }
    /// The name of one of the plugin's views (`SwiftSkillView`, since ABI 1.4) that shows this skill's results; nil:
    /// none.
    static var view: String? { get }
    /// Who may call it (since ABI 1.4); both by default.
    static var audience: SwiftSkillAudience { get }

    /// Runs the skill. [thread-safe]: may run on several threads at once unless `flags` contains `.serial`.
    /// Throw `SkillFailure` for a sentence the user sees; other errors are reported by their description.
    static func call(_ arguments: Arguments, context: SkillContext) throws -> Output
}

extension SwiftSkill {
    public static var risk: SwiftSkillRisk { .readOnly }
    public static var flags: SwiftSkillFlags { [.idempotent] }
    public static var timeoutMilliseconds: UInt32 { 0 }
    public static var outputSchema: String? { nil }
    public static var answer: String? { nil }
    public static var view: String? { nil }
    public static var audience: SwiftSkillAudience { [.model, .view] }
}

/// `SKILL_AUDIENCE_*` (since ABI 1.4): who may call a skill.
public struct SwiftSkillAudience: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Offered to models.
    public static let model = SwiftSkillAudience(rawValue: 1 << 0)
    /// Callable from the plugin's views, through the host.
    public static let view = SwiftSkillAudience(rawValue: 1 << 1)
}

/// A view (`skill_view`, since ABI 1.4): an MCP App — a static HTML page a host shows where a skill's result is. Its
/// data arrives through the host's bridge, never in the page.
public struct SwiftSkillView: Sendable {
    public let name: String
    public let title: String
    public let html: String
    /// JSON: `{"connectDomains": [...], "resourceDomains": [...]}`; nil: none.
    public let csp: String?
    /// JSON: any of `{"camera": {}, "microphone": {}, "geolocation": {}, "clipboardWrite": {}}`; nil: none.
    public let permissions: String?
    public let prefersBorder: Bool

    public init(
        name: String, title: String, html: String, csp: String? = nil, permissions: String? = nil,
        prefersBorder: Bool = false
    ) {
        self.name = name
        self.title = title
        self.html = html
        self.csp = csp
        self.permissions = permissions
        self.prefersBorder = prefersBorder
    }
}

/// `SKILL_CAP_*`: what a plugin's code needs beyond computing (since ABI 1.1). Empty — the default — is none.
public struct SwiftPluginCapabilities: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let network = SwiftPluginCapabilities(rawValue: 1 << 0)
    public static let readFiles = SwiftPluginCapabilities(rawValue: 1 << 1)
    public static let writeFiles = SwiftPluginCapabilities(rawValue: 1 << 2)
    public static let runPrograms = SwiftPluginCapabilities(rawValue: 1 << 3)
}

/// `SKILL_RISK_*`.
public enum SwiftSkillRisk: UInt32, Sendable {
    case readOnly = 0, mutating = 1, destructive = 2
}

/// `SKILL_IDEMPOTENT`, `SKILL_OPEN_WORLD`, `SKILL_SERIAL`.
public struct SwiftSkillFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let idempotent = SwiftSkillFlags(rawValue: 1 << 0)
    public static let openWorld = SwiftSkillFlags(rawValue: 1 << 1)
    public static let serial = SwiftSkillFlags(rawValue: 1 << 2)
}

/// A failure with a sentence for the user or model.
public struct SkillFailure: Error, Sendable {
    public enum Kind: Sendable {
        /// The arguments cannot be used (`SKILL_ERR_INVALID_ARGS`).
        case invalidArguments
        /// The skill ran and failed (`SKILL_ERR_FAILED`).
        case failed
        /// Something the skill needs is not available (`SKILL_ERR_UNAVAILABLE`).
        case unavailable
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind = .failed, _ message: String) {
        self.kind = kind
        self.message = message
    }

    var code: Int32 {
        switch kind {
        case .invalidArguments: return Int32(SKILL_ERR_INVALID_ARGS)
        case .failed: return Int32(SKILL_ERR_FAILED)
        case .unavailable: return Int32(SKILL_ERR_UNAVAILABLE)
        }
    }
}

/// The running call, as seen from a Swift skill. Valid only during `call`.
public struct SkillContext {
    let api: UnsafePointer<skill_call_api>
    let call: OpaquePointer

    /// The caller's context as a JSON object (locale, language, time_zone, now, client), when the host gives one
    /// (ABI 1.1); nil from an older host.
    public var callerContext: String? {
        guard Int(api.pointee.struct_size) >= MemoryLayout<skill_call_api>.size, let context = api.pointee.context,
            let text = context(call)
        else { return nil }
        return String(cString: text)
    }

    /// True once the host gave up on this call; stop early by throwing or returning.
    public var isCancelled: Bool { api.pointee.is_cancelled(call) != 0 }

    /// Reports progress; `total` nil when unknown.
    public func reportProgress(_ done: Double, of total: Double? = nil, _ message: String? = nil) {
        if let message {
            message.withCString { api.pointee.report_progress(call, done, total ?? 0, $0) }
        } else {
            api.pointee.report_progress(call, done, total ?? 0, nil)
        }
    }

    /// Writes a line to the host's log (`SKILL_LOG_INFO` by default).
    public func log(_ message: String, level: Int32 = Int32(SKILL_LOG_INFO)) {
        message.withCString { api.pointee.log(call, level, $0) }
    }
}
