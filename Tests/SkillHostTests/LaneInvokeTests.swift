import SkillJSON
import Testing

@testable import SkillHost

/// The lane's own form of a call and of its success: what the host writes is what the worker reads, whatever the
/// context holds, and bytes that are not one are refused rather than misread.
struct LaneInvokeTests {
    @Test func aCallRoundTrips() {
        let call = LaneInvoke.Call(
            id: 42, skill: "calc_eval", context: "{\"session\":\"a\\tb\"}\t\n", arguments: #"{"expression":"(23+7)*2"}"#
        )
        let bytes = Array(LaneInvoke.encode(call).utf8)
        #expect(LaneInvoke.isCall(bytes))
        #expect(LaneInvoke.decode(bytes) == call)
        let empty = LaneInvoke.Call(id: 1, skill: "s", context: "", arguments: "")
        #expect(LaneInvoke.decode(Array(LaneInvoke.encode(empty).utf8)) == empty)
    }

    @Test func brokenCallsAreRefused() {
        for text in ["C", "Cx\ts\t0\t{}", "C1\ts", "C1\ts\t-1\t{}", "C1\ts\t99\t{}", #"{"jsonrpc":"2.0"}"#] {
            #expect(LaneInvoke.decode(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func aSuccessRoundTrips() {
        let result: JSONValue = ["value": 60, "text": "tab\there"]
        let bytes = Array(LaneInvoke.encodeSuccess(id: 7, result: result).utf8)
        #expect(LaneInvoke.isSuccess(bytes))
        #expect(LaneInvoke.decodeSuccess(bytes)?.id == 7)
        #expect(LaneInvoke.decodeSuccess(bytes)?.result == result)
        for text in ["O", "O7", "Ox\t1", "O7\t{", "O7\tnot json"] {
            #expect(LaneInvoke.decodeSuccess(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func aResultTextRoundTripsUndecoded() {
        let bytes = Array(LaneInvoke.encodeText(id: 9, text: "not json\t{").utf8)
        #expect(LaneInvoke.decodeText(bytes)?.id == 9)
        #expect(LaneInvoke.decodeText(bytes)?.result == Array("not json\t{".utf8))
        #expect(LaneInvoke.decodeText(Array(LaneInvoke.encodeText(id: 1, text: "").utf8))?.result == [])
        for text in ["R", "R9", "Rx\t1", "O9\t1", "C9\ts\t0\t"] {
            #expect(LaneInvoke.decodeText(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
