import JSONRPC
import SkillJSON
import Testing

/// The id → waiter table both JSON-RPC clients keep.
struct PendingRequestsTests {
    @Test func answersFindTheirWaiterOnce() throws {
        var table = PendingRequests<String>()
        let first = table.add("first")
        let second = table.add("second")
        #expect(first != second)
        #expect(table.count == 2)
        let line = #"{"jsonrpc":"2.0","id":\#(second.text),"result":{"ok":true}}"#
        let answer = try #require(JSONRPCMessage(try JSONValue(parsing: line))?.answer)
        #expect(answer.id == second)
        #expect(table.remove(answer.id) == "second")
        #expect(table.remove(answer.id) == nil, "a second answer to the same id finds nobody")
        #expect(table.waiter(for: first) == "first")
        #expect(table.removeAll() == ["first"])
        #expect(table.isEmpty)
    }

    @Test func idsAreNeverReusedAndForeignIdsMatchNothing() {
        var table = PendingRequests<Int>()
        let unanswered = table.nextID()
        let id = table.add(1)
        #expect(id != unanswered)
        #expect(table.remove(JSONRPCID(rawText: #""1""#)) == nil, "a string id is not the number")
        #expect(table.remove(unanswered) == nil, "an id nobody waits for")
        let reserved = table.nextID()
        table.add(7, for: reserved)
        #expect(table.remove(reserved) == 7)
    }

    @Test func requestsAndNotificationsAreNoAnswers() throws {
        let request = JSONRPCMessage.request(id: JSONRPCID(3), method: "invoke", params: nil)
        let notification = JSONRPCMessage.notification(method: "progress", params: nil)
        #expect(request.answer == nil)
        #expect(notification.answer == nil)
        let failure = JSONRPCMessage.failure(id: JSONRPCID(4), error: JSONRPCError(.invalidParams, "bad"))
        guard case .failure(let error)? = failure.answer?.reply else {
            Issue.record("a failure answers with its error")
            return
        }
        #expect(error.message == "bad")
    }
}
