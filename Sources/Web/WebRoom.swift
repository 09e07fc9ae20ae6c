import Foundation
import SessionUI
import SkillJSON
import Synchronization

/// The event streams open to the page (one stream may serve several tabs of a browser), and the numbering every
/// conversation's events share: a number is never used twice while `skillhost web` runs, so a tab that knows the
/// last number it showed of its conversation drops what it showed already, whatever was replayed to it.
package final class WebTabs: Sendable {
    /// How a stream is written to: false once it is gone.
    package typealias Delivery = @Sendable (String) -> Bool

    struct State {
        var streams: [Int: Delivery] = [:]
        var nextStream = 1
        var sequence = 0
    }

    let state = Mutex(State())

    /// Sends `text(number)` to every stream under the next number; returns the text and its number.
    func send(_ text: (Int) -> String) -> (text: String, number: Int) {
        state.withLock { state in
            state.sequence += 1
            let made = text(state.sequence)
            Self.deliver(Self.line(made), &state)
            return (made, state.sequence)
        }
    }

    /// Sends `text` to every stream now, numbered as nothing (a view change, a layout of the moment).
    func broadcast(_ text: String) { state.withLock { Self.deliver(Self.line(text), &$0) } }

    static func deliver(_ line: String, _ state: inout State) {
        for (id, deliver) in state.streams where !deliver(line) { state.streams.removeValue(forKey: id) }
    }

    /// One server-sent event.
    static func line(_ text: String) -> String { "data: " + text + "\n\n" }
}

