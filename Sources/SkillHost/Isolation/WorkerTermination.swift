import Glibc

/// How a worker process ended on its own (not killed by the host), once it has been reaped.
struct WorkerTermination: Sendable {
    /// The signal that killed it, or nil when it exited.
    let signal: Int32?
    let exitStatus: Int32
    /// The last non-blank line it wrote to standard error.
    let lastWords: String?
    /// Its peak resident memory, in bytes (from the kernel's accounting at reaping).
    let peakMemory: UInt64
    /// The CPU time it used, user and system, in seconds.
    let cpuSeconds: Double

    init(waitStatus status: Int32, recentErrors: [String], peakMemory: UInt64 = 0, cpuSeconds: Double = 0) {
        signal = status & 0x7f == 0 ? nil : status & 0x7f
        exitStatus = (status >> 8) & 0xff
        lastWords = recentErrors.last { !$0.allSatisfy(\.isWhitespace) }
        self.peakMemory = peakMemory
        self.cpuSeconds = cpuSeconds
    }

    /// `killed by SIGSEGV` / `exited with status 3`.
    var summary: String { signal.map { "killed by \(signalName($0))" } ?? "exited with status \(exitStatus)" }

    /// `; its last words: …` or nothing.
    var lastWordsClause: String { lastWords.map { "; its last words: \($0)" } ?? "" }

    /// `plugin "x" crashed (killed by SIGSEGV)` / `… exited with status 3 …`, plus its last words; the CPU-time and
    /// memory limits it ran under are named when its end says it ran into them.
    func explanation(plugin: String, memoryLimit: UInt64?, cpuLimit: UInt64?) -> String {
        var reason: String
        if let signal = signal {
            reason = "plugin \"\(plugin)\" crashed (\(summary))"
            // Only when the CPU time it used says so: a worker killed by SIGKILL from anywhere else (itself, the
            // OOM killer) is not said to have run over it.
            if signal == SIGXCPU || signal == SIGKILL, let limit = cpuLimit, cpuSeconds >= Double(limit) - 1 {
                reason +=
                    "; it ran over its CPU-time limit of \(limit) s (it used \(Int(cpuSeconds)) s; raise "
                    + "isolation.cpu_seconds in config.json if it needs more)"
            }
            // Careless code that runs out of address space dies on the NULL that malloc returned (or aborts).
            if let limit = memoryLimit, [SIGSEGV, SIGABRT, SIGBUS].contains(signal), peakMemory >= limit / 2 {
                reason +=
                    "; it may have run over its memory limit of \(limit >> 20) MB (it used \(peakMemory >> 20) "
                    + "MB at its peak; raise isolation.memory_mb in config.json if it needs more)"
            }
        } else if exitStatus == 70, let words = lastWords,
            words.hasPrefix("skillhost worker: ")
        {
            // The worker itself gave up, saying why.
            return "plugin \"\(plugin)\"'s worker stopped: " + words.dropFirst("skillhost worker: ".count)
        } else {
            reason = "plugin \"\(plugin)\" \(summary) (it ended its worker process)"
        }
        return reason + lastWordsClause
    }
}

/// `SIGSEGV`, `SIGABRT` … or `signal 42`.
func signalName(_ signal: Int32) -> String {
    let names: [Int32: String] = [
        SIGSEGV: "SIGSEGV", SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGILL: "SIGILL",
        SIGKILL: "SIGKILL", SIGTERM: "SIGTERM", SIGXCPU: "SIGXCPU", SIGTRAP: "SIGTRAP", SIGPIPE: "SIGPIPE",
    ]
    return names[signal] ?? "signal \(signal)"
}
