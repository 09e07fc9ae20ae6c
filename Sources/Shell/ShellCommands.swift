import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON
import Synchronization

/// The slash commands.
extension Shell {
    enum CommandResult {
        case done
        case exit
    }

    static let commands: [(name: String, usage: String, help: String)] = [
        ("help", "/help", "this list"),
        ("skills", "/skills [filter]", "the skills and skill folders, where they come from, whether enabled"),
        ("skill", "/skill <id>", "one skill (description, risk, schema) or skill folder (front matter, files)"),
        ("use", "/use <skill folder>", "put a skill folder's instructions into the conversation now"),
        ("call", "/call <id> <json>", "run a skill directly, without the model"),
        ("enable", "/enable <id>", "offer a disabled skill to the model again (remembered)"),
        ("disable", "/disable <id>", "never offer a skill to the model (remembered)"),
        ("reload", "/reload", "rescan the plugins folders now"),
        ("model", "/model [name]", "show the model, or switch to another model name"),
        ("new", "/new", "start a new session"),
        ("sessions", "/sessions", "list saved sessions"),
        ("resume", "/resume <id>", "continue a saved session"),
        ("history", "/history", "this session's conversation"),
        ("trace", "/trace", "the last turn: steps, timings, sizes, tokens"),
        ("state", "/state", "the plugins' state the model was last shown"),
        ("undo", "/undo", "reverse the last change a mutating skill made"),
        ("usage", "/usage", "what this turn and this session used, against their budgets"),
        ("rewind", "/rewind [N]", "go back to before your message N, undoing the changes made since"),
        ("record", "/record [file|stop]", "write this session to a .skillrec (skillhost replay runs it again)"),
        ("clear", "/clear", "clear the screen"),
        ("exit", "/exit", "quit (Ctrl-D too)"),
    ]

    func perform(command line: String) -> CommandResult {
        let parts = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
        let name = parts.first ?? ""
        let argument = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
        switch name {
        case "help":
            for command in Self.commands {
                say(
                    "  " + command.usage.padding(toLength: 20, withPad: " ", startingAt: 0) + terminal.dim(command.help)
                        + "\n")
            }
            say(terminal.dim("  Anything else is sent to the model. Ctrl-C stops a turn.") + "\n")
        case "skills":
            listSkills(filter: argument)
            listSkillFolders(filter: argument)
        case "skill":
            if registry.skill(argument) == nil, skillFolders?.scan.skill(argument) != nil {
                showSkillFolder(argument)
            } else {
                showSkill(argument)
            }
        case "use": use(argument)
        case "call": callDirectly(argument)
        case "enable", "disable": toggle(argument, enabled: name == "enable")
        case "reload":
            for folder in environment.folders { registry.rescan(folder: folder.path, include: folder.include) }
            say("Reloaded: \(registry.skills.count) skills from \(registry.plugins.count) plugins.\n")
        case "model": switchModel(argument)
        case "new":
            do {
                try startSession(resuming: nil, configuration: currentConfiguration)
                say("New session\(sessionID.map { " \($0)" } ?? "").\n")
            } catch { say(terminal.red("✗ ") + InertText.make(error.description) + "\n") }
        case "sessions": listSessions()
        case "resume":
            guard !argument.isEmpty else {
                say("Usage: /resume <id> (see /sessions)\n")
                return .done
            }
            do {
                try startSession(resuming: argument, configuration: currentConfiguration)
                say(terminal.dim("Resumed session \(argument):") + "\n")
                printHistory()
            } catch { say(terminal.red("✗ ") + InertText.make(error.description) + "\n") }
        case "history": printHistory()
        case "trace": tell(owner.trace.report())
        case "state":
            tell(
                (session.lastStateMessage
                    ?? "No plugin state has been sent to the model yet: it goes with each request, for the plugins "
                    + "that describe their state (notes does).") + "\n")
        case "undo": undo()
        case "usage": say(Self.usage(session))
        case "rewind": rewind(argument)
        case "record": record(argument)
        case "clear": writeOut(terminal.isTTY ? "\u{1B}[2J\u{1B}[H" : "")
        case "exit", "quit": return .exit
        default:
            let suggestion = EditDistance.closest(to: name, among: Self.commands.map(\.name))
            say(
                "Unknown command /\(name)"
                    + (suggestion.map { " — did you mean /\($0)?" } ?? "; /help lists the commands")
                    + "\n")
        }
        return .done
    }

    var currentConfiguration: AgentConfiguration {
        var configuration = session.configuration
        configuration.disabledSkills = session.disabledSkills
        return configuration
    }