/// One conversation open in the browser, for its life: its owner (the work that runs, one at a time, whichever tab
/// started it, and the questions it waits for), whether work of it is being shown, and what its tabs were sent so
/// far, for a tab that comes to it later (`sync`). Every event it sends names it (`"c"`, its key) and, unless it is
/// of the moment only, carries its number (`"s"`).
package final class WebRoom: Sendable {
    /// What tabs call it: its id in the history, or one of this process's for a conversation kept nowhere.
    package let key: String
    let owner: ConversationOwner
    private let tabs: WebTabs

    struct State {
        /// Whether work is being shown: from its start until its last event (the answer, the turn's end) was sent
        /// — after the owner is free again. Nothing else starts until then, so no tab sees an ended turn's last
        /// events land in the next one.
        var showing = false
        /// What a tab coming to it is sent: its events so far, oldest first, as sent.
        var replay: [String] = []
        var replayBytes = 0
        /// The number of the last event it sent.
        var last = 0
        /// What its last `running` event said (a tab catching up is told so; `showing` is also taken for a moment
        /// by what shows nothing, such as a choice of model).
        var running = false
        /// When a tab last used it (the session's count of uses): the least used idle one is closed first.
        var used = 0
        /// Who waits for the work shown to end (a view's call), by number.
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
        /// Waits whose time ran out before they were registered (they end at once).
        var expired: Set<Int> = []
        /// The work shown is a view's call.
        var viewWork = false
        /// Messages of the person waiting for a view's call to end: no other view's call starts before them.
        var personWaiting = 0
    }

    let state = Mutex(State())

    /// The most of the past a tab coming to it is sent (older events are dropped first).
    static let replayLimit = 8 << 20

    init(key: String, owner: ConversationOwner, tabs: WebTabs) {
        self.key = key
        self.owner = owner
        self.tabs = tabs
    }

    /// Takes the room for work of its conversation; nil while other work is shown.
    /// `forView`: for a view's call, which never goes before a message of the person's waiting for the room.
    func startShowing(forView: Bool = false) -> ConversationOwner? {
        state.withLock { state in
            guard !state.showing, !forView || state.personWaiting == 0 else { return nil }
            state.showing = true
            state.viewWork = forView
            return owner
        }
    }

    /// Whether work is being shown now.
    var isShowing: Bool { state.withLock { $0.showing } }

    /// Whether the work shown now is a view's call.
    var showsViewWork: Bool { state.withLock { $0.showing && $0.viewWork } }

    /// A message of the person's starts (`true`) or ends (`false`) waiting for a view's call to end.
    func personWaits(_ waiting: Bool) { state.withLock { $0.personWaiting += waiting ? 1 : -1 } }

    /// The work's last event was sent (or it never started): whoever waits for that is woken.
    func stopShowing() {
        let waiting = state.withLock { state in
            state.showing = false
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Waits until no work of it is shown, or `limit` passed. Another may take it first: try again.
    func waitUntilFree(limit: Duration) async {
        let id = state.withLock { state -> Int? in
            guard state.showing else { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return }
        let timer = Task { [weak self] in
            do { try await Task.sleep(for: limit) } catch { return }
            let waiter = self?.state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.expired.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    guard state.showing, state.expired.remove(id) == nil, !Task.isCancelled else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.expired.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
        timer.cancel()
        state.withLock { _ = $0.expired.remove(id) }
    }

    /// Whether nothing of it runs or waits: it may be closed (its owner retired).
    var isIdle: Bool { state.withLock { !$0.showing } && !owner.isBusy }

    /// Sends `event` to its tabs and keeps it for those that come later.
    func publish(_ event: JSONValue) {
        let text = event.jsonText
        state.withLock { state in
            send(text, &state)
            if event["type"] == "running", case .bool(let running)? = event["running"] { state.running = running }
        }
    }

    /// Sends `event` to its tabs now, keeping nothing: it is of the moment (a streaming answer's layout).
    func transient(_ event: JSONValue) { tabs.broadcast(tagged(event.jsonText, number: nil)) }

    /// Replaces what its tabs show, and what a tab coming later is sent, by `events`: a `reset`, then them — the
    /// newest of them within half the replay's limit (every stream is sent them at once).
    func show(_ events: [JSONValue]) {
        var shown: [String] = []
        var bytes = 0
        for event in events.reversed() {
            let text = event.jsonText
            bytes += text.utf8.count
            guard bytes <= Self.replayLimit / 2 else { break }
            shown.append(text)
        }
        state.withLock { state in
            state.replay = []
            state.replayBytes = 0
            for text in [WebEvent.reset().jsonText] + shown.reversed() { send(text, &state) }
        }
    }

    /// Sends an event's text to its tabs under the next number, and keeps it for those that come later. Room lock
    /// held.
    private func send(_ text: String, _ state: inout State) {
        let sent = tabs.send { number in self.tagged(text, number: number) }
        Self.keep(sent.text, &state)
        state.last = sent.number
    }

    /// What a tab showing it is sent to catch up — `{"id", "s", "events"}`: a reset, the events so far and the
    /// state now (with `view`, the window's), and the number of the last event among them (the tab drops what it
    /// receives numbered up to it).
    func sync(view: JSONValue) -> String {
        state.withLock { state in
            let now =
                [
                    WebEvent.running(state.running), WebEvent.undoable(owner.agent.canUndo),
                    WebEvent.model(owner.agent.provider.displayName),
                ].map { tagged($0.jsonText, number: nil) } + [WebEvent.view(view).jsonText]
            let events = [WebEvent.reset().jsonText] + state.replay + now
            return #"{"id":"# + JSONValue.string(key).jsonText + #","s":\#(state.last),"events":["#
                + events.joined(separator: ",") + "]}"
        }
    }

    /// Adds a stream, first sent this conversation so far (numbered, so a tab that showed it drops it), then
    /// every event of every conversation. Returns its number (`WebSession.unwatch` forgets it).
    func attach(_ deliver: @escaping WebTabs.Delivery, view: JSONValue) -> Int {
        state.withLock { state in
            // Under both locks, so no event slips between the replay and the live ones.
            tabs.state.withLock { tabs in
                _ = deliver(WebTabs.line(tagged(WebEvent.reset().jsonText, number: 0)))
                for text in state.replay { _ = deliver(WebTabs.line(text)) }
                _ = deliver(WebTabs.line(tagged(WebEvent.running(state.running).jsonText, number: state.last)))
                _ = deliver(WebTabs.line(WebEvent.view(view).jsonText))
                defer { tabs.nextStream += 1 }
                tabs.streams[tabs.nextStream] = deliver
                return tabs.nextStream
            }
        }
    }

    /// An event's text named as this conversation's (and numbered), its own members after.
    private func tagged(_ text: String, number: Int?) -> String {
        // Every event is an object with a type: its text starts with `{"`.
        #"{"c":"# + JSONValue.string(key).jsonText + (number.map { #","s":\#($0)"# } ?? "") + ","
            + text.dropFirst()
    }

    private static func keep(_ text: String, _ state: inout State) {
        state.replay.append(text)
        state.replayBytes += text.utf8.count
        while state.replayBytes > replayLimit, !state.replay.isEmpty {
            state.replayBytes -= state.replay.removeFirst().utf8.count
        }
    }
}
