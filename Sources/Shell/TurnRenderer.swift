import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON

/// Draws a turn on the terminal from the view model: streamed text (flushed at most ~20 times a second), one card
/// per skill call — redrawn in place on a terminal (spinner after 300 ms, progress messages) — and the end.
@MainActor
final class TurnRenderer {
    let terminal: Terminal
    let model: SessionViewModel
    /// Piped input: print only the answer text.
    let answerOnly: Bool

    private var pending = ""
    private var lastFlush = ContinuousClock.now
    /// The cursor is at the end of a line of answer text.
    private var textLineOpen = false
    /// Cards drawn on the last lines (the cursor at the end of the last one, no newline yet): redrawn in place.
    private var block: [String] = []
    private var spinner = 0
    /// The answer text written since the last card (or since the turn began): what is laid out as markdown in
    /// place once the answer is complete.
    private var segment = ""
    static let flushInterval: Duration = .milliseconds(50)
    static let spinnerDelay: Duration = .milliseconds(300)
    static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    /// Lay the answer out as markdown once it is complete (model answers; not the offline router's plain lines).
    let markdown: Bool
    /// Without a terminal the answer cannot be redrawn: its text is held and written once, laid out as plain
    /// markdown (no escapes), when a card or the end of the turn closes it — unless `--raw`.
    private var holdsText: Bool { markdown && !terminal.isTTY && !terminal.rawAnswers && !answerOnly }
    private var held = ""

    init(
        terminal: Terminal, model: SessionViewModel, answerOnly: Bool, markdown: Bool = true
    ) {
        self.terminal = terminal
        self.model = model
        self.answerOnly = answerOnly
        self.markdown = markdown
    }

    func handle(_ event: AgentEvent) {
        model.apply(event)
        switch event {
        case .textDelta(let text):
            pending += text
            if ContinuousClock.now - lastFlush >= Self.flushInterval { flushText() }
        case .toolCall(let call):
            handle(call)
        case .confirmationNeeded:
            segment = ""
            flushText()
            releaseHeld()
            closeLine()
        case .finished(let reason):
            flushText()
            releaseHeld()
            if !block.isEmpty { redrawBlock() }  // running cards become final `cancelled` cards
            if textLineOpen {
                if reason == .cancelled, !answerOnly { write(terminal.dim(" [interrupted]")) }
                write("\n")
                textLineOpen = false
            } else if reason == .cancelled, !answerOnly {
                closeLine()
                write(terminal.dim("[interrupted]") + "\n")
            }
            closeLine()
            if reason != .cancelled { layOutAnswer() }
        case .thinking, .usage:
            break
        }
    }

    /// A call's card appears when it starts (in the block of running cards on a terminal) and is redrawn as it
    /// progresses and ends.
    private func handle(_ call: ToolCallEvent) {
        let id = call.id
        switch call.phase {
        case .started:
            guard !answerOnly, let card = model.card(id) else { return }
            flushText()
            releaseHeld()
            segment = ""
            if terminal.isTTY {
                if textLineOpen {
                    write("\n")
                    textLineOpen = false
                }
                write((block.isEmpty ? "" : "\n") + render(card))
                block.append(id)
            } else {
                write(render(card) + "\n")
            }
        case .progress:
            if block.contains(id) { redrawBlock() }
        case .finished, .failed:
            guard !answerOnly, let card = model.card(id) else { return }
            if block.contains(id) {
                redrawBlock()
            } else {
                flushText()
                releaseHeld()
                closeLine()
                write(render(card) + "\n")
                segment = ""
            }
        }
    }

    /// Spins the running cards once they have run for 300 ms.
    func tick() {
        flushText()
        let spinning = block.contains { id in
            guard let card = model.card(id) else { return false }
            return card.state == .running && ContinuousClock.now - card.started >= Self.spinnerDelay
        }
        guard spinning else { return }
        spinner = (spinner + 1) % Self.frames.count
        redrawBlock()
    }

    /// Redraws the block of card lines in place (the cursor sits at the end of its last line); once every card in
    /// it has finished, the block is closed.
    private func redrawBlock() {
        guard terminal.isTTY, !block.isEmpty else { return }
        var out = block.count > 1 ? "\u{1B}[\(block.count - 1)A" : ""
        for (index, id) in block.enumerated() {
            guard let card = model.card(id) else { continue }
            out += terminal.clearLine + render(card) + (index < block.count - 1 ? "\n" : "")
        }
        write(out)
        if block.allSatisfy({ model.card($0)?.state != .running }) {
            write("\n")
            block = []
        }
    }