    private func listSkills(filter: String) {
        let disabled = session.disabledSkills
        let skills = registry.skills.filter {
            filter.isEmpty || $0.id.contains(filter.lowercased())
                || $0.description.lowercased().contains(filter.lowercased())
        }
        guard !skills.isEmpty else {
            tell("No skill matches \"\(filter)\".\n")
            return
        }
        // Aligned like `skillhost list`, shortened with … to the terminal's width.
        // Below 100 columns the plugin column gives its room to the arguments (`/skill <id>` names the plugin).
        let wide = terminal.width >= 100
        let rows = skills.map { skill in
            [
                skill.id + (disabled.contains(skill.id) ? " (disabled)" : ""), skill.title, skill.risk.rawValue,
            ] + (wide ? ["\(skill.plugin) \(skill.pluginVersion)"] : []) + [skill.argumentSummary]
        }
        let header = ["SKILL", "TITLE", "RISK"] + (wide ? ["PLUGIN"] : []) + ["ARGUMENTS"]
        let table = Table.render(header: header, rows: rows, width: terminal.width - 2)
        for line in table.split(separator: "\n") { say("  " + line + "\n") }
    }

    private func showSkill(_ id: String) {
        guard let skill = registry.skill(id) else {
            let suggestion = EditDistance.closest(to: id, among: registry.skills.map(\.id))
            tell("No skill \"\(id)\"" + (suggestion.map { " — did you mean \($0)?" } ?? "") + "\n")
            return
        }
        say(terminal.bold(InertText.make(skill.id)) + InertText.make(" — \(skill.title)\n  \(skill.description)\n"))
        let flags = skill.flags.names.isEmpty ? "" : ", " + skill.flags.names.joined(separator: ", ")
        tell(
            "  risk: \(skill.risk.rawValue)\(flags) · plugin \(skill.plugin) \(skill.pluginVersion) (\(skill.file))\n")
        if session.disabledSkills.contains(skill.id) {
            tell("  disabled (/enable \(skill.id) to offer it again)\n")
        }
        if let plan = skill.kind.compositePlan {
            say("  composite skill, \(plan.lines.count) step\(plan.lines.count == 1 ? "" : "s"):\n")
            for line in plan.lines { tell("    \(line)\n") }
            if !plan.missing.isEmpty {
                tell("  not registered: \(plan.missing.joined(separator: ", ")) (it fails until they are)\n")
            }
        }
        for line in skill.inputSchema.prettyJSONText.split(separator: "\n") { tell("  \(line)\n") }
    }

    private func callDirectly(_ argument: String) {
        let parts = argument.split(separator: " ", maxSplits: 1).map(String.init)
        guard let id = parts.first else {
            say("Usage: /call <id> <json arguments>\n")
            return
        }
        let arguments = parts.count > 1 ? parts[1] : "{}"
        // One card, drawn and finished in place like the calls of a turn.
        var card = SessionViewModel.ToolCard(
            id: "call", skill: id, arguments: SessionViewModel.arguments(arguments), started: .now)
        writeOut(TurnRenderer.render(card, terminal: terminal, frame: nil) + (terminal.isTTY ? "" : "\n"))
        // The registry's policy applies to /call as to the model's calls: a deny wins; what needs confirming is
        // asked here, on the shell's thread, under the card drawn so far. /undo reverses it as it does a call of
        // the model's.
        let invocation = SkillInvocation(skill: id, argumentText: arguments)
        guard let stream = try? owner.call(invocation, id: "call") else { return }
        let ended = Mutex<SkillOutcome?>(nil)
        follow(stream) { event in
            if case .called(let outcome) = event { ended.withLock { $0 = outcome } }
        }
        let outcome = ended.withLock { $0 } ?? SkillOutcome(.failure(.cancelledByTheUser))
        card.duration = outcome.duration
        switch outcome.ending {
        case .success(let result): card.state = .succeeded(result.displayText)
        case .failure(let failure) where failure.code == .cancelled: card.state = .cancelled
        case .failure(let failure): card.state = .failed(failure)
        }
        writeOut(terminal.clearLine + TurnRenderer.render(card, terminal: terminal, frame: nil) + "\n")
    }

    private func toggle(_ id: String, enabled: Bool) {
        guard registry.skill(id) != nil else {
            tell("No skill \"\(id)\"\n")
            return
        }
        if enabled, registry.configuration.disabledSkills.contains(id) {
            tell("\(id) is disabled by \"disabled_skills\" in config.json; take it out of that list to enable it.\n")
            return
        }
        var disabled = session.disabledSkills
        if enabled { disabled.remove(id) } else { disabled.insert(id) }
        session.disabledSkills = disabled
        try? store?.setSetting("disabled_skills", JSONValue.array(disabled.sorted().map { .string($0) }).jsonText)
        say("\(id) \(enabled ? "enabled" : "disabled") (remembered).\n")
    }

    private func switchModel(_ name: String) {
        guard !name.isEmpty else {
            tell("Model: \(session.provider.displayName)\n")
            return
        }
        do {
            let provider = try makeProvider(name)
            modelName = name
            try owner.switchProvider(provider)
            tell("Model: \(provider.displayName)\n")
        } catch {
            say(terminal.red("✗ ") + InertText.make("\(error)") + "\n")
        }
    }

