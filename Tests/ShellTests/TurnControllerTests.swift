import Agent
import SessionUI
import Testing

/// The shell's turn choreography, event by event.
struct TurnControllerTests {
    @Test func aTurnRunsAsksAndFinishes() {
        var turn = TurnController()
        #expect(turn.isOver)
        turn.start()
        #expect(turn.state == .running)
        #expect(!turn.isOver)
        let asked = turn.beginAsking()
        #expect(asked)
        #expect(turn.state == .asking)
        turn.endAsking()
        #expect(turn.state == .running)
        turn.finish(.answered)
        #expect(turn.isOver)
        #expect(turn.reason == .answered)
    }

    @Test func ctrlCCancelsOnceAndNothingIsAskedAfterIt() {
        var turn = TurnController()
        turn.start()
        _ = turn.beginAsking()
        let first = turn.interrupt()
        #expect(first == .cancelTurn, "Ctrl-C at a confirmation cancels the turn")
        turn.endAsking()
        #expect(turn.state == .cancelling, "the answer does not bring a cancelled turn back")
        let second = turn.interrupt()
        #expect(second == .ignore, "a second Ctrl-C does nothing more")
        let askedAfter = turn.beginAsking()
        #expect(!askedAfter, "a cancelled turn asks nothing")
        #expect(!turn.isOver, "the thread still waits for the turn's task")
        turn.finish(.cancelled)
        #expect(turn.reason == .cancelled)
        let late = turn.interrupt()
        #expect(late == .ignore)
    }

    @Test func startingATurnWhileOneRunsIsAProgrammingError() async {
        await #expect(processExitsWith: .failure) {
            var turn = TurnController()
            turn.start()
            turn.start()
        }
    }
}
