import Agent
import CTerminal
import Foundation
import History
import SessionUI
import SkillFolders
import SkillHost
import SkillJSON
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Everything the shell is assembled from (the executable builds it; the shell owns none of it).
package struct ShellEnvironment: Sendable {
    package let registry: SkillRegistry
    package let store: HistoryStore?
    package let terminal: Terminal
    /// Folders to rescan on `/reload`, with their file filters.
    package let folders: [(path: String, include: @Sendable (String) -> Bool)]
    /// Makes the provider; the argument overrides the model name (`/model <name>`).
    package let provider: @Sendable (String?) throws -> any ModelProvider
    package let configuration: AgentConfiguration
    package let historyFile: String
    package let banner: String
    /// With `"record"` in the configuration: a new record's path for each session started (or why there is none).
    package var autoRecord: (@Sendable () -> Result<String, ShellError>)?
    /// What a record never holds (the API key).
    package var secrets: [String?] = []
    /// The Agent Skills folders (`/skills`, `/skill NAME`, `/use NAME`).
    package var skillFolders: SkillFolderTools?

    package init(
        registry: SkillRegistry, store: HistoryStore?, terminal: Terminal,
        folders: [(path: String, include: @Sendable (String) -> Bool)],
        provider: @escaping @Sendable (String?) throws -> any ModelProvider, configuration: AgentConfiguration,
        historyFile: String, banner: String
    ) {
        self.registry = registry
        self.store = store
        self.terminal = terminal
        self.folders = folders
        self.provider = provider
        self.configuration = configuration
        self.historyFile = historyFile
        self.banner = banner
    }
}

