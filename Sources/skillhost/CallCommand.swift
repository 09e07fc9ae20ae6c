import Agent
import Dispatch
import Foundation
import SessionUI
import Shell
import SkillHost
import SkillJSON
import Support
import Synchronization

/// `skillhost call <skill> '<json>'`.
enum CallCommand {
    static func run(
        registry: SkillRegistry, skill: String, arguments: String?, json: Bool, timeout: Duration?,
        confirmed: Bool, missingBundled: String? = nil
    ) async throws(CLIError) -> Int32 {
        var text = arguments ?? "{}"
        let fromStandardInput = text == "-"
        if fromStandardInput {
            do { text = try UTF8Input.standardInput() } catch { throw .usage(error) }
        }
        // The registry applies the policy here as everywhere: a deny always wins; what needs confirming is asked
        // on a terminal, and needs --yes otherwise.
        let canAsk = !fromStandardInput && isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1
        let confirmer: Confirmer =
            confirmed
            ? .confirmed
            : canAsk
                ? .person({ skill, arguments in await askOnTerminal(skill, arguments) })
                : .nobody(.commandLine)
        // Ctrl-C cancels the call (the runner resumes us at once), then we exit with "cancelled".
        signal(SIGINT, SIG_IGN)
        let invocation = SkillInvocation(skill: skill, argumentText: text, timeout: timeout, confirmer: confirmer)
        let call = Task { await registry.invoke(invocation) }
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { call.cancel() }
        interrupt.resume()
        let outcome = await call.value
        interrupt.cancel()

        if json {
            writeOut(outcome.envelope.jsonText + "\n")
        } else if outcome.status == .ok {
            // A plugin's text, shown inert: `--json` keeps it as sent.
            writeOut(InertText.make((outcome.result ?? .null).displayText) + "\n")
        } else {
            printError(
                "\(outcome.status == .invalidArgs ? "invalid arguments" : outcome.status.rawValue): "
                    + InertText.make(outcome.error ?? "unknown error"))
            if outcome.code == .unknownSkill {
                if let missingBundled { printError("note: \(missingBundled)") }
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

    /// Asks on the terminal, from a thread of its own (reading a line blocks; the cooperative pool must not).
    /// Ctrl-C (which cancels the call's task) answers no at once.
    private static func askOnTerminal(_ skill: SkillInfo, _ arguments: JSONValue) async -> ConfirmationAnswer {
        let waiting = Mutex<CheckedContinuation<ConfirmationAnswer, Never>?>(nil)
        let answer: @Sendable (ConfirmationAnswer) -> Void = { value in
            waiting.withLock { $0.take() }?.resume(returning: value)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiting.withLock { $0 = continuation }
                if Task.isCancelled { answer(.deny) }
                Thread {
                    StandardStreams.error(
                        InertText.make("? \(skill.id)(\(arguments.jsonText)) is \(skill.risk.rawValue). Run it? [y/N] ")
                    )
                    let line = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
                    answer(line == "y" || line == "yes" ? .allowOnce : .deny)
                }.start()
            }
        } onCancel: {
            answer(.deny)
        }
    }
}
