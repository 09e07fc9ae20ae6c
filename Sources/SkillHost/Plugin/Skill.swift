import CProcess
import Foundation
import JSONRPC
import SkillJSON
import SkillSDK
import Synchronization

/// A loaded plugin: in this process (the `dlopen` handle, its descriptor and the state `init` returned) or in a
/// worker process.
///
/// - Important: `@unchecked Sendable` is safe because every property is set once in `init` and never mutated;
///   the C pointers refer to memory owned by the plugin image, which stays mapped until `unload()` runs, and the
///   registry calls `unload()` only after the plugin's skills are unregistered and its calls have drained.
final class LoadedPlugin: @unchecked Sendable {
    /// Where the plugin's code runs.
    enum Image {
        case native(
            handle: UnsafeMutableRawPointer, descriptor: UnsafePointer<skill_plugin>, state: UnsafeMutableRawPointer?)
        case isolated(IsolatedPlugin)
    }

    let name: String
    let version: String
    let description: String
    /// The file as the user placed it.
    let file: String
    let image: Image
    /// Images with Swift code are opened with RTLD_NODELETE and never really unmapped.
    let keepsMapped: Bool
    /// Size of the file, for the accounting of kept images.
    let imageSize: Int
    /// The `skill_host` record `init` received; must outlive `deinit` (nil for isolated plugins).
    let host: HostRecord?
    /// Calls that looked this plugin's skill up and have not finished yet (from lookup, before the runner knows
    /// about them, until the caller resumes). Retiring waits for zero: unmapping an image a call is about to enter
    /// would crash.
    let users = Atomic<Int>(0)
    /// Wakes the plugin's retirement when a call ends or a user is given back.
    let drain = DrainSignal()

    /// What the plugin's code may do beyond computing, and extra folders it may read (since 1.1).
    let capabilities: PluginCapabilities
    let readPaths: [String]
    /// How the kernel confines the plugin's worker; nil in process.
    let confinement: ConfinementReport?
    /// A native plugin's `snapshot` function (since 1.1).
    let snapshot: PluginSnapshot.Function?
    /// Whether the plugin has a snapshot, here or in its worker.
    let hasSnapshot: Bool
    /// Its last snapshot (native plugins).
    let snapshotCache = SnapshotCache()

    init(
        name: String, version: String, description: String, file: String, image: Image, keepsMapped: Bool,
        imageSize: Int, host: HostRecord?, capabilities: PluginCapabilities = [], readPaths: [String] = [],
        confinement: ConfinementReport? = nil,
        snapshot: PluginSnapshot.Function? = nil, hasSnapshot: Bool? = nil
    ) {
        self.hasSnapshot = hasSnapshot ?? (snapshot != nil)
        self.capabilities = capabilities
        self.readPaths = readPaths
        self.confinement = confinement
        self.snapshot = snapshot
        self.name = name
        self.version = version
        self.description = description
        self.file = file
        self.image = image
        self.keepsMapped = keepsMapped
        self.imageSize = imageSize
        self.host = host
    }

    /// Gives back a user taken with `users.add` and wakes a retirement waiting for the plugin.
    func release() {
        users.subtract(1, ordering: .releasing)
        drain.notify()
    }

    /// The state `init` returned (native plugins).
    var state: UnsafeMutableRawPointer? {
        if case .native(_, _, let state) = image { return state }
        return nil
    }

    /// The isolation mode the plugin runs in.
    var isolation: IsolationMode {
        if case .isolated = image { return .process }
        return .inProcess
    }

    /// Calls `deinit` and closes the image (a no-op close for RTLD_NODELETE images), or stops the worker.
    /// [load-thread]
    func unload() {
        switch image {
        case .native(let handle, let descriptor, let state):
            if let deinitFunction = DescriptorValidator.v1_0Part(descriptor).deinit {
                deinitFunction(state)
            }
            dlclose(handle)
        case .isolated(let isolated):
            isolated.stop()
        }
    }
}

/// A registered skill: its description and how to call it.
///
/// - Important: `@unchecked Sendable` is safe because all properties are immutable after `init`; `cID` is a
///   private copy of the id freed only in `deinit`, and the `invoke` pointer belongs to an image that outlives
///   every call (see `LoadedPlugin`).
final class Skill: @unchecked Sendable {
    enum Implementation {
        case json(skill_invoke_fn)
        case typed(TypedFunction)
        /// Runs in the plugin's worker process.
        case remote(IsolatedPlugin)
    }

    let info: SkillInfo
    let schema: JSONSchema
    let implementation: Implementation
    let plugin: LoadedPlugin
    /// The compiled output schema: results that do not match it become errors.
    let output: JSONSchema?
    /// The id as a C string, for `skill_call_api.skill_id`.
    let cID: UnsafeMutablePointer<CChar>
    /// How long its last call through the invocation runner took, in nanoseconds (0 before the first): whether its
    /// caller waits for the next one without suspending.
    let recentDuration = Atomic<UInt64>(0)
    /// `info.risk == .readOnly`, read on every call without copying `info`.
    let readOnly: Bool
    /// The typed function when plain argument text may go straight into its slots: a typed skill whose schemas are
    /// both generated from its signature (a declared one may say more than the signature).
    private let plainTyped: TypedFunction?

