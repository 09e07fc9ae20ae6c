import CTerminal
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Reads lines with libedit when it is installed (bound at run time with `dlopen("libedit.so.2")`, so the build
/// needs no -dev package), else plainly from standard input. Keeps a persistent input history file.
final class LineEditor: @unchecked Sendable {
    // @unchecked: used only from the shell's input thread.
    private typealias ReadlineFunction = @convention(c) (UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?
    private typealias HistoryFunction = @convention(c) (UnsafePointer<CChar>?) -> Int32
    private typealias AddHistoryFunction = @convention(c) (UnsafePointer<CChar>?) -> Int32

    enum Input: Equatable {
        case line(String)
        /// Ctrl-C: the line being typed is discarded.
        case interrupt
        /// Ctrl-D or end of input.
        case end
    }

    private typealias LineHandler = @convention(c) (UnsafeMutablePointer<CChar>?) -> Void
    private typealias InstallFunction = @convention(c) (UnsafePointer<CChar>?, LineHandler?) -> Void
    private typealias VoidFunction = @convention(c) () -> Void
    private typealias IntFunction = @convention(c) () -> Int32
    private typealias ReplaceLineFunction = @convention(c) (UnsafePointer<CChar>?, Int32) -> Void

    /// libedit's callback interface: lets the prompt wait for input *and* for notices, and redraw itself below a
    /// notice with what was typed so far.
    private struct Callbacks {
        let install: InstallFunction
        let readChar: VoidFunction
        let remove: VoidFunction
        let redisplay: IntFunction
        let replaceLine: ReplaceLineFunction?
    }

    private let readline: ReadlineFunction?
    private let callbacks: Callbacks?
    private let addHistory: AddHistoryFunction?
    private let writeHistory: HistoryFunction?
    private let historyFile: String
    /// Whether libedit was found.
    let usesLibedit: Bool

    init(historyFile: String) {
        self.historyFile = historyFile
        setlocale(LC_CTYPE, "")  // so libedit reads UTF-8 input as characters
        let handle = dlopen("libedit.so.2", RTLD_NOW | RTLD_LOCAL) ?? dlopen("libedit.so", RTLD_NOW | RTLD_LOCAL)
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            guard let handle, let pointer = dlsym(handle, name) else { return nil }
            return unsafeBitCast(pointer, to: type)
        }
        readline = symbol("readline", as: ReadlineFunction.self)
        addHistory = symbol("add_history", as: AddHistoryFunction.self)
        writeHistory = symbol("write_history", as: HistoryFunction.self)
        usesLibedit = readline != nil
        if let install = symbol("rl_callback_handler_install", as: InstallFunction.self),
            let readChar = symbol("rl_callback_read_char", as: VoidFunction.self),
            let remove = symbol("rl_callback_handler_remove", as: VoidFunction.self),
            let redisplay = symbol("rl_forced_update_display", as: IntFunction.self)
        {
            callbacks = Callbacks(
                install: install, readChar: readChar, remove: remove, redisplay: redisplay,
                replaceLine: symbol("rl_replace_line", as: ReplaceLineFunction.self))
        } else {
            callbacks = nil
        }
        if let readHistory = symbol("read_history", as: HistoryFunction.self) {
            try? FileManager.default.createDirectory(
                atPath: (historyFile as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = readHistory(historyFile)
        }
    }

    /// Reads one line. SIGINT is unblocked for this thread only while it waits, so Ctrl-C interrupts the read.
    func read(prompt: String) -> Input {
        _ = skillhost_sigint_take()
        Signals.unblock()
        defer { Signals.block() }
        guard let readline else { return readPlain(prompt: prompt) }
        errno = 0
        guard let pointer = readline(prompt) else {
            return skillhost_sigint_take() > 0 || errno == EINTR ? .interrupt : .end
        }
        defer { free(pointer) }
        let line = String(cString: pointer)
        if !line.trimmingCharacters(in: .whitespaces).isEmpty {
            _ = addHistory?(line)
            _ = writeHistory?(historyFile)
        }
        return .line(line)
    }

    /// Reads one line at the prompt while also waiting on `wake`: whenever it becomes readable, `notices()` is
    /// asked for lines to print, which appear above the prompt; the prompt and the text typed so far are redrawn
    /// below them, as readline programs do. Without libedit's callback interface, notices wait for the next line.
    func read(prompt: String, wake: Int32, notices: () -> [String]) -> Input {
        guard let callbacks, Terminal.inputIsTTY else { return read(prompt: prompt) }
        _ = skillhost_sigint_take()
        LineEditor.received.withLock { $0 = nil }
        callbacks.install(
            prompt,
            { line in
                LineEditor.received.withLock { $0 = .some(line.map { String(cString: $0) }) }
                free(line)
            })
        defer { callbacks.remove() }
        while true {
            var fds = [
                pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            Signals.unblock()
            let ready = poll(&fds, 2, -1)
            Signals.block()
            if skillhost_sigint_take() > 0 {
                callbacks.replaceLine?("", 0)
                return .interrupt
            }
            guard ready > 0 else { continue }
            if fds[1].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                _ = Glibc.read(wake, &buffer, buffer.count)
                let lines = notices()
                if !lines.isEmpty {
                    let fitted = Table.fit(lines.joined(separator: "\n"), width: Terminal(environment: [:]).width)
                    writeOut("\r\u{1B}[2K" + fitted + "\n")
                    _ = callbacks.redisplay()
                }
            }
            if fds[0].revents != 0 {
                callbacks.readChar()
                if let line = LineEditor.received.withLock({ $0 }) {
                    guard let line else { return .end }
                    if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                        _ = addHistory?(line)
                        _ = writeHistory?(historyFile)
                    }
                    return .line(line)
                }
            }
        }
    }

    /// What libedit's line handler received: nil while the line is being typed; `.some(nil)` at end of input.
    private static let received = Mutex<String??>(nil)

    private func readPlain(prompt: String) -> Input {
        writeOut(prompt)
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(STDIN_FILENO, &byte, 1)
            if count == 1 {
                if byte == 0x0A { return .line(String(decoding: bytes, as: UTF8.self)) }
                bytes.append(byte)
            } else if count < 0, errno == EINTR {
                return .interrupt
            } else {
                return bytes.isEmpty ? .end : .line(String(decoding: bytes, as: UTF8.self))
            }
        }
    }
}

/// SIGINT is blocked in every thread except the shell's input thread while it waits for the user, so Ctrl-C
/// always interrupts that wait (a read or a poll) and never lands on a pool thread.
enum Signals {
    /// Call first on the main thread (threads created later inherit the blocked mask), then on the input thread.
    static func blockEverywhere() {
        _ = skillhost_sigint_install()
        block()
    }

    /// The calling thread receives every SIGINT (those landing elsewhere are forwarded).
    static func targetCurrentThread() { skillhost_sigint_target_current_thread() }

    static func block() { change(SIG_BLOCK) }
    static func unblock() { change(SIG_UNBLOCK) }

    private static func change(_ how: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        pthread_sigmask(how, &set, nil)
    }
}
