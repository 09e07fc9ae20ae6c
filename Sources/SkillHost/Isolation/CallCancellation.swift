import Synchronization

/// The cancellation state of one call, shared by the caller, the plugin (`is_cancelled`) and — in process
/// mode — the code that forwards the cancellation to the worker.
final class CallCancellation: Sendable {
    private let flag = Atomic<Bool>(false)
    private let handler = Mutex<(@Sendable () -> Void)?>(nil)

    var isCancelled: Bool { flag.load(ordering: .acquiring) }

    /// Sets the flag (once) and runs the handler, if one is installed.
    func cancel() {
        guard flag.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return }
        handler.withLock { box in
            let current = box
            box = nil
            return current
        }?()
    }

    /// Installs what runs on cancellation; runs it at once when the call is already cancelled.
    func onCancel(_ action: @escaping @Sendable () -> Void) {
        handler.withLock { $0 = action }
        if isCancelled {
            handler.withLock { box in
                let current = box
                box = nil
                return current
            }?()
        }
    }

    /// Removes the handler (the call is over).
    func clearHandler() { handler.withLock { $0 = nil } }
}
