import CProcess
import Dispatch
import Foundation
import JSONRPC
import Synchronization

/// The system clock's timers: one thread of the host's own sleeping until the earliest deadline, with the timers in
/// a heap under one lock.
///
/// Every call arms a deadline and almost every call cancels it a few microseconds later, so both must be cheap:
/// scheduling a timer that is not the earliest wakes nobody, and cancelling only forgets the action (a lock and a
/// dictionary removal, no system call). A Dispatch timer source per call cost two wake-ups of Dispatch's manager
/// thread (one to register the source, one to cancel it), a third of all context switches of a stream of calls.
/// Cancelled timers stay in the heap until they come due or the heap is compacted (when it holds more than twice
/// the live timers), so the heap stays within a constant factor of the live timers.
final class TimerThread: Sendable {
    /// The system clock's timers: one timer thread per CPU (at most eight), each started with its first timer. A
    /// call arms its deadline on the timers of the CPU it runs on and nearly always cancels it there, so the event
    /// threads on two CPUs do not pass one lock (and its cache line) back and forth on every call.
    static let shards: [TimerThread] = (0..<min(8, max(1, ProcessInfo.processInfo.activeProcessorCount))).map { _ in
        TimerThread()
    }

    /// The timers of the CPU the calling thread runs on (any of them when that is unknown: correct either way).
    static var local: TimerThread {
        let cpu = Int(skillhost_current_cpu())
        return shards[cpu >= 0 ? cpu % shards.count : 0]
    }

    private struct Due: Comparable {
        let deadline: UInt64
        let id: UInt64
        static func < (a: Due, b: Due) -> Bool { (a.deadline, a.id) < (b.deadline, b.id) }
    }

    private struct State {
        var heap = MinHeap<Due>()
        /// The actions of timers neither run nor cancelled.
        var live: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        /// When the thread wakes next by itself (`.max`: only when signalled); a timer due earlier must wake it.
        var sleepingUntil = UInt64.max
        var started = false
    }

    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    /// Times the thread went to sleep (tests: a thread waiting for a far deadline sleeps, it does not spin).
    private let sleeps = Atomic<Int>(0)

    var sleepCount: Int { sleeps.load(ordering: .relaxed) }

    /// A timer thread of its own (tests); the host uses `shards`. Its thread starts with the first timer.
    init() {}

    /// Timers in the heap, cancelled ones not yet dropped included.
    var heapCount: Int { state.withLock { $0.heap.count } }

    /// Runs `action` on the timer thread once `delay` passed (at once for zero or less), unless `cancel(_:)` gets
    /// the returned id first.
    func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = Self.deadline(after: delay)
        let (id, signal, start) = state.withLock { state -> (UInt64, Bool, Bool) in
            let id = state.nextID
            state.nextID += 1
            state.heap.push(Due(deadline: deadline, id: id))
            state.live[id] = action
            if state.heap.count > 2 * state.live.count + 64 {
                let live = state.live
                state.heap.removeAll { live[$0.id] == nil }
            }
            let signal = deadline < state.sleepingUntil
            if signal { state.sleepingUntil = deadline }
            let start = !state.started
            state.started = true
            return (id, signal && !start, start)
        }
        if start {
            let thread = Thread { [self] in run() }
            thread.name = "skillhost.timers"
            thread.start()
        } else if signal {
            wake.signal()
        }
        return id
    }

    /// Keeps the timer's action from running (harmless once it ran).
    func cancel(_ id: UInt64) {
        // The action is released outside the lock: what it captured may run code of its own when freed.
        let action = state.withLock { $0.live.removeValue(forKey: id) }
        _ = action
    }

    private func run() {
        while true {
            var due: [@Sendable () -> Void] = []
            let next = state.withLock { state -> UInt64 in
                let now = DispatchTime.now().uptimeNanoseconds
                while let first = state.heap.first, first.deadline <= now {
                    state.heap.popFirst()
                    if let action = state.live.removeValue(forKey: first.id) { due.append(action) }
                }
                state.sleepingUntil = state.heap.first?.deadline ?? .max
                return state.sleepingUntil
            }
            for action in due { action() }
            due.removeAll()
            sleeps.add(1, ordering: .relaxed)
            if next == .max {
                wake.wait()
            } else {
                _ = wake.wait(timeout: DispatchTime(uptimeNanoseconds: Self.wakeUp(for: next)))
            }
        }
    }

    /// When to wake up for a deadline: at it, or in at most a minute. A Dispatch wait until 2⁶² ns or later returns
    /// at once (measured: 24–59 µs, "timed out"), so a wait for a far deadline spun the thread for as long as that
    /// deadline was the earliest.
    static func wakeUp(for deadline: UInt64, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> UInt64 {
        min(deadline, now + 60_000_000_000)
    }

    /// Now plus `delay` in uptime nanoseconds, saturating (a deadline past the end of time never comes).
    private static func deadline(after delay: Duration) -> UInt64 {
        let now = DispatchTime.now().uptimeNanoseconds
        return min(now + delay.wholeNanoseconds, UInt64.max / 2)
    }
}

/// A binary min-heap.
struct MinHeap<Element: Comparable> {
    private var items: [Element] = []

    var count: Int { items.count }
    var first: Element? { items.first }

    mutating func push(_ element: Element) {
        items.append(element)
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child] < items[parent] else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    @discardableResult
    mutating func popFirst() -> Element? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let first = items.removeLast()
        siftDown(from: 0)
        return first
    }

    /// Removes the elements `shouldRemove` picks and restores the heap order (linear time).
    mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        items.removeAll(where: shouldRemove)
        var index = items.count / 2
        while index > 0 {
            index -= 1
            siftDown(from: index)
        }
    }

    private mutating func siftDown(from start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < items.count else { return }
            let right = left + 1
            let smaller = right < items.count && items[right] < items[left] ? right : left
            guard items[smaller] < items[parent] else { return }
            items.swapAt(smaller, parent)
            parent = smaller
        }
    }
}