    private func flushText() {
        guard !pending.isEmpty else { return }
        if holdsText {
            held += pending
            pending = ""
            lastFlush = .now
            return
        }
        if !block.isEmpty {  // text continues after the cards, on a line of its own
            write("\n")
            block = []
            segment = ""
        }
        // The model's text as it streams: inert (the markdown layout that may replace it is inert too).
        write(InertText.make(pending))
        segment += pending
        textLineOpen = textLineOpen || !pending.isEmpty
        if pending.hasSuffix("\n") { textLineOpen = false }
        pending = ""
        lastFlush = .now
    }

    /// Replaces the answer's last stretch of text, streamed as it came, by its markdown layout (terminal only, not
    /// with `--raw`, and only when all of it is still on the screen: moving up past the top would overwrite other
    /// output). The cursor is at the start of the line after it.
    private func layOutAnswer() {
        defer { segment = "" }
        guard markdown, terminal.isTTY, !terminal.rawAnswers, !answerOnly, !segment.isEmpty else { return }
        let width = terminal.width
        var lines = segment.split(separator: "\n", omittingEmptySubsequences: false)
        if lines.last == "" { lines.removeLast() }
        let rows = lines.reduce(0) { rows, line in
            rows + max(1, (TerminalMarkdown.displayWidth(String(line)) + width - 1) / width)
        }
        guard rows > 0, rows < terminal.height else { return }
        write("\u{1B}[\(rows)A\r\u{1B}[J" + TerminalMarkdown.render(segment, width: width, colors: terminal.colors))
    }

    /// Writes the held answer text laid out as plain markdown (no terminal: nothing to redraw).
    private func releaseHeld() {
        guard !held.isEmpty else { return }
        let text = TerminalMarkdown.render(held, width: terminal.width, colors: false)
        held = ""
        write(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Ends a card block or a text line before something else is printed.
    private func closeLine() {
        if !block.isEmpty {
            write("\n")
            block = []
        }
        if textLineOpen {
            write("\n")
            textLineOpen = false
        }
    }

    private func write(_ text: String) { writeOut(text) }

    /// `⟳ calculator(expression: "(23+7)*2")`, `✓ calculator → 60 · 0.4 ms`, `✗ … → reason · 0.2 ms`, `⏱ …`.
    func render(_ card: SessionViewModel.ToolCard) -> String {
        let spinning = terminal.isTTY && ContinuousClock.now - card.started >= Self.spinnerDelay
        return Self.render(card, terminal: terminal, frame: spinning ? Self.frames[spinner] : nil)
    }

    /// One card on one line: the variable part (arguments, result, error) gets what the terminal width leaves.
    /// `frame` replaces ⟳ on a running card that spins.
    nonisolated static func render(_ card: SessionViewModel.ToolCard, terminal: Terminal, frame: String?) -> String {
        let room = max(20, terminal.width - card.skill.count - 20)
        // Everything on a card but its styling came from elsewhere (the model, the plugin): made inert.
        let skill = InertText.make(card.skill)
        let call = "\(skill)(\(shorten(card.arguments, room)))"
        let duration = (card.duration ?? .zero).shortDescription
        switch card.state {
        case .running:
            let progress = card.progress.map { terminal.dim(" · \(shorten($0, room))") } ?? ""
            return terminal.cyan(frame ?? "⟳") + " " + call + progress
        case .succeeded(let result):
            return terminal.green("✓") + " \(skill) → \(shorten(result, room))" + terminal.dim(" · \(duration)")
        case .failed(let failure):
            // A timeout's sentence names the skill and the deadline: it is the whole card.
            if failure.code == .timeout {
                return terminal.yellow("⏱") + " " + shorten(failure.message, room + card.skill.count)
            }
            return terminal.red("✗") + " \(skill) → \(shorten(failure.message, room))"
                + terminal.dim(" · \(duration)")
        case .cancelled:
            return terminal.yellow("⊘") + " \(call) " + terminal.yellow("cancelled") + terminal.dim(" · \(duration)")
        }
    }

    nonisolated static func shorten(_ text: String, _ limit: Int) -> String { CardText.shorten(text, limit) }
}
