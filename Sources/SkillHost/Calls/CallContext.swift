import Foundation
import SkillJSON
import SkillSDK
import Synchronization

/// The host's per-invocation record behind the opaque `skill_call *` a JSON skill receives.
///
/// It outlives the caller's wait when a call is abandoned: the worker thread keeps it alive until `invoke`
/// returns, so late callbacks from the plugin land here harmlessly.
final class CallContext: Sendable {
    struct Recorded {
        var result: [UInt8]?
        /// Set instead of `result` when the result is over the limit: its size in bytes.
        var oversizedResult: Int?
        var error: String?
        var undo: UndoAction?
    }

    let skill: Skill
    let cancellation: CallCancellation
    let recorded = Mutex(Recorded())
    /// Who calls (`client` in the context), and the context text when the caller gave it whole (a worker passes
    /// on the host's).
    private let client: String
    private let session: String?
    private let givenContext: String?
    /// The context's C copy, made on the first `context()` call (most calls never ask) and freed with this
    /// record, after `invoke` returned.
    private let callerContextCopy = Mutex<UnsafeMutablePointer<CChar>?>(nil)
    let onProgress: (@Sendable (SkillProgress) -> Void)?
    let log: @Sendable (LogRecord) -> Void
    /// Results longer than this become an error instead of a result.
    let resultLimit: Int

    init(
        skill: Skill, onProgress: (@Sendable (SkillProgress) -> Void)?, log: @escaping @Sendable (LogRecord) -> Void,
        resultLimit: Int, cancellation: CallCancellation = CallCancellation(), client: String,
        session: String? = nil, callerContext: String? = nil
    ) {
        self.skill = skill
        self.client = client
        self.session = session
        givenContext = callerContext
        self.onProgress = onProgress
        self.log = log
        self.resultLimit = resultLimit
        self.cancellation = cancellation
    }

    deinit { callerContextCopy.withLock { $0.map { free($0) } } }

    /// The caller's context as JSON text (`skill_call_api.context`, since 1.1): as given, or made now.
    var callerContext: String { givenContext ?? Self.callerContext(client: client, session: session) }

    /// The context as a C string owned by this record.
    var callerContextPointer: UnsafePointer<CChar>? {
        callerContextCopy.withLock { copy in
            if copy == nil { copy = strdup(callerContext) }
            return copy.map { UnsafePointer($0) }
        }
    }

    /// What does not change between calls — this process's locale, language and zone, and a formatter for it —
    /// and the last context made, with the second, client and session it is for (its time stamp has whole seconds:
    /// a context is made once per second, not once per call).
    private struct Place {
        let locale: String
        let language: String
        let zone: TimeZone
        let formatter: ISO8601DateFormatter
        var last: (second: Int64, client: String, session: String?, text: String)?
    }
    private static let place = Mutex<Place?>(nil)

