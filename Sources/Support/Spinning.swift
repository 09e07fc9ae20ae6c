import CProcess
import Dispatch
import Glibc

/// Bounded busy-waiting, for hand-offs between threads that usually take a few microseconds.
///
/// On the virtual two-core machines this is measured on (BENCHMARKS.md), waking a thread that sleeps costs 5–30 µs,
/// most of it the idle CPU coming back, while a short call takes 1–3 µs: a thread that waits for something due within
/// microseconds checks for it for a bounded time before it sleeps. It checks in bursts of a few hundred nanoseconds
/// (the CPU told it busy-waits) and yields the CPU between bursts (`sched_yield`), so a spinning thread never keeps
/// the thread it waits for, or any other, from running for long.
package enum Spinning {
    /// Checks `condition` until it holds or `budget` passed; true when it held. A zero budget checks once.
    @inline(__always)
    package static func until(_ budget: Duration, _ condition: () -> Bool) -> Bool {
        if condition() { return true }
        guard budget > .zero else { return false }
        let limit = budget.wholeNanoseconds
        let start = DispatchTime.now().uptimeNanoseconds
        while DispatchTime.now().uptimeNanoseconds - start < limit {
            for _ in 0..<64 {
                skillhost_cpu_relax()
                if condition() { return true }
            }
            sched_yield()
            if condition() { return true }
        }
        return false
    }

    /// Checks for up to `budget` whether `descriptor` has something to read (`poll` without blocking); true when it
    /// has.
    package static func untilReadable(_ descriptor: Int32, within budget: Duration) -> Bool {
        until(budget) {
            var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            return poll(&request, 1, 0) > 0
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds, 0 for a negative one, saturating at `UInt64.max / 2`.
    package var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        let limit = UInt64.max / 2
        guard UInt64(seconds) < limit / 1_000_000_000 else { return limit }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