    init(
        info: SkillInfo, schema: JSONSchema, implementation: Implementation, plugin: LoadedPlugin,
        output: JSONSchema? = nil
    ) {
        self.output = output
        self.info = info
        self.schema = schema
        self.implementation = implementation
        self.plugin = plugin
        readOnly = info.risk == .readOnly
        if case .typed(let function) = implementation, info.schemaIsGenerated, output == nil {
            plainTyped = function
        } else {
            plainTyped = nil
        }
        let bytes = info.id.utf8CString
        cID = .allocate(capacity: bytes.count)
        // unsafelyUnwrapped is sound: utf8CString always holds at least the terminating NUL, so the buffer is
        // never empty and has a base address.
        bytes.withUnsafeBufferPointer { cID.initialize(from: $0.baseAddress.unsafelyUnwrapped, count: bytes.count) }
    }

    deinit { cID.deallocate() }

    /// Notes how long `outcome`'s call took (see `recentDuration`) and returns it.
    func noted(_ outcome: SkillOutcome) -> SkillOutcome {
        recentDuration.store(outcome.duration.wholeNanoseconds, ordering: .relaxed)
        return outcome
    }

    /// Runs the skill on the current thread with arguments that already passed validation.
    ///
    /// - Important: executes plugin code; never call it on the Swift cooperative pool (the runner calls it on
    ///   its own threads; benchmarks call it directly).
    /// `context` is only built for JSON and remote skills (typed skills have no call API); string results of typed
    /// skills over `resultLimit` bytes are errors.
    func execute(
        arguments: JSONValue, argumentText: String?, resultLimit: Int, context: @autoclosure () -> CallContext
    ) -> SkillOutcome {
        // Most skills declare no output schema: they go straight to the call.
        guard let output else {
            return run(arguments: arguments, argumentText: argumentText, resultLimit: resultLimit, context: context())
        }
        return checked(
            run(arguments: arguments, argumentText: argumentText, resultLimit: resultLimit, context: context()),
            against: output)
    }

    /// The declared result schema is a promise: a successful result that breaks it is an error naming where.
    private func checked(_ outcome: SkillOutcome, against output: JSONSchema) -> SkillOutcome {
        guard outcome.status == .ok,
            case .invalid(let issues) = output.validate(outcome.result ?? .null, options: .strict)
        else { return outcome }
        return .failure(
            code: .failed, "\(info.id) returned a result that does not match its output schema: \(issues.summary)")
    }

    @inline(__always)
    private func run(
        arguments: JSONValue, argumentText: String?, resultLimit: Int, context: @autoclosure () -> CallContext
    ) -> SkillOutcome {
        switch implementation {
        case .typed(let function):
            guard case .object(let object) = arguments else {
                return .failure(code: .invalidArguments, "$: expected object, got \(arguments.typeName)")
            }
            return typedOutcome(function.call(object), resultLimit: resultLimit)
        case .json(let invoke):
            let text = argumentText ?? arguments.jsonText
            let context = context()
            let code = text.withCString { arguments in
                invoke(plugin.state, CallAPITable.shared.pointer, context.opaque, arguments)
            }
            return withExtendedLifetime(context) { outcome(code: code, context: context) }
        case .remote(let isolated):
            return isolated.call(skill: info.id, arguments: arguments, argumentText: argumentText, context: context())
        }
    }

    /// A typed skill's call with its arguments as JSON text, read straight into the C slots when the text is plain
    /// (`TypedFunction.call(plainText:)`). Nil when the caller must take the general way: another kind of skill, a
    /// declared schema or output schema (they may say more than the signature), or text that is not plain.
    ///
    /// - Important: executes plugin code, like `execute`.
    func executePlain(argumentText: String, resultLimit: Int) -> SkillOutcome? {
        guard let result = plainTyped?.call(plainText: argumentText) else { return nil }
        return typedOutcome(result, resultLimit: resultLimit)
    }

    /// What a worker's lane sends back for a call: a plain success's result as the plugin set it — text the host
    /// decodes as `decodeResult` would here and checks against the output schema — or any other outcome.
    enum LaneAnswer {
        case text(String)
        case outcome(SkillOutcome)
    }