    /// The context a call gets: locale, language, time zone and now from this process, `client` from the front
    /// end (`SkillRegistry.Configuration.client`).
    static func callerContext(client: String, session: String? = nil, now given: Date? = nil) -> String {
        // The common case, a context already made this second, reads the clock's seconds and copies nothing.
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME, &clock)
        let current = Int64(clock.tv_sec)
        if given == nil,
            let text = place.withLock({ place -> String? in
                guard let last = place?.last, last.second == current, last.client == client, last.session == session
                else { return nil }
                return last.text
            })
        {
            return text
        }
        let now = given ?? Date(timeIntervalSince1970: TimeInterval(clock.tv_sec) + TimeInterval(clock.tv_nsec) / 1e9)
        return place.withLock { place in
            var fixed: Place
            if let known = place {
                fixed = known
            } else {
                let zone = TimeZone.current
                let formatter = ISO8601DateFormatter()
                formatter.timeZone = zone
                formatter.formatOptions = [.withInternetDateTime]
                let locale = Locale.current
                fixed = Place(
                    locale: locale.identifier, language: locale.language.languageCode?.identifier ?? "en", zone: zone,
                    formatter: formatter)
            }
            let second = Int64(now.timeIntervalSince1970.rounded(.down))
            if let last = fixed.last, last.second == second, last.client == client, last.session == session {
                return last.text
            }
            // The formatter is used only under this lock.
            let text = JSONValue.object(
                JSONObject([
                    (key: "locale", value: .string(fixed.locale)), (key: "language", value: .string(fixed.language)),
                    (key: "time_zone", value: .string(fixed.zone.identifier)),
                    (key: "now", value: .string(fixed.formatter.string(from: now))),
                    (key: "session", value: session.map { .string($0) } ?? .null),
                    (key: "client", value: .string(client)),
                ])
            ).jsonText
            fixed.last = (second, client, session, text)
            place = fixed
            return text
        }
    }

    var isCancelled: Bool { cancellation.isCancelled }

    func cancel() { cancellation.cancel() }

    /// The context behind a `skill_call *` handed to a plugin.
    static func from(_ call: OpaquePointer?) -> CallContext? {
        guard let call else { return nil }
        return Unmanaged<CallContext>.fromOpaque(UnsafeRawPointer(call)).takeUnretainedValue()
    }

    /// Passes `self` to plugin code as a `skill_call *`. The caller keeps `self` alive for the duration.
    var opaque: OpaquePointer { OpaquePointer(Unmanaged.passUnretained(self).toOpaque()) }
}

/// Reads a C string the plugin passed to a callback (NULL reads as empty; invalid UTF-8 is repaired).
func pluginString(_ pointer: UnsafePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
}

/// The `skill_call_api` table every JSON skill receives. Built once; never freed.
///
/// - Important: `@unchecked Sendable` is safe because the table is written once in `init` and never changed,
///   and its functions capture nothing (they find their state through the `skill_call *` argument).
final class CallAPITable: @unchecked Sendable {
    static let shared = CallAPITable()

    let pointer: UnsafeMutablePointer<skill_call_api>

    private init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(
            to: skill_call_api(
                struct_size: UInt32(MemoryLayout<skill_call_api>.size),
                is_cancelled: { call in CallContext.from(call)?.isCancelled == true ? 1 : 0 },
                report_progress: { call, done, total, message in
                    guard let context = CallContext.from(call) else { return }
                    let text = message.map { pluginString($0) }
                    context.onProgress?(SkillProgress(done: done, total: total > 0 ? total : nil, message: text))
                },
                log: { call, level, message in
                    guard let context = CallContext.from(call) else { return }
                    context.log(
                        LogRecord(
                            level: LogRecord.Level(code: level), source: context.skill.info.plugin,
                            message: "\(context.skill.info.id): \(pluginString(message))"))
                },
                set_result: { call, data, length in
                    guard let context = CallContext.from(call) else { return }
                    guard length <= context.resultLimit else {
                        context.recorded.withLock {
                            $0.result = nil
                            $0.oversizedResult = length
                        }
                        return
                    }
                    let bytes = data.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                    context.recorded.withLock {
                        $0.result = bytes
                        $0.oversizedResult = nil
                    }
                },
                set_error: { call, message in
                    guard let context = CallContext.from(call) else { return }
                    let text = pluginString(message)
                    context.recorded.withLock { $0.error = text }
                },
                set_undo: { call, skillID, arguments in
                    guard let context = CallContext.from(call) else { return }
                    let skill = context.skill.info
                    guard
                        let undo = UndoAction(
                            skill: skill.id, target: pluginString(skillID), argumentText: pluginString(arguments),
                            warn: { context.log(LogRecord(level: .warning, source: skill.plugin, message: $0)) })
                    else { return }
                    context.recorded.withLock { $0.undo = undo }
                },
                skill_id: { call in
                    guard let context = CallContext.from(call) else { return nil }
                    return UnsafePointer(context.skill.cID)
                },
                context: { call in CallContext.from(call)?.callerContextPointer }))
    }
}