    private func listSessions() {
        // A shell opened and closed without a word is not a conversation to resume (this one is shown anyway).
        guard let sessions = try? store?.sessions().filter({ $0.messageCount > 0 || $0.id == sessionID }),
            !sessions.isEmpty
        else {
            say("No saved sessions.\n")
            return
        }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        for summary in sessions.prefix(30) {
            let current = summary.id == sessionID ? terminal.green(" (this one)") : ""
            say(
                "  \(summary.id)  \(formatter.string(from: summary.started))  \(summary.messageCount) messages  "
                    + "\(summary.title.isEmpty ? terminal.dim("(empty)") : InertText.make(summary.title))\(current)\n")
        }
    }

    /// `/usage`: tokens, cost, skill calls and time of the last turn and of the session, each against its budget.
    static func usage(_ session: AgentSession) -> String {
        let (turn, whole) = session.use
        let budgets = session.configuration.budgets
        func line(_ name: String, _ use: BudgetUse, _ limits: BudgetLimits) -> String {
            func of(_ limit: Double?) -> String { limit.map { " of " + BudgetReached.count($0) } ?? "" }
            let tokens = BudgetReached.count(Double(use.tokens))
            let input = BudgetReached.count(Double(use.promptTokens))
            let output = BudgetReached.count(Double(use.completionTokens))
            let seconds = BudgetReached.count(Double((ContinuousClock.now - use.started).components.seconds))
            var parts: [String] = []
            parts.append("\(tokens) tokens\(of(limits.tokens.map(Double.init))) (\(input) in, \(output) out)")
            parts.append(
                "\(use.toolCalls) skill call\(use.toolCalls == 1 ? "" : "s")\(of(limits.toolCalls.map(Double.init)))")
            parts.append("\(seconds) s\(of(limits.seconds))")
            if let cost = use.cost(budgets.price) {
                let limit = limits.cost.map { String(format: " of %.2f", $0) } ?? ""
                parts.append(String(format: "cost %.4f", cost) + limit)
            }
            return "\(name): " + parts.joined(separator: " · ") + "\n"
        }
        return line("This turn", turn, budgets.turn) + line("This session", whole, budgets.session)
    }

    /// `/undo`: the owner's undo, said line by line (the reversing calls' cards are the browser's).
    private func undo() {
        let terminal = self.terminal
        guard let stream = try? owner.undo() else {
            say("Nothing to undo.\n")
            return
        }
        // Fitted to the terminal, as `say` fits what the shell writes.
        let say: @Sendable (String) -> Void = { writeOut(Table.fit($0, width: terminal.width)) }
        follow(stream) { event in
            switch event {
            case .undoing(let shown, _, _): say(terminal.cyan("↶") + InertText.make(" undoing \(shown)\n"))
            case .undid(.undone(let value), _, _):
                say(terminal.green("✓") + " undone: " + TurnRenderer.shorten(value.displayText, 100) + "\n")
            case .undid(.declined, _, _): say(terminal.yellow("↶") + " not undone: you said no (/undo asks again)\n")
            case .undid(.failed(let message), let index, let count):
                let left = count > 1 ? " (\(index) of \(count) undone)" : ""
                say(terminal.red("✗") + " undo failed: " + InertText.make(message) + left + "\n")
            default: break
            }
        }
    }

    /// Follows one of the owner's streams from the shell's thread to its end, `handle` seeing each event on a task
    /// while this thread puts the stream's questions to the person; Ctrl-C stops the owner's work.
    func follow(
        _ stream: AsyncStream<ConversationEvent>, _ handle: @escaping @Sendable (ConversationEvent) -> Void
    ) {
        waitFor { [weak self] in
            for await event in stream {
                switch event {
                case .asked(let request):
                    // The question goes on a line of its own, under whatever was drawn so far.
                    writeOut(self?.terminal.clearLine ?? "")
                    self?.put(request)
                case .settled(let id): self?.withdraw(id)
                default: handle(event)
                }
            }
        }
    }

    /// Runs async work from the shell's thread and waits for it (this thread is not part of the cooperative pool),
    /// putting the questions the owner's work asks meanwhile to the person. Ctrl-C stops the owner's work — and
    /// cancels `work` itself when `cancelling` (work of the shell's own, not the owner's: a stream followed to its
    /// end reports how the stopped work ended) — as it does a turn (a `/call` of a skill that blocks ran to its
    /// deadline with "^C" echoed, and that Ctrl-C then reached the prompt).
    func waitFor<T: Sendable>(cancelling: Bool = false, _ work: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = Atomic<Bool>(false)
        let task = Task { [weak self] in
            box.set(await work())
            done.store(true, ordering: .releasing)
            self?.wake()
        }
        let owner = self.owner
        let interrupt = {
            owner.stop()
            if cancelling { task.cancel() }
        }
        waitInterruptibly(until: { done.load(ordering: .acquiring) }, interrupted: interrupt) {
            askQuestions(cancel: interrupt)
        }
        guard let value = box.value else { preconditionFailure("the task signalled completion without a value") }
        return value
    }
}

/// Carries a value from a task to a waiting thread.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    // @unchecked: written once before the waiter is told (a release store), read only after it was told.
    private(set) var value: T?
    func set(_ value: T) { self.value = value }
}
