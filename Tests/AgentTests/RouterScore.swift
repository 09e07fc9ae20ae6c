import Foundation
import SkillHost
import TestSupport

@testable import Agent
@testable import SkillJSON

/// How the offline router did on a set of labelled requests, each request counted once as one of: **right** (the
/// expected call), **honest** (it said it could not: on a request no skill serves that is what it should do),
/// **wrong** (a read-only call that is not the expected one, or any call on a request no skill serves) or **wrong
/// write** (a mutating or destructive call the request did not ask for in those words).
struct RouterScore {
    var requests = 0
    var answerable = 0
    var right = 0
    var unanswerable = 0
    /// Unanswerable requests answered by saying so (or by a harmless read-only call).
    var honestlyUnanswered = 0
    var honest = 0
    var wrong = 0
    var wrongWrites: [String] = []
    /// Requests that asked for no change, and the changes made on them anyway.
    var nonChange = 0
    var misses: [String] = []

    var rightShare: Double { answerable == 0 ? 1 : Double(right) / Double(answerable) }
    var honestShare: Double { unanswerable == 0 ? 1 : Double(honestlyUnanswered) / Double(unanswerable) }

    var report: String {
        "\(requests) requests: right \(right) (of \(answerable) answerable: "
            + "\(String(format: "%.1f", rightShare * 100)) %), honest \(honest), wrong \(wrong), wrong writes "
            + "\(wrongWrites.count); unanswerable answered honestly \(honestlyUnanswered)/\(unanswerable)"
    }

    /// Counts an answerable request: right, else honest (nothing called), a wrong write or a wrong answer.
    mutating func answered(
        _ right: Bool, routed: (name: String, arguments: JSONValue)?, risk: SkillRisk, _ shown: String,
        asked: String = ""
    ) {
        answerable += 1
        if right {
            self.right += 1
            return
        }
        misses.append(shown)
        if routed == nil {
            honest += 1
        } else if risk != .readOnly {
            wrongWrites.append(shown + asked)
        } else {
            wrong += 1
        }
    }

    /// Routes every case (off the cooperative pool: seconds of CPU in a debug build) and counts.
    static func of(_ cases: [RouterCorpus.Case], tools: [ToolDefinition]) async throws -> RouterScore {
        let router = OfflineRouter(now: { routerNow })
        let outcomes = try await offPool {
            cases.map {
                item -> (routed: (name: String, arguments: JSONValue)?, plan: [(String, JSONValue)], leftOut: Int) in
                if case .sequence = item.expected {
                    let plan = router.plan(item.request, tools: tools)
                    var calls: [(String, JSONValue)] = []
                    var leftOut = 0
                    for clause in plan {
                        if case .call(let name, let arguments) = clause.decision {
                            calls.append((name, arguments))
                        } else if plan.count > 1 {
                            leftOut += 1
                        }
                    }
                    return (nil, calls, leftOut)
                }
                return (router.route(item.request, tools: tools), [], 0)
            }
        }
        var score = RouterScore()
        func risk(_ name: String?) -> SkillRisk {
            name.flatMap { name in tools.first { $0.name == name }?.risk } ?? .readOnly
        }
        func same(_ routed: (name: String, arguments: JSONValue)?, _ name: String, _ arguments: String) -> Bool {
            routed?.name == name && routed?.arguments == (try? JSONValue(parsing: arguments))
        }
        for (item, outcome) in zip(cases, outcomes) {
            score.requests += 1
            let routed = outcome.routed
            let shown = routed.map { "\($0.name) \($0.arguments.jsonText)" } ?? "nothing"
            switch item.expected {
            case .sequence(let expected, let leftOut):
                score.answerable += 1
                let ok =
                    outcome.leftOut == leftOut && outcome.plan.count == expected.count
                    && zip(outcome.plan, expected).allSatisfy { planned, wanted in
                        planned.0 == wanted.0 && planned.1 == (try? JSONValue(parsing: wanted.1))
                    }
                let plan = outcome.plan.map { "\($0.0) \($0.1.jsonText)" }.joined(separator: "; ")
                let unasked = outcome.plan.filter { planned in
                    risk(planned.0) != .readOnly && !expected.contains { $0.0 == planned.0 }
                }
                if ok {
                    score.right += 1
                } else if !unasked.isEmpty {
                    score.wrongWrites.append("\(item.request) → \(plan)")
                } else {
                    score.wrong += 1
                }
                if !ok { score.misses.append("\(item.request) → \(plan), \(outcome.leftOut) left out") }
            case .call(let alternatives):
                score.nonChange += 1
                score.answered(
                    alternatives.contains { same(routed, $0.0, $0.1) }, routed: routed, risk: risk(routed?.name),
                    "\(item.request) → \(shown)")
            case .change(let name, let arguments):
                score.answered(
                    same(routed, name, arguments), routed: routed, risk: risk(routed?.name),
                    "\(item.request) → \(shown)", asked: " (asked: \(name) \(arguments))")
            case .none:
                score.unanswerable += 1
                score.nonChange += 1
                if routed == nil {
                    score.honest += 1
                    score.honestlyUnanswered += 1
                    continue
                }
                score.misses.append("(unanswerable) \(item.request) → \(shown)")
                if risk(routed?.name) != .readOnly {
                    score.wrongWrites.append("(unanswerable) \(item.request) → \(shown)")
                } else {
                    // A read-only call on a request no skill serves changes nothing: tolerated, but not right.
                    score.honestlyUnanswered += 1
                    score.wrong += 1
                }
            }
        }
        return score
    }
}
