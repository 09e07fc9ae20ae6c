import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON

/// `skillhost replay FILE [--skills recorded|live]`: runs a recorded session (an `ask`, or the shell's turns) again,
/// offline — the model's answers
/// from the record; skills from the record (no side effects) or live (the real plugins, every outcome compared).
/// Exit 0 when the run went exactly as recorded; 1 with the first divergence (and every difference) otherwise.
enum ReplayCommand {
    static func run(
        _ file: String, live: Bool, json: Bool, answersFromRecord: Bool = false, registry: SkillRegistry, config: Config
    )
        async throws(CLIError) -> Int32
    {
        let text: String
        switch BoundedFile.read(file, limit: 64 << 20) {
        case .success(.bytes(let bytes)): text = String(decoding: bytes, as: UTF8.self)
        case .success(.missing): throw .failure("no record at \(file)")
        case .failure(let problem): throw .failure("\(file) \(problem)")
        }
        let record: SessionRecord
        do throws(ModelError) { record = try SessionRecord(text, path: file) } catch { throw .failure(error.message) }
        let replayer = SessionReplayer(
            record, registry: registry, live: live, base: config.agentConfiguration(stepLimit: nil),
            answersFromRecord: answersFromRecord)
        let log = replayer.log
        let calls = await replayer.run(
            undo: { plan in
                // The run's own changes, reversed as `ask --rewind` does: a rule that says ask refuses the call.
                await plan.undo(with: registry, session: nil, confirmer: .consented(.risk, then: .nobodyToAsk)) { _ in }
            },
            event: { event in
                if json { writeOut(AskCommand.eventJSON(event).jsonText + "\n") }
                if case .textDelta(let delta) = event, !json { writeOut(InertText.make(delta)) }
                if case .finished = event, !json { writeOut("\n") }
            })
        guard let first = log.first else {
            printError(
                "skillhost: replayed \(counted(record.responses.count, "model response")) and "
                    + "\(counted(calls, "call")) (\(live ? "skills live" : "skills from the record")): as recorded")
            return ExitCode.ok.rawValue
        }
        printError("skillhost: the replay went another way than the record: \(first)")
        for difference in log.all.dropFirst() { printError("  also: \(difference)") }
        return ExitCode.error.rawValue
    }
}

/// "1 call", "2 calls": a count with its noun agreeing.
func counted(_ count: Int, _ noun: String) -> String { "\(count) \(noun)\(count == 1 ? "" : "s")" }
