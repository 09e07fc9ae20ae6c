import Agent
import Foundation
import SessionUI
import SkillHost

extension Shell {
    /// `/record` says whether this session is being recorded; `/record FILE` starts writing it to FILE (the
    /// conversation so far goes into the header, so the record replays from here); `/record stop` ends it.
    func record(_ argument: String) {
        switch argument {
        case "":
            if let recorder = recording.recorder {
                tell("Recording to \(recorder.path) (\(recorder.turns) turns so far); /record stop ends it.\n")
            } else {
                tell("Not recording. /record FILE writes this session to FILE; skillhost replay FILE runs it again.\n")
            }
        case "stop":
            guard let line = stopRecording() else {
                say("Not recording.\n")
                return
            }
            tell(line + "\n")
        default:
            let home = ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()
            let path = argument.hasPrefix("~/") ? home + argument.dropFirst() : argument
            if let line = stopRecording() { tell(line + "\n") }
            do throws(ModelError) {
                try startRecording(path)
                tell("Recording this session to \(path); /record stop ends it.\n")
            } catch { say(terminal.red("✗ ") + InertText.make(error.message) + "\n") }
        }
    }

    func startRecording(_ path: String) throws(ModelError) {
        recording.recorder = try SessionRecorder(
            path: path, model: session.provider.displayName, configuration: currentConfiguration,
            conversation: session.conversation.messages, secrets: environment.secrets)
    }

    /// Ends the record, if one is written; what to say about it.
    @discardableResult
    func stopRecording() -> String? {
        guard let recorder = recording.recorder else { return nil }
        recording.recorder = nil
        let failure = recorder.failure
        recorder.close()
        return "Stopped recording: \(recorder.path) (\(recorder.turns) turns)"
            + (failure.map { "; \($0) — the record is incomplete" } ?? ".")
    }

    /// A session started (or was resumed, or `/new`): a record of the previous one ends; with `"record"` in the
    /// configuration a new one starts. Said at the next prompt.
    func sessionStarted() {
        var notices: [String] = []
        if let line = stopRecording() { notices.append(line) }
        if let autoRecord = environment.autoRecord {
            switch autoRecord() {
            case .success(let path):
                do throws(ModelError) {
                    try startRecording(path)
                    notices.append("Recording this session to \(path) (\"record\" in config.json).")
                } catch { notices.append("! not recorded: \(error.message)") }
            case .failure(let error): notices.append("! not recorded: \(error.description)")
            }
        }
        shared.withLock { $0.notices += notices }
    }
}
