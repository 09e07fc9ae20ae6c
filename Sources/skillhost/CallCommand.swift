import Dispatch
import Foundation
import SkillHost
import SkillJSON

/// `skillhost call <skill> '<json>'`.
enum CallCommand {
    static func run(
        registry: SkillRegistry, skill: String, arguments: String?, json: Bool, timeout: Duration?
    ) async throws(CLIError) -> Int32 {
        var text = arguments ?? "{}"
        if text == "-" {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        // Ctrl-C cancels the call (the runner resumes us at once), then we exit with "cancelled".
        signal(SIGINT, SIG_IGN)
        let call = Task { await registry.invoke(skill, arguments: text, timeout: timeout) }
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { call.cancel() }
        interrupt.resume()
        let outcome = await call.value
        interrupt.cancel()

        if json {
            print(outcome.envelope.jsonText)
        } else if outcome.status == .ok {
            print((outcome.result ?? .null).displayText)
        } else {
            printError(
                "\(outcome.status == .invalidArgs ? "invalid arguments" : outcome.status.rawValue): "
                    + (outcome.error ?? "unknown error"))
            if outcome.error?.hasPrefix("unknown skill") == true {
                let failures = registry.failures
                if !failures.isEmpty {
                    printError(
                        "note: \(failures.count) plugin file\(failures.count == 1 ? "" : "s") failed to load; "
                            + "run skillhost list to see why")
                }
            }
        }
        return ExitCode(outcome.status).rawValue
    }
}
