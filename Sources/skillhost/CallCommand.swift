import Agent
import Dispatch
import Foundation
import SkillHost
import SkillJSON

/// `skillhost call <skill> '<json>'`.
enum CallCommand {
    static func run(
        registry: SkillRegistry, policy: Policy, skill: String, arguments: String?, json: Bool, timeout: Duration?,
        confirmed: Bool
    ) async throws(CLIError) -> Int32 {
        var text = arguments ?? "{}"
        let fromStandardInput = text == "-"
        if fromStandardInput {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
        }
        // The policy applies here as everywhere: a deny always wins; what needs confirming is asked on a terminal,
        // and needs --yes otherwise.
        if let info = registry.skill(skill) {
            let canAsk = !fromStandardInput && isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
            let asking: Policy.Asking =
                confirmed
                ? .confirmed
                : canAsk
                    ? .person
                    : .nobody(refusal: {
                        "not run: \($0.id) is \($0.risk == .destructive ? "destructive" : "set to ask"); run it again "
                            + "with --yes to confirm, or allow it with a policy rule in config.json"
                    })
            var refusal: String?
            switch policy.gate(info, asking: asking) {
            case .run: break
            case .refuse(let reason): refusal = reason
            case .ask:
                FileHandle.standardError.write(
                    Data("? \(info.id)(\(text)) is \(info.risk.rawValue). Run it? [y/N] ".utf8))
                let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                if answer != "y" && answer != "yes" { refusal = "not run: the call was not confirmed" }
            }
            if let refusal {
                let outcome = SkillOutcome.failure(.error, refusal)
                if json { print(outcome.envelope.jsonText) } else { printError("error: \(refusal)") }
                return ExitCode.error.rawValue
            }
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
