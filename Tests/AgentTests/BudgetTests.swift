import Agent
import SkillHost
import TestSupport
import Testing

/// Budgets of a turn and of a session: checked between steps, where every call asked for has its result; the turn
/// ends saying which budget, and a front end may let it go on.
struct BudgetTests {
    @Test func theFirstBudgetReachedIsTheOneNamed() {
        var budgets = Budgets()
        budgets.turn = BudgetLimits(tokens: 100_000, toolCalls: 3)
        budgets.session = BudgetLimits(cost: 0.5)
        budgets.price = (input: 2.5, output: 10)
        let start = ContinuousClock.now
        var turn = BudgetUse(started: start)
        turn.promptTokens = 90_000
        turn.completionTokens = 30_000
        var session = turn
        session.toolCalls = 9
        let reached = BudgetReached.first(budgets, turn: turn, session: session, waived: [], now: start)
        #expect(reached == BudgetReached(scope: .turn, kind: .tokens, used: 120_000, limit: 100_000))
        #expect(reached?.sentence == "this turn has used 120,000 tokens of 100,000")
        // Waived, the next one: the session's cost (90,000 × 2.5 + 30,000 × 10 per million = 0.525).
        let next = BudgetReached.first(budgets, turn: turn, session: session, waived: ["turn.tokens"], now: start)
        #expect(next?.key == "session.cost")
        #expect(next?.sentence == "this session has cost 0.53 of 0.50")
        #expect(BudgetReached.first(Budgets(), turn: BudgetUse(), session: BudgetUse(), waived: []) == nil)
    }

    @Test func aTurnStopsBetweenStepsAndGoesOnWhenWaived() async throws {
        let registry = try agentRegistry()
        let provider = ScriptedProvider([
            ScriptedProvider.Response([
                .toolCall(ToolCall(id: "c1", name: "calculator", arguments: #"{"expression":"1+1"}"#)),
                .usage(Usage(promptTokens: 80, completionTokens: 40)),
            ]),
            .text("It is 2."),
        ])
        var configuration = AgentConfiguration()
        configuration.budgets.turn = BudgetLimits(tokens: 100)
        let session = AgentSession(skills: registry, provider: provider, configuration: configuration)
        let events = await collect(session.send("what is 1+1"))
        let reached = BudgetReached(scope: .turn, kind: .tokens, used: 120, limit: 100)
        #expect(events.last == .finished(.budgetReached(reached)))
        #expect(session.conversation.unansweredToolCalls.isEmpty, "the call asked for has its result")
        #expect(
            FinishReason.budgetReached(reached).explanation
                == "stopped: this turn has used 120 tokens of 100 (the turn.tokens budget)")
        session.waive(reached, forSession: false)
        let more = await collect(session.continueTurn())
        #expect(more.last == .finished(.answered))
        #expect(session.use.turn.toolCalls == 1 && session.use.session.tokens == 120)
    }

    /// A turn budget of 3 skill calls let 40 calls of one model response run: checked only between steps. Now the
    /// first 3 run, the rest are answered "not run", and the turn ends on the budget.
    @Test func aBudgetOfCallsHoldsWithinOneResponse() async throws {
        let registry = try agentRegistry()
        let calls = (1...8).map { index in ("calculator", #"{"expression":"\#(index)+1"}"#) }
        let provider = ScriptedProvider([.calls(calls), .text("done")])
        var configuration = AgentConfiguration()
        configuration.budgets.turn = BudgetLimits(toolCalls: 3)
        let session = AgentSession(skills: registry, provider: provider, configuration: configuration)
        let events = await collect(session.send("add them all"))
        let reached = BudgetReached(scope: .turn, kind: .toolCalls, used: 3, limit: 3)
        #expect(events.last == .finished(.budgetReached(reached)))
        let results = session.conversation.messages.filter { $0.role == .tool }.map(\.content)
        #expect(results.prefix(3) == ["2", "3", "4"], "\(results)")
        #expect(
            Array(results.dropFirst(3))
                == Array(repeating: "not run: the turn's budget of 3 skill calls is used up", count: 5))
        #expect(session.use.turn.toolCalls == 3)
        #expect(session.conversation.unansweredToolCalls.isEmpty, "every call asked for has its result")
    }

    /// A composite counts as a call and each of its steps as one more, checked before each step: with a turn budget
    /// of 3, a composite of 4 calculations stops at its third step (one composite ran 25 steps on a budget of 5).
    @Test func aCompositesStepsCountAgainstTheBudgetOfCalls() async throws {
        let registry = try agentRegistry()
        let folder = Paths.temporaryDirectory("budget-composite")
        let file = folder + "/four_sums.skill.json"
        try """
        {"id": "four_sums", "description": "Computes four sums.", "input_schema": {"type": "object"},
         "steps": [{"call": "calculator", "with": {"expression": "1+1"}}, {"call": "calculator", "with": {"expression": "2+2"}},
                   {"call": "calculator", "with": {"expression": "3+3"}}, {"call": "calculator", "with": {"expression": "4+4"}}]}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        _ = try registry.load(file: file).get()
        let provider = ScriptedProvider([.calls([("four_sums", "{}")]), .text("done")])
        var configuration = AgentConfiguration()
        configuration.budgets.turn = BudgetLimits(toolCalls: 3)
        let session = AgentSession(skills: registry, provider: provider, configuration: configuration)
        _ = await collect(session.send("sum them"))
        let results = session.conversation.messages.filter { $0.role == .tool }.map(\.content)
        #expect(
            results.first?.hasPrefix(
                "error: four_sums stopped at step 3 of 4 (calculator): not run: the turn's budget of 3 skill calls is "
                    + "used up, a composite's steps counted") == true, "\(results)")
        #expect(session.use.turn.toolCalls == 3)
    }
}
