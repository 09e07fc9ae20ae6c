import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON

/// `skillhost replay FILE [--skills recorded|live]`: runs a recorded `ask` again, offline — the model's answers
/// from the record; skills from the record (no side effects) or live (the real plugins, every outcome compared).
/// Exit 0 when the run went exactly as recorded; 1 with the first divergence (and every difference) otherwise.
enum ReplayCommand {
    static func run(_ file: String, live: Bool, json: Bool, registry: SkillRegistry, config: Config)
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
        let log = ReplayLog()
        let skills = ReplaySkills(registry: registry, record: record, log: log, live: live)
        let session = AgentSession(
            skills: skills, provider: ReplayProvider(record, log: log),
            configuration: config.agentConfiguration(stepLimit: nil))
        var reason = FinishReason.cancelled
        var calls = 0
        for await event in session.send(record.prompt) {
            if json { writeOut(AskCommand.eventJSON(event).jsonText + "\n") }
            switch event {
            case .textDelta(let delta) where !json: writeOut(InertText.make(delta))
            case .toolCall(let call):
                if case .started = call.phase { calls += 1 }
            case .finished(let finish): reason = finish
            default: break
            }
        }
        if !json { writeOut("\n") }
        if let recorded = record.finish, recorded != reason.name {
            log.note("the turn ended \(reason.name); the record ended \(recorded)")
        }
        guard let first = log.first else {
            printError(
                "skillhost: replayed \(record.responses.count) model responses and \(calls) calls "
                    + "(\(live ? "skills live" : "skills from the record")): as recorded")
            return ExitCode.ok.rawValue
        }
        printError("skillhost: the replay went another way than the record: \(first)")
        for difference in log.all.dropFirst() { printError("  also: \(difference)") }
        return ExitCode.error.rawValue
    }
}
