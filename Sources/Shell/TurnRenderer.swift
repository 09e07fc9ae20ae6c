import Agent
import Foundation
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
    /// Receives the answer text so far at each flush (persisted as the draft).
    let onFlush: (String) -> Void

    private var pending = ""
    private var lastFlush = ContinuousClock.now
    /// The cursor is at the end of a line of answer text.
    private var textLineOpen = false
    /// The card drawn on the last line (without a newline yet), which can be redrawn in place.
    private var cardOnLastLine: String?
    private var spinner = 0
    static let flushInterval: Duration = .milliseconds(50)
    static let spinnerDelay: Duration = .milliseconds(300)
    static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    init(terminal: Terminal, model: SessionViewModel, answerOnly: Bool, onFlush: @escaping (String) -> Void) {
        self.terminal = terminal
        self.model = model
        self.answerOnly = answerOnly
        self.onFlush = onFlush
    }

    func handle(_ event: AgentEvent) {
        model.apply(event)
        switch event {
        case .textDelta(let text):
            pending += text
            if ContinuousClock.now - lastFlush >= Self.flushInterval { flushText() }
        case .toolCallStarted(let id, _, _):
            guard !answerOnly, let card = model.card(id) else { return }
            flushText()
            closeLine()
            write(render(card))
            if terminal.isTTY { cardOnLastLine = id } else { write("\n") }
        case .toolCallProgress(let id, _):
            if let card = model.card(id), cardOnLastLine == id { write(terminal.clearLine + render(card)) }
        case .toolCallFinished(let id, _, _, _), .toolCallFailed(let id, _, _, _):
            guard !answerOnly, let card = model.card(id) else { return }
            if cardOnLastLine == id {
                write(terminal.clearLine + render(card) + "\n")
                cardOnLastLine = nil
            } else {
                flushText()
                closeLine()
                write(render(card) + "\n")
            }
        case .confirmationNeeded:
            flushText()
            closeLine()
        case .finished(let reason):
            flushText()
            if textLineOpen {
                if reason == .cancelled, !answerOnly { write(terminal.dim(" [interrupted]")) }
                write("\n")
                textLineOpen = false
            } else if reason == .cancelled, !answerOnly {
                closeLine()
                write(terminal.dim("[interrupted]") + "\n")
            }
            closeLine()
        case .thinking, .usage:
            break
        }
    }

    /// Redraws a running card on the last line with a spinner once it has run for 300 ms.
    func tick() {
        flushText()
        guard let id = cardOnLastLine, let card = model.card(id), card.state == .running,
            ContinuousClock.now - card.started >= Self.spinnerDelay
        else { return }
        spinner = (spinner + 1) % Self.frames.count
        write(terminal.clearLine + render(card))
    }

    private func flushText() {
        guard !pending.isEmpty else { return }
        closeLine()
        write(pending)
        textLineOpen = !pending.hasSuffix("\n")
        pending = ""
        lastFlush = .now
        onFlush(model.answer)
    }

    /// Ends a card line or a text line before something else is printed.
    private func closeLine() {
        if cardOnLastLine != nil {
            write("\n")
            cardOnLastLine = nil
        }
        if textLineOpen {
            write("\n")
            textLineOpen = false
        }
    }

    private func write(_ text: String) { writeOut(text) }

    /// `⟳ calculator(expression: "(23+7)*2")`, `✓ calculator → 60 · 0.4 ms`, `✗ … → reason · 0.2 ms`, `⏱ …`.
    func render(_ card: SessionViewModel.ToolCard) -> String {
        // One line: the variable part (arguments, result, error) gets what the terminal width leaves.
        let room = max(20, terminal.width - card.skill.count - 20)
        let call = "\(card.skill)(\(Self.shorten(card.arguments, room)))"
        switch card.state {
        case .running:
            let symbol =
                terminal.isTTY && ContinuousClock.now - card.started >= Self.spinnerDelay ? Self.frames[spinner] : "⟳"
            let progress = card.progress.map { terminal.dim(" · \($0)") } ?? ""
            return terminal.cyan(symbol) + " " + call + progress
        case .succeeded(let result):
            return terminal.green("✓") + " \(card.skill) → \(Self.shorten(result, room))"
                + terminal.dim(" · \(duration(card))")
        case .failed(let error):
            if error.contains("timed out after") {
                return terminal.yellow("⏱") + " " + Self.shorten(error, room + card.skill.count)
            }
            return terminal.red("✗") + " \(card.skill) → \(Self.shorten(error, room))"
                + terminal.dim(" · \(duration(card))")
        }
    }

    private func duration(_ card: SessionViewModel.ToolCard) -> String {
        let components = (card.duration ?? .zero).components
        let ms = Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        return ms < 1000 ? String(format: "%.1f ms", ms) : String(format: "%.1f s", ms / 1000)
    }

    nonisolated static func shorten(_ text: String, _ limit: Int) -> String {
        let line = text.replacingOccurrences(of: "\n", with: " ")
        return line.count > limit ? String(line.prefix(limit - 1)) + "…" : line
    }
}
