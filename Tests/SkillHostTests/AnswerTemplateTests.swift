import Foundation
import SkillJSON
import TestSupport
import Testing

@testable import SkillHost

/// A skill's sentence for its result (`skill_descriptor.answer`, ABI 1.3): what a template may say, and how a
/// stranger's template is refused.
struct AnswerTemplateTests {
    func render(_ template: String, _ result: String, _ arguments: String = "{}") throws -> String? {
        try AnswerTemplate(template).render(
            result: try JSONValue(parsing: result), arguments: try JSONValue(parsing: arguments)
        ) { "\($0.doubleValue ?? 0)" }
    }

    @Test func slotsAndFiltersFillASentence() throws {
        let clock =
            #"{"date":"2026-12-06","time":"09:11:55","time_zone":"America/New_York","utc_offset":"-05:00","weekday":"Sunday"}"#
        #expect(
            try render(
                "It's {time|time} on {weekday} {date|date} in {time_zone|place} (UTC{utc_offset|offset}).", clock)
                == "It's 09:11 on Sunday 6 December 2026 in New York (UTC-5).")
        #expect(try render("{args.expression} = {result}", "60", #"{"expression":"(23+7)*2"}"#) == "(23+7)*2 = 60.0")
        #expect(try render("{result|count} notes: {result}", #"["a","b"]"#) == "2 notes: a, b")
        #expect(
            try render("{n|plural:line} and {m|plural:child:children}", #"{"n":1,"m":3}"#)
                == "1.0 line and 3.0 children")
        #expect(try render("{owner.name} {{literally}}", #"{"owner":{"name":"Ada"}}"#) == "Ada {literally}")
        #expect(try render("{result.result}", #"{"result":true}"#) == "yes")
        #expect(try render("UTC{o|offset}", #"{"o":"+05:30"}"#) == "UTC+5:30")
        #expect(try render("{t|time}", #"{"t":"2026-12-06T21:05:00+09:00"}"#) == "21:05")
    }

    /// A result that lacks what a slot names, or holds something a filter cannot read, is not half filled.
    @Test func aResultWithoutTheSlotsValueIsShownItsOwnWay() throws {
        #expect(try render("Added note {id}", #"{"title":"x"}"#) == nil)
        #expect(try render("{when|date}", #"{"when":"soon"}"#) == nil)
        #expect(try render("{owner}", #"{"owner":{"name":"Ada"}}"#) == nil)
        #expect(try render("{args.missing}", "1") == nil)
        #expect(try render("{x}", #"{"x":"a\u0007b"}"#) == "ab")
    }

    @Test func aTemplateThatCannotBeUsedIsRefusedInOneSentence() {
        func refusal(_ text: String) -> String? {
            do {
                _ = try AnswerTemplate(text)
                return nil
            } catch {
                return error.description
            }
        }
        #expect(
            refusal("{total|money}")
                == "answer template slot “{total|money}” names the unknown filter “money”; use one of time, date, "
                + "place, offset, count, plural:WORD")
        #expect(refusal("{total") == "answer template opens a slot that never closes; write “{{” for a brace")
        #expect(refusal("a } b") == "answer template has a lone “}” at character 3; write “}}” for a brace")
        #expect(
            refusal("{a b}")
                == "answer template slot “{a b}” is not a name; write {result}, {args.NAME} or a member of the result "
                + "such as {total}")
        #expect(refusal("{args}") == "answer template slot “{args}” names no argument; write {args.NAME}")
        #expect(refusal(String(repeating: "x", count: 513)) == "answer template is 513 bytes; keep it within 512")
        #expect(
            refusal(String(repeating: "{a}", count: 17))
                == "answer template has more than 16 slots; say the rest of the result in fewer")
        #expect(
            refusal("line\nbreak") == "answer template holds the control character U+A; write it as one line of text")
        #expect(refusal("{a|plural:}") != nil)
        #expect(refusal("{a|time|date}") == "answer template slot “{a|time|date}” has more than one filter")
    }
}