    /// A JSON skill's call for a worker's lane, its arguments' text handed to the plugin as it is: a success with a
    /// result and nothing else (no undo, not over the limit, valid UTF-8, no line break, which the lane's pipe
    /// would split) comes back as the plugin's text, neither parsed nor checked here — the host parses it and checks
    /// its output schema (`PluginLifecycle.adopt` compiles it there). Nil for any other kind of skill.
    ///
    /// - Important: executes plugin code, like `execute`.
    func executeForLane(argumentText: String, context: CallContext) -> LaneAnswer? {
        guard case .json(let invoke) = implementation else { return nil }
        let code = argumentText.withCString { arguments in
            invoke(plugin.state, CallAPITable.shared.pointer, context.opaque, arguments)
        }
        return withExtendedLifetime(context) {
            if Int(code) == SKILL_OK {
                let recorded = context.recorded.withLock { $0 }
                if recorded.oversizedResult == nil, recorded.undo == nil, let bytes = recorded.result,
                    !bytes.contains(10), let text = String(validating: bytes, as: UTF8.self)
                {
                    return .text(text)
                }
            }
            // Anything else is the outcome a call here makes, output schema checked.
            let outcome = outcome(code: code, context: context)
            return .outcome(output.map { checked(outcome, against: $0) } ?? outcome)
        }
    }

    private func typedOutcome(_ result: Result<JSONValue, TypedCallError>, resultLimit: Int) -> SkillOutcome {
        switch result {
        case .success(.string(let text)) where text.utf8.count > resultLimit:
            return oversized(text.utf8.count, limit: resultLimit)
        case .success(let value): return .success(value)
        case .failure(let error):
            return .failure(code: error.isArgumentError ? .invalidArguments : .failed, error.description)
        }
    }

    private func oversized(_ size: Int, limit: Int) -> SkillOutcome {
        Self.oversizedOutcome(skill: info.id, size: size, limit: limit)
    }

    private static func oversizedOutcome(skill: String, size: Int, limit: Int) -> SkillOutcome {
        .failure(
            code: .failed,
            "the result of \(skill) is \(byteCount(size)), over the host's limit of \(byteCount(limit)); return less "
                + "(or raise max_result_mb in config.json)")
    }

    private func outcome(code: Int32, context: CallContext) -> SkillOutcome {
        let recorded = context.recorded.withLock { $0 }
        return Self.outcome(
            skill: info.id, code: code, result: recorded.result, oversized: recorded.oversizedResult,
            error: recorded.error, undo: recorded.undo, resultLimit: context.resultLimit)
    }

    /// What a JSON skill's call made of its status `code` and what it set: its result's bytes (or, over
    /// `resultLimit`, their count in `oversized`), its error message and its undo — in this process, or as a worker
    /// reported them.
    static func outcome(
        skill: String, code: Int32, result: [UInt8]?, oversized: Int?, error: String?, undo: UndoAction?,
        resultLimit: Int
    ) -> SkillOutcome {
        guard Int(code) == SKILL_OK else {
            let message = error.flatMap { $0.isEmpty ? nil : $0 }
            switch Int(code) {
            case SKILL_ERR_INVALID_ARGS:
                return .failure(
                    code: .invalidArguments, message ?? "the skill rejected its arguments (no message given)")
            case SKILL_ERR_CANCELLED:
                return .failure(code: .cancelled, message ?? "the skill stopped after cancellation")
            case SKILL_ERR_UNAVAILABLE:
                return .failure(code: .failed, message ?? "the skill is unavailable (no message given)")
            case SKILL_ERR_FAILED: return .failure(code: .failed, message ?? "the skill failed without a message")
            default: return .failure(code: .failed, message ?? "the skill failed with unknown status \(code)")
            }
        }
        if let size = oversized { return oversizedOutcome(skill: skill, size: size, limit: resultLimit) }
        guard let bytes = result else { return .success(.null, undo: undo) }
        switch decodeResult(bytes) {
        case .success(let value): return .success(value, undo: undo)
        case .failure(let problem): return .failure(code: .failed, "\(skill) \(problem.message)")
        }
    }
}

extension Skill {
    struct ResultProblem: Error {
        let message: String
    }

    /// A `set_result` payload: JSON when it starts (after white space) with `{` or `[` — then it must parse —,
    /// otherwise JSON if it parses and plain text if not. Always valid UTF-8.
    static func decodeResult(_ bytes: [UInt8]) -> Result<JSONValue, ResultProblem> {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(
                ResultProblem(message: "returned a result that is not valid UTF-8; results must be UTF-8 text or JSON"))
        }
        let first = bytes.first { $0 != 32 && $0 != 9 && $0 != 10 && $0 != 13 }
        do {
            return .success(try JSONValue(parsing: bytes))
        } catch {
            if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") {
                return .failure(
                    ResultProblem(
                        message: "returned invalid JSON (\(error)); a result that starts with { or [ must be JSON"))
            }
            return .success(.string(text))
        }
    }
}

/// `512 B`, `64.0 KB`, `16.0 MB`.
func byteCount(_ bytes: Int) -> String {
    if bytes < 1024 { return "\(bytes) B" }
    if bytes < 1 << 20 { return String(format: "%.1f KB", Double(bytes) / 1024) }
    return String(format: "%.1f MB", Double(bytes) / 1_048_576)
}
