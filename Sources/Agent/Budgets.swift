import Foundation

/// Limits on what a turn, or a whole session, may use: model tokens (as the provider reports them), cost (tokens
/// priced per million), skill calls, wall time. Nil: no limit of that kind.
package struct BudgetLimits: Sendable, Equatable {
    package var tokens: Int?
    package var toolCalls: Int?
    package var seconds: Double?
    /// In the currency of the configured prices.
    package var cost: Double?

    package init(tokens: Int? = nil, toolCalls: Int? = nil, seconds: Double? = nil, cost: Double? = nil) {
        self.tokens = tokens
        self.toolCalls = toolCalls
        self.seconds = seconds
        self.cost = cost
    }
}

/// The budgets of a session and of each of its turns, with the prices that turn tokens into cost. The defaults are
/// generous: they stop a runaway loop, not a long piece of work.
package struct Budgets: Sendable, Equatable {
    package var turn = BudgetLimits(tokens: 500_000, toolCalls: 200, seconds: 1800)
    package var session = BudgetLimits(tokens: 5_000_000, toolCalls: 2000)
    /// Price per million input and output tokens of the model in use; nil: cost is not counted.
    package var price: (input: Double, output: Double)?
    /// Tool calls one MCP client session may make (`skillhost mcp`); nil: no limit (the default — a client is a
    /// program that may call a great deal).
    package var mcpSessionToolCalls: Int?

    package init() {}

    package static func == (lhs: Budgets, rhs: Budgets) -> Bool {
        lhs.turn == rhs.turn && lhs.session == rhs.session && lhs.price?.input == rhs.price?.input
            && lhs.price?.output == rhs.price?.output && lhs.mcpSessionToolCalls == rhs.mcpSessionToolCalls
    }
}

extension Int {
    /// Adds `other`, stopping at `Int.max` (counts from outside — a server's tokens, a stored history — never trap).
    mutating func saturatingAdd(_ other: Int) {
        let (sum, overflow) = addingReportingOverflow(other)
        self = overflow ? (other > 0 ? .max : .min) : sum
    }
}

/// What a turn or a session has used so far.
package struct BudgetUse: Sendable, Equatable {
    package var promptTokens = 0
    package var completionTokens = 0
    package var toolCalls = 0
    package var started: ContinuousClock.Instant

    package init(started: ContinuousClock.Instant = .now) { self.started = started }

    package var tokens: Int {
        var sum = promptTokens
        sum.saturatingAdd(completionTokens)
        return sum
    }

    package func cost(_ price: (input: Double, output: Double)?) -> Double? {
        guard let price else { return nil }
        return (Double(promptTokens) * price.input + Double(completionTokens) * price.output) / 1_000_000
    }
}

/// A budget that is used up: which one, and how far.
package struct BudgetReached: Sendable, Equatable {
    package enum Scope: String, Sendable { case turn, session }
    package enum Kind: String, Sendable { case tokens, toolCalls = "tool_calls", seconds, cost }

    package let scope: Scope
    package let kind: Kind
    package let used: Double
    package let limit: Double

    package init(scope: Scope, kind: Kind, used: Double, limit: Double) {
        self.scope = scope
        self.kind = kind
        self.used = used
        self.limit = limit
    }

    /// "this turn has used 120,000 tokens of 100,000".
    package var sentence: String {
        let whose = scope == .turn ? "this turn has" : "this session has"
        // "1 skill call of 1", "2 skill calls of 2": the noun agrees with the number it follows.
        func noun(_ word: String) -> String { used.rounded(.down) == 1 ? word : word + "s" }
        switch kind {
        case .tokens: return "\(whose) used \(Self.count(used)) \(noun("token")) of \(Self.count(limit))"
        case .toolCalls: return "\(whose) made \(Self.count(used)) skill \(noun("call")) of \(Self.count(limit))"
        case .seconds: return "\(whose) run \(Self.count(used)) \(noun("second")) of \(Self.count(limit))"
        case .cost: return "\(whose) cost \(String(format: "%.2f", used)) of \(String(format: "%.2f", limit))"
        }
    }

    /// Which budget, for waiving it: `turn.tokens`.
    package var key: String { scope.rawValue + "." + kind.rawValue }

    package static func count(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.groupingSeparator = ","
        formatter.usesGroupingSeparator = true
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value.rounded(.down))) ?? "\(value.rounded(.down))"
    }

    /// The first budget `turn` or `session` use reached (turn budgets first), skipping those `waived`.
    package static func first(
        _ budgets: Budgets, turn: BudgetUse, session: BudgetUse, waived: Set<String>,
        now: ContinuousClock.Instant = .now
    ) -> BudgetReached? {
        for (scope, limits, use) in [(Scope.turn, budgets.turn, turn), (.session, budgets.session, session)] {
            let seconds = Double((now - use.started).components.seconds)
            let checks: [(Kind, Double?, Double?)] = [
                (.tokens, limits.tokens.map(Double.init), Double(use.tokens)),
                (.toolCalls, limits.toolCalls.map(Double.init), Double(use.toolCalls)),
                (.seconds, limits.seconds, seconds),
                (.cost, limits.cost, use.cost(budgets.price)),
            ]
            for (kind, limit, used) in checks {
                guard let limit, let used, used >= limit else { continue }
                let reached = BudgetReached(scope: scope, kind: kind, used: used, limit: limit)
                if !waived.contains(reached.key) { return reached }
            }
        }
        return nil
    }
}
