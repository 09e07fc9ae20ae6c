import CFFI
import Foundation

/// The v1.0 `skill_host.log` — `void log(int level, const char *message)`, no context — made for one plugin with
/// a libffi closure: each plugin gets its own C function pointer that knows who speaks, so every line names its
/// plugin and reaches its own registry's sink, from any thread (the plugin's own included), with no process-wide
/// logger and nothing set per call.
///
/// - Important: `@unchecked Sendable` is safe because everything is written once in `init` and only read (by the
///   closure, from any thread) until `deinit`; the closure is freed only after the plugin's `deinit` ran (the
///   `HostRecord` owning this outlives it), and `Speaker` is immutable.
final class LogClosure: @unchecked Sendable {
    /// Who speaks through the closure, and where their lines go.
    final class Speaker: Sendable {
        let plugin: String
        let log: @Sendable (LogRecord) -> Void

        init(plugin: String, log: @escaping @Sendable (LogRecord) -> Void) {
            self.plugin = plugin
            self.log = log
        }
    }

    typealias Function = @convention(c) (Int32, UnsafePointer<CChar>?) -> Void

    /// The C function to hand the plugin.
    let function: Function
    private let closure: UnsafeMutableRawPointer
    private let cif: UnsafeMutablePointer<ffi_cif>
    private let argumentTypes: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    private let speaker: Unmanaged<Speaker>

    /// nil when libffi cannot make a closure (no memory for its trampoline).
    init?(_ speaker: Speaker) {
        var code: UnsafeMutableRawPointer?
        guard let closure = ffi_closure_alloc(MemoryLayout<ffi_closure>.size, &code), let code else { return nil }
        let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
        let argumentTypes = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: 2)
        argumentTypes[0] = skillhost_ffi_type_sint32()
        argumentTypes[1] = skillhost_ffi_type_pointer()
        let retained = Unmanaged.passRetained(speaker)
        guard
            ffi_prep_cif(cif, skillhost_ffi_default_abi(), 2, skillhost_ffi_type_void(), argumentTypes) == FFI_OK,
            ffi_prep_closure_loc(
                closure.assumingMemoryBound(to: ffi_closure.self), cif, logTrampoline, retained.toOpaque(), code)
                == FFI_OK
        else {
            ffi_closure_free(closure)
            cif.deallocate()
            argumentTypes.deallocate()
            retained.release()
            return nil
        }
        self.closure = closure
        self.cif = cif
        self.argumentTypes = argumentTypes
        self.speaker = retained
        function = unsafeBitCast(code, to: Function.self)
    }

    deinit {
        ffi_closure_free(closure)
        cif.deallocate()
        argumentTypes.deallocate()
        speaker.release()
    }
}

/// What libffi calls for every `log` line: the arguments by address, the speaker as user data.
private func logTrampoline(
    _ cif: UnsafeMutablePointer<ffi_cif>?, _ result: UnsafeMutableRawPointer?,
    _ arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?, _ userData: UnsafeMutableRawPointer?
) {
    guard let arguments, let userData, let level = arguments[0], let message = arguments[1] else { return }
    let speaker = Unmanaged<LogClosure.Speaker>.fromOpaque(userData).takeUnretainedValue()
    speaker.log(
        LogRecord(
            level: LogRecord.Level(code: level.load(as: Int32.self)), source: speaker.plugin,
            message: pluginString(message.load(as: UnsafePointer<CChar>?.self))))
}