/// The interactive agent shell: reads lines, runs turns and slash commands, renders everything, persists it.
///
/// Runs on a thread of its own (`run()` blocks). Turns run as tasks on the main actor (rendering) while this thread
/// waits for Ctrl-C, confirmations and the end of the turn.
///
/// The conversation itself — its turns, questions, undo, rewind, history — is its `ConversationOwner`'s; the shell
/// renders what the owner's streams report, asks the questions at the terminal and turns Ctrl-C into `stop()`.
///
/// - Important: `@unchecked Sendable` is safe because the mutable properties (`owner`, `modelName`) are used only on
///   the shell's own thread; what tasks share with it lives in `shared`, behind a mutex, and wake-ups go through a
///   pipe.
package final class Shell: @unchecked Sendable {
    struct Shared {
        /// Questions the owner's stream asked, for the shell's thread to put to the person, oldest first.
        var questions: [ConfirmationRequest] = []
        var notices: [String] = []
    }

    let environment: ShellEnvironment
    let model: SessionViewModel
    let editor: LineEditor
    /// The conversation shown.
    var owner: ConversationOwner
    var session: AgentSession { owner.agent }
    var sessionID: String? { owner.id }
    var modelName: String?
    let shared = Mutex(Shared())
    let notify: (read: Int32, write: Int32)
    /// The record being written (`/record`, or `"record"` in the configuration), if any.
    let recording = RecordSlot()
    private var changes: Task<Void, Never>?

    var registry: SkillRegistry { environment.registry }
    var terminal: Terminal { environment.terminal }
    var store: HistoryStore? { environment.store }
    /// Every write to the history goes through here: none is lost without a word.
    let journal: HistoryJournal?

    package init(environment: ShellEnvironment, model: SessionViewModel, resume: String?) throws(ShellError) {
        self.environment = environment
        self.model = model
        let terminal = environment.terminal
        journal = environment.store.map { store in
            HistoryJournal(store: store) { notice in
                writeOut(Table.fit(terminal.yellow("! ") + notice, width: terminal.width) + "\n")
            }
        }
        editor = LineEditor(historyFile: environment.historyFile)
        var fds: [Int32] = [-1, -1]
        _ = pipe(&fds)
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        notify = (fds[0], fds[1])
        owner = ConversationOwner(
            nil,
            setup: ConversationSetup(
                skills: environment.registry, provider: OfflineRouter(), configuration: AgentConfiguration(),
                person: false))
        var configuration = environment.configuration
        if let disabled = try? store?.setting("disabled_skills"), let ids = try? JSONValue(parsing: disabled).arrayValue
        {
            configuration.disabledSkills.formUnion(ids.compactMap(\.stringValue))
        }
        if let resume {
            try startSession(resuming: resume, configuration: configuration)
        } else {
            try startSession(resuming: nil, configuration: configuration)
        }
    }

    /// The provider for `model` (nil: the configured one).
    func makeProvider(_ model: String?) throws(ShellError) -> any ModelProvider {
        do { return try environment.provider(model) } catch {
            throw ShellError("\(error)")
        }
    }

    /// Starts a new stored session, or continues `id` with its full context.
    func startSession(resuming id: String?, configuration: AgentConfiguration) throws(ShellError) {
        let provider = try makeProvider(modelName)
        var stored: StoredConversation?
        if let id {
            guard let journal else { throw ShellError("there is no history to resume from") }
            // What a killed turn left behind (results, the streamed draft) becomes part of the record.
            do { stored = try StoredConversation(resuming: id, journal: journal) } catch {
                throw ShellError(error.description)
            }
        } else {
            stored = journal.map { StoredConversation(journal: $0) }
        }
        owner = ConversationOwner(
            stored,
            setup: ConversationSetup(
                skills: registry, provider: provider, configuration: configuration, person: true,
                recording: recording))
        if let problem = owner.problem { say(terminal.yellow("! ") + InertText.make(problem) + "\n") }
        owner.begin()
        sessionStarted()
    }

    // MARK: The loop

    /// Runs until /exit or Ctrl-D. Returns the exit status.
    package func run() -> Int32 {
        Signals.blockEverywhere()
        Signals.targetCurrentThread()
        // The banner never wraps mid-word: its parts break at spaces to fit the terminal.
        say(environment.banner + "\n")
        if let id = sessionID, session.conversation.messages.count > 1 {
            say(terminal.dim("Resumed session \(id):") + "\n")
            printHistory()
        }
        let stream = registry.changes()
        changes = Task { [weak self] in
            for await change in stream {
                // The skill folders' tools change with the folders: their watcher says what changed, per folder.
                if change.plugin == SkillFolderTools.source { continue }
                let changed = self?.registry.definitionChanges(change).flatMap(\.lines) ?? []
                self?.shared.withLock { $0.notices += [change.line] + changed }
                self?.wake()  // shown at once when the prompt is waiting
            }
        }
        defer { changes?.cancel() }
        defer { if let line = stopRecording() { say(InertText.make(line) + "\n") } }
        defer {
            if let journal, journal.unsaved > 0, !journal.retry() {
                say(
                    terminal.yellow("! ") + "history: \(journal.unsaved) entries could not be saved and are lost now "
                        + "that the shell ends; check \(journal.store.path)\n")
            }
        }
        while true {
            journal?.retry()
            drain(notify.read)
            for notice in takeNotices() { say(notice + "\n") }
            // ASCII only: libedit measures the prompt, and escape sequences or multibyte characters confuse it.
            switch editor.read(prompt: "> ", wake: notify.read, notices: takeNotices) {
            case .end:
                say("\n")
                return 0
            case .interrupt:
                say(
                    "\n" + terminal.dim("(Ctrl-C stops a running turn; press Ctrl-D or type /exit to quit)") + "\n")
            case .line(let line):
                let text = line.trimmingCharacters(in: .whitespacesAndNewlines)
                if text.isEmpty { continue }
                if text.hasPrefix("/") {
                    if case .exit = perform(command: text) { return 0 }
                } else {
                    converse(text)
                }
            }
        }
    }

    /// Lines to show at the prompt (at once while it waits): what a watcher saw change.
    package func post(_ lines: [String]) {
        shared.withLock { $0.notices += lines }
        wake()
    }

    /// The hot-reload notices not shown yet, styled.
    func takeNotices() -> [String] {
        shared.withLock { state -> [String] in
            defer { state.notices = [] }
            return state.notices
        }.map { terminal.dim(InertText.make($0)) }
    }

    /// Runs a turn and, when the step limit stops it, offers to continue.
    func converse(_ text: String) {
        // A plugin that arrived while the line was typed is announced before this turn's cards.
        for notice in takeNotices() { say(notice + "\n") }
        var reason = runTurn(start: { owner throws(ConversationOwner.Busy) in try owner.send(text) })
        while true {
            if case .stepLimitReached(let limit) = reason {
                guard
                    case .line(let answer) = editor.read(
                        prompt: "The step limit (\(limit)) stopped this turn. Continue? [y/N] "),
                    answer.lowercased().hasPrefix("y")
                else { return }
            } else if case .budgetReached(let reached) = reason {
                // y: go on (this turn); a: and do not stop for this budget again this session.
                guard case .line(let answer) = editor.read(prompt: "\(reached.sentence) — go on? [y/n/a] ") else {
                    return
                }
                let choice = answer.lowercased()
                guard choice.hasPrefix("y") || choice.hasPrefix("a") else { return }
                session.waive(reached, forSession: choice.hasPrefix("a"))
            } else {
                break
            }
            reason = runTurn(start: { owner throws(ConversationOwner.Busy) in try owner.continueTurn() })
        }
        if case .modelError(let message) = reason { say(terminal.red("✗ ") + InertText.make(message) + "\n") }
        if case .repeatedCall = reason { say(terminal.yellow(reason.explanation) + "\n") }
    }

    /// Runs one turn to its end: rendering on the main actor, while this thread waits for Ctrl-C (which stops the
    /// turn), the questions it asks (which it puts to the person), and the end of the turn.
    func runTurn(
        start: (ConversationOwner) throws(ConversationOwner.Busy) -> AsyncStream<ConversationEvent>
    ) -> FinishReason {
        // The shell runs one thing at a time: its owner is never busy here.
        guard let stream = try? start(owner) else { return .cancelled }
        let session = self.session
        let model = self.model
        let terminal = self.terminal
        let task = Task { @MainActor [weak self] () -> FinishReason in
            // The offline router answers in plain lines by design; models answer in markdown.
            let markdown = session.provider.answersInMarkdown
            let renderer = TurnRenderer(terminal: terminal, model: model, answerOnly: false, markdown: markdown)
            model.begin()
            let ticker = Task { @MainActor in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                    renderer.tick()
                }
            }
            var reason = FinishReason.cancelled
            for await event in stream {
                switch event {
                case .agent(let event):
                    renderer.handle(event)
                    if case .finished(let finish) = event { reason = finish }
                case .asked(let request):
                    // The cards so far are drawn before the question goes under them.
                    renderer.handle(.confirmationNeeded(request))
                    self?.put(request)
                case .settled(let id): self?.withdraw(id)
                default: break
                }
            }
            ticker.cancel()
            model.show(session.conversation)
            return reason
        }
        return waitFor { await task.value }
    }

    /// Waits on the shell's thread until `isOver` holds, woken by `wake()`: each Ctrl-C meanwhile calls `interrupted`
    /// (the terminal echoes no "^C" into the cards; a Ctrl-C pressed at the prompt before was the prompt's, and one
    /// pressed meanwhile never reaches the next prompt), and `each` runs after every wake-up. What a turn and a
    /// `/call` wait with.
    func waitInterruptibly(until isOver: () -> Bool, interrupted: () -> Void, each: () -> Void) {
        let signals = skillhost_sigint_install()
        drain(signals)
        _ = skillhost_sigint_take()
        let echoedControl = skillhost_tty_echo_control(STDIN_FILENO, 0)
        defer {
            if echoedControl >= 0 { _ = skillhost_tty_echo_control(STDIN_FILENO, echoedControl) }
            drain(signals)
            _ = skillhost_sigint_take()
        }
        while !isOver() {
            var fds = [
                pollfd(fd: signals, events: Int16(POLLIN), revents: 0),
                pollfd(fd: notify.read, events: Int16(POLLIN), revents: 0),
            ]
            Signals.unblock()
            _ = poll(&fds, 2, 250)
            Signals.block()
            if fds[0].revents != 0 || skillhost_sigint_take() > 0 {
                drain(signals)
                _ = skillhost_sigint_take()
                interrupted()
            }
            if fds[1].revents != 0 { drain(notify.read) }
            each()
        }
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(notify.write, &byte, 1)
    }

    func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, 0) > 0, read(fd, &buffer, buffer.count) > 0 {}
    }

    // MARK: Output helpers

    /// Writes lines the shell composes itself, fitted to the terminal's width: broken at spaces, never mid-word
    /// (`Table.fit`). Cards and the line editor fit themselves.
    func say(_ text: String) { writeOut(Table.fit(text, width: terminal.width)) }

    /// `say` for text with no styling of the shell's that holds strangers' words (titles, descriptions, results,
    /// a model's text, the plugins' state): made inert first.
    func tell(_ text: String) { say(InertText.make(text)) }

    func printHistory() {
        for message in session.conversation.messages {
            switch message.role {
            case .system:
                // What the person did outside a turn (/undo); the rest (the system prompt) is not shown.
                if message.content.hasPrefix("[undo] ") {
                    say(terminal.dim("  ↶ " + InertText.make(String(message.content.dropFirst(7)))) + "\n")
                } else if message.content.hasPrefix("[the person activated skill "),
                    let first = message.content.split(separator: "\n").first
                {
                    say(terminal.dim("  " + InertText.make(String(first))) + "\n")
                }
            case .user: say(terminal.bold("> ") + InertText.make(message.content) + "\n")
            case .assistant:
                if !message.content.isEmpty { tell(message.content + "\n") }
                for call in message.toolCalls {
                    let shown = InertText.make("\(call.name)(\(SessionViewModel.arguments(call.arguments)))")
                    say(terminal.dim("  ⟳ " + shown) + "\n")
                }
            case .tool:
                let symbol = message.isError ? terminal.red("✗") : terminal.green("✓")
                say("  \(symbol) " + TurnRenderer.shorten(message.content, 100) + "\n")
            }
        }
    }
}

/// Blocks SIGINT in the calling thread; call it on the main thread before starting anything, so threads created
/// afterwards never take the shell's Ctrl-C.
package func blockInterruptsForShell() { Signals.blockEverywhere() }

/// A failure that keeps the shell from starting or from doing what was asked.
package struct ShellError: Error, CustomStringConvertible, Sendable {
    package let message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}
