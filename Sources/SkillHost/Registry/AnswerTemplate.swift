import Foundation
import SkillJSON

/// How a skill's result reads as a sentence (`skill_descriptor.answer`, since ABI 1.3; the Swift SDK's `answer`),
/// such as `It's {time|time} on {weekday} {date|date} in {time_zone|place} (UTC{utc_offset|offset}).`
///
/// A slot names a member of the result object (`{words}`, `{owner.name}`), the whole result (`{result}`) or an
/// argument of the call (`{args.expression}`), optionally through one filter: `time` ("09:11" from "09:11:55" or a
/// date-time), `date` ("6 December 2026" from "2026-12-06" or a date-time), `place` ("New York" from
/// "America/New_York"), `offset` ("+9" from "+09:00", "+5:30" from "+05:30"), `count` (the items of a list) or
/// `plural:WORD` ("1 line", "3 lines"; `plural:child:children` for another plural).
/// `{{` and `}}` are braces. A template is a stranger's text: it is checked at load (at most 512 bytes and 16 slots,
/// no control characters, known filters, not empty); a result that lacks a slot's value is shown the offline
/// router's own way, never half filled, and a failure never goes through the template. Part of what a pin approves.
package struct AnswerTemplate: Sendable, Equatable {
    package enum Filter: Sendable, Equatable {
        case time, date, place, offset, count
        /// `plural:line` → "1 line", "3 lines"; `plural:child:children` for other plurals.
        case plural(singular: String, plural: String)

        static let names = "time, date, place, offset, count, plural:WORD"
    }

    enum Part: Sendable, Equatable {
        case text(String)
        /// `path` is empty for the whole result.
        case slot(arguments: Bool, path: [String], filter: Filter?)
    }

    /// The template as the skill declared it.
    package let text: String
    let parts: [Part]

    static let maximumBytes = 512
    static let maximumSlots = 16

    /// Checks `text`; the error is one sentence saying what is wrong and where.
    package init(_ text: String) throws(AnswerTemplateError) {
        guard !text.isEmpty else { throw AnswerTemplateError("is empty; leave it NULL for none") }
        guard text.utf8.count <= Self.maximumBytes else {
            throw AnswerTemplateError("is \(text.utf8.count) bytes; keep it within \(Self.maximumBytes)")
        }
        if let bad = text.unicodeScalars.first(where: { $0.properties.generalCategory == .control }) {
            throw AnswerTemplateError(
                "holds the control character U+\(String(bad.value, radix: 16, uppercase: true)); write it as one line "
                    + "of text")
        }
        var parts: [Part] = []
        var literal = ""
        var rest = Substring(text)
        var slots = 0
        while let first = rest.first {
            if rest.hasPrefix("{{") || rest.hasPrefix("}}") {
                literal.append(first)
                rest = rest.dropFirst(2)
            } else if first == "}" {
                throw AnswerTemplateError(
                    "has a lone “}” at character \(text.distance(from: text.startIndex, to: rest.startIndex) + 1); write “}}” for a brace"
                )
            } else if first == "{" {
                guard let close = rest.firstIndex(of: "}") else {
                    throw AnswerTemplateError("opens a slot that never closes; write “{{” for a brace")
                }
                let inside = String(rest[rest.index(after: rest.startIndex)..<close])
                parts.append(.text(literal))
                literal = ""
                parts.append(try Self.slot(inside))
                slots += 1
                guard slots <= Self.maximumSlots else {
                    throw AnswerTemplateError(
                        "has more than \(Self.maximumSlots) slots; say the rest of the result in fewer")
                }
                rest = rest[rest.index(after: close)...]
            } else {
                literal.append(first)
                rest = rest.dropFirst()
            }
        }
        parts.append(.text(literal))
        self.text = text
        self.parts = parts.filter { $0 != .text("") }
    }

    static func slot(_ inside: String) throws(AnswerTemplateError) -> Part {
        let pieces = inside.split(separator: "|", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard pieces.count <= 2 else { throw AnswerTemplateError("slot “{\(inside)}” has more than one filter") }
        var filter: Filter?
        if pieces.count == 2 {
            let words = pieces[1].split(separator: ":", omittingEmptySubsequences: false).map(String.init)
            switch words[0] {
            case "time" where words.count == 1: filter = .time
            case "date" where words.count == 1: filter = .date
            case "place" where words.count == 1: filter = .place
            case "offset" where words.count == 1: filter = .offset
            case "count" where words.count == 1: filter = .count
            case "plural"
            where (2...3).contains(words.count) && words.dropFirst().allSatisfy({ !$0.isEmpty && $0.count <= 40 }):
                filter = .plural(singular: words[1], plural: words.count == 3 ? words[2] : words[1] + "s")
            default:
                throw AnswerTemplateError(
                    "slot “{\(inside)}” names the unknown filter “\(pieces[1])”; use one of \(Filter.names)")
            }
        }
        var path = pieces[0].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard path.count <= 4,
            path.allSatisfy({ name in
                !name.isEmpty && name.utf8.count <= 64
                    && name.unicodeScalars.allSatisfy {
                        $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" || $0 == "-"
                    }
            })
        else {
            throw AnswerTemplateError(
                "slot “{\(inside)}” is not a name; write {result}, {args.NAME} or a member of the result such as {total}"
            )
        }
        if path == ["result"] { return .slot(arguments: false, path: [], filter: filter) }
        if path.first == "result" { path.removeFirst() }
        if path.first == "args" {
            guard path.count >= 2 else {
                throw AnswerTemplateError("slot “{\(inside)}” names no argument; write {args.NAME}")
            }
            return .slot(arguments: true, path: Array(path.dropFirst()), filter: filter)
        }
        return .slot(arguments: false, path: path, filter: filter)
    }

    /// The sentence for `result` of a call with `arguments`, the result's numbers written by `number` (rounded as
    /// asked, say) and the arguments' by `argumentNumber` (as given); nil when a slot's value is missing or is an
    /// object (the caller then shows the result its own way). At most 2,000 characters.
    package func render(
        result: JSONValue, arguments: JSONValue, number: (JSONValue) -> String,
        argumentNumber: ((JSONValue) -> String)? = nil
    ) -> String? {
        var sentence = ""
        for part in parts {
            switch part {
            case .text(let text): sentence += text
            case .slot(let inArguments, let path, let filter):
                var value: JSONValue? = inArguments ? arguments : result
                for name in path { value = value?.objectValue?[name] }
                guard let value else { return nil }
                let shown: String?
                if inArguments, let argumentNumber {
                    shown = Self.show(value, filter: filter, number: argumentNumber)
                } else {
                    shown = Self.show(value, filter: filter, number: number)
                }
                guard let shown else { return nil }
                sentence += shown
            }
        }
        return sentence.count > 2_000 ? String(sentence.prefix(1_999)) + "…" : sentence
    }

    static func show(_ value: JSONValue, filter: Filter?, number: (JSONValue) -> String) -> String? {
        switch (value, filter) {
        case (.array(let items), .count?): return String(items.count)
        case (.int, .plural(let one, let many)?), (.double, .plural(let one, let many)?):
            return number(value) + " " + (value.doubleValue == 1 ? one : many)
        case (.string(let text), .time?): return Self.time(text)
        case (.string(let text), .date?): return Self.date(text)
        case (.string(let text), .place?): return Self.place(text)
        case (.string(let text), .offset?): return Self.offset(text)
        case (_, .some): return nil
        case (.string(let text), nil):
            let kept = text.unicodeScalars.filter { $0.properties.generalCategory != .control }
            return String(String.UnicodeScalarView(kept.prefix(500))) + (kept.count > 500 ? "…" : "")
        case (.int, nil), (.double, nil): return number(value)
        case (.bool(let flag), nil): return flag ? "yes" : "no"
        case (.array(let items), nil):
            let shown = items.prefix(20).compactMap { show($0, filter: nil, number: number) }
            return shown.count == min(items.count, 20)
                ? shown.joined(separator: ", ") + (items.count > 20 ? ", …" : "") : nil
        case (.null, nil), (.object, nil): return nil
        }
    }

    /// "09:11" from "09:11:55", "09:11" or "2026-12-06T09:11:55+09:00".
    static func time(_ text: String) -> String? {
        let clock = text.split(separator: "T").last.map(String.init) ?? text
        let digits = Array(clock.utf8.prefix(5))
        guard digits.count == 5, digits[2] == UInt8(ascii: ":"),
            [0, 1, 3, 4].allSatisfy({ (48...57).contains(digits[$0]) })
        else { return nil }
        return String(decoding: digits, as: UTF8.self)
    }

    static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]

    /// "6 December 2026" from "2026-12-06" or a date-time starting with it.
    static func date(_ text: String) -> String? {
        let parts = text.prefix(10).split(separator: "-")
        guard text.utf8.count >= 10, parts.count == 3, let year = Int(parts[0]), let month = Int(parts[1]),
            let day = Int(parts[2]), (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        return "\(day) \(months[month - 1]) \(year)"
    }

    /// "New York" from "America/New_York", "UTC" from "UTC".
    static func place(_ text: String) -> String? {
        guard let last = text.split(separator: "/").last, !last.isEmpty else { return nil }
        return last.replacingOccurrences(of: "_", with: " ")
    }

    /// "+9" from "+09:00", "+5:30" from "+05:30", "-3" from "-03:00".
    static func offset(_ text: String) -> String? {
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let parts = text.dropFirst().split(separator: ":")
        guard (1...2).contains(parts.count), let hours = Int(parts[0]), (0...18).contains(hours) else { return nil }
        let minutes = parts.count == 2 ? Int(parts[1]) : 0
        guard let minutes, (0...59).contains(minutes) else { return nil }
        return "\(sign)\(hours)" + (minutes == 0 ? "" : ":" + (minutes < 10 ? "0" : "") + String(minutes))
    }
}

/// Why an answer template was refused: completes “answer template …”.
package struct AnswerTemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    package let description: String
    init(_ reason: String) { description = "answer template " + reason }
}
