import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a watched folder reports, after debouncing.
enum WatchEvent: Sendable, Equatable {
    /// A file was completely written or moved in; `path` is its full path.
    case changed(String)
    /// A file was deleted or moved out.
    case removed(String)
    /// The folder's contents must be re-read (queue overflow, or the folder was moved, deleted or recreated).
    case rescan(String)
}

/// Watches folders for finished plugin files on a thread of its own and reports debounced events.
///
/// Linux: inotify. Loads on `IN_CLOSE_WRITE`/`IN_MOVED_TO`, removals on `IN_DELETE`/`IN_MOVED_FROM` — never on
/// `IN_CREATE`, when the file is still being written — and a rescan on `IN_Q_OVERFLOW`, `IN_DELETE_SELF` and
/// `IN_MOVE_SELF`. A folder that disappears is looked for every `recheckInterval` and watched again (with a
/// rescan) when it comes back. A file's first event is delivered at once; events for it within `debounce` of the
/// last are a burst, which collapses into its last event once the file has been quiet for `debounce`.
/// Other platforms: a Dispatch file-system source per folder that triggers a rescan on every change.
final class FolderWatcher: Sendable {
    private struct State {
        var pending: Debounce
        var stopped = false
    }

    let folders: [String]
    let recheckInterval: Duration
    private let clock: any HostClock
    private let handler: @Sendable (WatchEvent) -> Void
    private let state: Mutex<State>
    private let wake: (read: Int32, write: Int32)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts watching. `handler` runs on the watcher's thread, one event at a time. `clock` times the debounce.
    init(
        folders: [String], debounce: Duration = .milliseconds(30), recheckInterval: Duration = .milliseconds(200),
        clock: any HostClock = SystemClock(), handler: @escaping @Sendable (WatchEvent) -> Void
    ) {
        self.folders = folders
        self.recheckInterval = recheckInterval
        self.clock = clock
        self.handler = handler
        state = Mutex(State(pending: Debounce(quietPeriod: debounce)))
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }  // not inherited by plugins' child processes
        wake = (fds[0], fds[1])
        // The watches exist before init returns: a file dropped in right afterwards must not be missed.
        let setup = Self.setUp(folders)
        let thread = Thread { [self] in
            self.run(setup)
            self.finished.signal()
        }
        thread.name = "skillhost.watch"
        thread.start()
    }

    /// Stops the thread and waits for it; no event is delivered afterwards.
    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
        finished.wait()
        close(wake.read)
        close(wake.write)
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let components = duration.components
        return Int32(
            clamping: max(0, components.seconds) * 1000 + max(0, components.attoseconds) / 1_000_000_000_000_000)
    }

    /// Records an event; a later event for the same file replaces an earlier one and restarts its quiet period.
    private func enqueue(_ event: WatchEvent, key: String) {
        let now = clock.now
        state.withLock { $0.pending.record(event, key: key, at: now) }
    }

    /// Delivers every event whose quiet period is over. Returns milliseconds until the next one is due (or -1).
    private func flushDue() -> Int32 {
        let (due, next) = state.withLock { $0.pending.takeDue(at: clock.now) }
        for event in due where !isStopped { handler(event) }
        guard let next else { return -1 }
        return Self.milliseconds(next) + 1
    }

    #if os(Linux)
        /// The inotify descriptor and the watches made before the thread starts.
        struct Setup: Sendable {
            let fd: Int32
            let watches: [Int32: String]
            let missing: Set<String>
            /// What each folder reached through a symbolic link named when it was watched (device, inode).
            let linked: [String: Identity]
        }

        struct Identity: Sendable, Equatable {
            let device: UInt64
            let inode: UInt64
        }

        /// The folder's device and inode (following links), if it exists.
        static func identity(_ folder: String) -> Identity? {
            var status = stat()
            guard stat(folder, &status) == 0 else { return nil }
            return Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        }

        /// The identity of a folder reached through a symbolic link (nil for a real path).
        static func linkIdentity(_ folder: String) -> Identity? {
            guard let resolved = realpath(folder, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved) != folder ? identity(folder) : nil
        }

        static let mask = UInt32(
            IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

        static func setUp(_ folders: [String]) -> Setup {
            let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
            var watches: [Int32: String] = [:]
            var missing: Set<String> = []
            var linked: [String: Identity] = [:]
            for folder in folders {
                let descriptor = fd >= 0 ? inotify_add_watch(fd, folder, mask) : -1
                if descriptor >= 0 { watches[descriptor] = folder } else { missing.insert(folder) }
                // Noted here, with the watch, not when the thread starts: on a busy machine the link can be
                // replaced before then, and the thread would take the new folder for the one it watches.
                if descriptor >= 0, let id = linkIdentity(folder) { linked[folder] = id }
            }
            return Setup(fd: fd, watches: watches, missing: missing, linked: linked)
        }

        private func run(_ setup: Setup) {
            let fd = setup.fd
            guard fd >= 0 else { return }
            defer { close(fd) }
            var watches = setup.watches
            var missing = setup.missing
            // A folder reached through a symbolic link is watched where the link pointed when the watch was made;
            // if the link (or the folder at that path) is replaced, inotify says nothing, so such paths are checked
            // every recheck interval and watched again when what they name changed.
            var linked = setup.linked
            func watch(_ folder: String) -> Bool {
                let descriptor = inotify_add_watch(fd, folder, Self.mask)
                guard descriptor >= 0 else { return false }
                watches[descriptor] = folder
                if let id = Self.linkIdentity(folder) { linked[folder] = id }
                return true
            }

            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            let recheck = Self.milliseconds(recheckInterval)
            var lastRecheck = clock.now
            while !isStopped {
                let untilDue = flushDue()
                var timeout = untilDue
                if !missing.isEmpty || !linked.isEmpty { timeout = timeout < 0 ? recheck : min(timeout, recheck) }
                var fds = [
                    pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                ]
                _ = poll(&fds, 2, timeout)
                if fds[1].revents != 0 || isStopped { break }

                if !linked.isEmpty, clock.now - lastRecheck >= recheckInterval {
                    for (folder, id) in linked {
                        guard let now = Self.identity(folder), now == id else {
                            // What the path names changed: unload what came from the old folder, watch the new one.
                            linked[folder] = nil
                            for (descriptor, watched) in watches where watched == folder {
                                inotify_rm_watch(fd, descriptor)
                                watches[descriptor] = nil
                            }
                            if !watch(folder) { missing.insert(folder) }
                            enqueue(.rescan(folder), key: folder)
                            continue
                        }
                    }
                }
                if (!missing.isEmpty || !linked.isEmpty), clock.now - lastRecheck >= recheckInterval {
                    lastRecheck = clock.now
                    for folder in missing where watch(folder) {
                        missing.remove(folder)
                        enqueue(.rescan(folder), key: folder)
                    }
                }
                guard fds[0].revents != 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { continue }
                var offset = 0
                while offset + 16 <= count {
                    let (descriptor, eventMask, nameLength) = buffer.withUnsafeBytes { raw in
                        (
                            raw.load(fromByteOffset: offset, as: Int32.self),
                            raw.load(fromByteOffset: offset + 4, as: UInt32.self),
                            Int(raw.load(fromByteOffset: offset + 12, as: UInt32.self))
                        )
                    }
                    let nameBytes = buffer[(offset + 16)..<min(count, offset + 16 + nameLength)]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    offset += 16 + nameLength
                    if eventMask & UInt32(IN_Q_OVERFLOW) != 0 {
                        for folder in watches.values { enqueue(.rescan(folder), key: folder) }
                        continue
                    }
                    guard let folder = watches[descriptor] else { continue }
                    if eventMask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) != 0 {
                        // The folder is gone (or moved away): drop the watch, unload its plugins, look for it again.
                        inotify_rm_watch(fd, descriptor)
                        watches[descriptor] = nil
                        missing.insert(folder)
                        lastRecheck = clock.now
                        enqueue(.rescan(folder), key: folder)
                        continue
                    }
                    guard !name.isEmpty, eventMask & UInt32(IN_ISDIR) == 0 else { continue }
                    let path = folder + "/" + name
                    if eventMask & UInt32(IN_CLOSE_WRITE | IN_MOVED_TO) != 0 {
                        enqueue(.changed(path), key: path)
                    } else if eventMask & UInt32(IN_DELETE | IN_MOVED_FROM) != 0 {
                        enqueue(.removed(path), key: path)
                    }
                }
            }
        }
    #else
        struct Setup: Sendable {}

        static func setUp(_ folders: [String]) -> Setup { Setup() }

        private func run(_ setup: Setup) {
            // Fallback for platforms without inotify: a Dispatch source per folder turns any change into a
            // debounced rescan.
            let queue = DispatchQueue(label: "skillhost.watch.sources")
            var sources: [DispatchSourceFileSystemObject] = []
            for folder in folders {
                let descriptor = open(folder, O_EVTONLY)
                guard descriptor >= 0 else { continue }
                let source = DispatchSource.makeFileSystemObjectSource(
                    fileDescriptor: descriptor, eventMask: [.write, .delete, .rename], queue: queue)
                source.setEventHandler { [weak self] in self?.enqueueRescan(folder) }
                source.setCancelHandler { close(descriptor) }
                source.resume()
                sources.append(source)
            }
            while !isStopped {
                let untilDue = flushDue()
                var fds = [pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
                _ = poll(&fds, 1, untilDue < 0 ? Self.milliseconds(recheckInterval) : untilDue)
                if fds[0].revents != 0 { break }
            }
            sources.forEach { $0.cancel() }
        }

        private func enqueueRescan(_ folder: String) { enqueue(.rescan(folder), key: folder) }
    #endif
}
