import CProcess
import Synchronization

/// Keeps a plugin's processes from outliving their worker or the host.
///
/// A plugin can fork a child that leaves the worker's process group with `setsid()`, so killing the group misses
/// it. Workers are child subreapers: such orphans become the worker's children, and a worker that ends kills all of
/// its children. A worker that dies abruptly hands its orphans to the next subreaper up — the host, when it made
/// itself one (`adoptOrphans`, which the `skillhost` program does) — and the host kills what it adopted from other
/// sessions every time a worker ends and when it shuts down.
package enum ProcessTree {
    /// Worker processes alive now (never killed as orphans).
    private static let workers = Mutex<Set<pid_t>>([])

    /// Makes this process a child subreaper. Call once, early, in a program that owns its children.
    package static func adoptOrphans() { _ = skillhost_become_subreaper() }

    static func started(_ worker: pid_t) { workers.withLock { _ = $0.insert(worker) } }

    static func ended(_ worker: pid_t) { workers.withLock { _ = $0.remove(worker) } }

    /// Kills the children this process adopted from other sessions (orphans of plugins), except workers.
    @discardableResult
    static func killAdoptedOrphans() -> Int {
        workers.withLock { workers in
            let keep = Array(workers)
            return Int(keep.withUnsafeBufferPointer { skillhost_kill_adopted($0.baseAddress, Int32($0.count), 1) })
        }
    }

    /// In a worker: kills every child it has (what the plugin started, and the orphans it adopted).
    static func killAllChildren() { _ = skillhost_kill_adopted(nil, 0, 0) }
}
