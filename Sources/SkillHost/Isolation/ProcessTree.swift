import CProcess
import Dispatch
import Synchronization

/// Keeps what a confined program starts from outliving it or the host.
///
/// A plugin, a skill's script, a hook or an MCP server can start a child that leaves its process group
/// (`setpgid(0, 0)`, `setsid()`), so killing the group misses it. Workers are child subreapers: such orphans become
/// the worker's children, and a worker that ends kills all of its children. Everything else — a worker that died
/// abruptly, a script or server that ended — hands its orphans to the next subreaper up: the host, when it made
/// itself one (`adoptOrphans`, which the `skillhost` program does). The host records every child it starts (in
/// CProcess, as it starts it), so any other child is an orphan, whatever session or group it chose: the host kills
/// those when a worker ends, shortly after a script, hook or server it started ends (`reaped`), and when it shuts
/// down. A host killed with SIGKILL cannot; its orphans go to init.
package enum ProcessTree {
    /// Whether a sweep is asked for and not yet begun (`reaped` coalesces into one).
    private static let sweepAsked = Atomic<Bool>(false)
    private static let sweeper = DispatchQueue(label: "skillhost.orphans")

    /// Makes this process a child subreaper. Call once, early, in a program that owns its children.
    package static func adoptOrphans() { _ = skillhost_become_subreaper() }

    /// `pid`, a child started through CProcess's spawn functions (which record it), was reaped by its owner.
    static func ended(_ pid: pid_t) { skillhost_child_ended(pid) }

    /// `pid`, a program the host started (a script, a hook, an MCP server), was reaped: forgets it, and soon kills
    /// what it left behind, off the caller's thread (a sweep reads every thread's children, some 0.1 ms).
    package static func reaped(_ pid: pid_t) {
        skillhost_child_ended(pid)
        guard !sweepAsked.exchange(true, ordering: .acquiringAndReleasing) else { return }
        sweeper.async {
            sweepAsked.store(false, ordering: .releasing)
            killAdoptedOrphans()
        }
    }

    /// Kills the children this process adopted (orphans of what it started), round after round until none is left.
    @discardableResult
    package static func killAdoptedOrphans() -> Int { Int(skillhost_kill_adopted(0)) }

    /// In a worker: kills every child it has (what the plugin started, and the orphans it adopted).
    static func killAllChildren() { _ = skillhost_kill_adopted(1) }
}
