import Foundation
import Synchronization

/// A request read once for every tool the router considers: the text in the forms the readers need and what was
/// found in it (numbers, zones, dates, times, arithmetic, quoted text, the changes it asks for).
struct RouterRequest {
    /// As typed.
    let text: String
    let terms: Set<String>
    /// Text given explicitly: quoted, or after a colon ("summarize this: …"). Numbers and names inside it belong
    /// to it, not to other arguments.
    let payload: String?
    /// The request without the payload, numbers in words turned into digits.
    let head: String
    let numbers: [NumberMention]
    let zones: [ZoneNames.Mention]
    let dates: [String]
    let times: [String]
    /// The zone a clock time is given in, when two or more zones are named: X of "from X to Y", else the one
    /// written next to the first time ("9am in London", "London 9am"), else the one after "from". Nil when nothing
    /// says.
    let sourceZone: String?
    let expression: String?
    let changes: Set<Lexicon.Change>

    struct NumberMention {
        let value: Double
        /// The folded words right before and after it ("2 sentences", "note 3").
        let before: String
        let after: String
        /// The nearest word before it that is not a stop word, within three words and not past another number
        /// ("the bill is 84.50" → bill), for naming it. (Not after it: in "a 3 and b 4" the b is the 4's.)
        var near: [String] = []
    }

    init(_ original: String, now: Date = Date(), timeZone: TimeZone = .current) {
        let original = original.trimmingCharacters(in: .whitespacesAndNewlines)
        text = original
        terms = Set(Lexicon.terms(String(original.prefix(2000))))
        // The payload is kept as written ("One. Two." stays words); the rest has numbers in words as digits.
        let payload = Self.payload(in: original)
        self.payload = payload?.text
        // Only the first 2,000 characters are read for arguments: a request is a sentence, and every reader
        // below is linear in what it is given.
        let written = Lexicon.digits(
            String((payload.map { original.replacingCharacters(in: $0.range, with: " ") } ?? original).prefix(2000)))
        // A request for a change keeps its numbers as written ("delete note 5 feet 10 inches" is note 5, or nothing).
        // (Combining rewrites only numbers and units, never the words that ask for a change.)
        let changes = Lexicon.requestedChanges(in: written)
        self.changes = changes
        let head = changes.isEmpty ? Self.combiningQuantities(written) : written
        self.head = head
        numbers = Self.numbers(in: head)
        zones = ZoneNames.mentions(in: head)
        dates = Self.dates(in: head, now: now, timeZone: timeZone)
        let clockTimes = Self.timeMentions(in: head)
        times = clockTimes.map(\.value)
        sourceZone = Self.sourceZone(zones, times: clockTimes, in: head)
        expression =
            Arithmetic.expression(in: head)
            ?? payload.flatMap { Arithmetic.expression(in: String($0.text.prefix(2000))) }
    }

    /// Quantities written in two units, as people write heights, weights and durations ("5 feet 10 inches",
    /// "6 lb 4 oz", "1 hour and 30 minutes", "1 m 80 cm"), as one number of the smaller unit ("70 inches"): one value a
    /// conversion can take.
    static let compoundUnits: [(large: String, small: String, factor: Double, name: String)] = [
        (#"(?:feet|foot|ft)"#, #"(?:inches|inch|in)"#, 12, "inches"),
        (#"(?:pounds|pound|lbs|lb)"#, #"(?:ounces|ounce|oz)"#, 16, "ounces"),
        (#"stone"#, #"(?:pounds|pound|lbs|lb)"#, 14, "pounds"),
        (#"(?:hours|hour|hrs|hr|h)"#, #"(?:minutes|minute|mins|min)"#, 60, "minutes"),
        (#"(?:minutes|minute|mins|min)"#, #"(?:seconds|second|secs|sec|s)"#, 60, "seconds"),
        (#"(?:metres|meters|metre|meter|m)"#, #"(?:centimetres|centimeters|centimetre|centimeter|cm)"#, 100, "cm"),
        (#"(?:miles|mile|mi)"#, #"(?:yards|yard|yd)"#, 1760, "yards"),
        (#"(?:kilograms|kilogram|kilos|kilo|kgs|kg)"#, #"(?:grams|gram|g)"#, 1000, "grams"),
    ]

    static func combiningQuantities(_ text: String) -> String {
        var result = text
        for unit in compoundUnits {
            let pattern =
                #"(?i)\b(\d+(?:\.\d+)?)\s*"# + unit.large + #"\.?\s*(?:,\s*|and\s+)?(\d+(?:\.\d+)?)\s*"# + unit.small
                + #"\b"#
            for match in ArgumentText.groupsWithOffsets(pattern, in: result).reversed() {
                guard let large = Double(match.groups[0]), let small = Double(match.groups[1]) else { continue }
                // A number that names an item ("note 5", "#5", "id 5") is no quantity.
                let before = String(result.utf16.prefix(match.offset)) ?? ""
                let previous = Lexicon.words(Lexicon.fold(before)).last ?? ""
                if before.trimmingCharacters(in: .whitespaces).hasSuffix("#")
                    || ["note", "notes", "task", "tasks", "item", "items", "id", "number", "no", "nr"].contains(
                        previous)
                {
                    continue
                }
                let total = large * unit.factor + small
                let number = total.rounded() == total && abs(total) < 1e15 ? String(Int64(total)) : String(total)
                let start = String.Index(utf16Offset: match.offset, in: result)
                guard
                    let range = result.range(
                        of: pattern, options: [.regularExpression, .caseInsensitive], range: start..<result.endIndex)
                else { continue }
                result.replaceSubrange(range, with: "\(number) \(unit.name)")
            }
        }
        return result
    }

    /// Quoted text, or what follows a colon that is not part of a clock time.
    static func payload(in text: String) -> (text: String, range: Range<String.Index>)? {
        for pattern in [#""([^"]+)""#, #"“([^”]+)”"#, #"(?<![\w])'([^']+)'(?![\w])"#] {
            if let match = ArgumentText.firstMatch(pattern, in: text) { return match }
        }
        if let colon = text.range(of: #":(?!\d)"#, options: .regularExpression) {
            let rest = text[colon.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
            // "date1: 2026-01-01 date2: 2026-12-25" is a list of labelled values, not one text after a colon: labels
            // that are argument names (a digit or an underscore in them), before this colon and again after it.
            // ("Dear John: I am leaving" after "this:" is text.)
            let label = String(
                text[..<colon.lowerBound].reversed().prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                    .reversed())
            let labelled =
                Self.isArgumentLabel(label)
                && rest.split(whereSeparator: \.isWhitespace).contains {
                    $0.hasSuffix(":") && Self.isArgumentLabel(String($0.dropLast()))
                }
            if !rest.isEmpty, !labelled { return (rest, colon.lowerBound..<text.endIndex) }
        }
        return nil
    }

    /// Whether a word looks like an argument's name written as a label: a letter first, then letters, digits or
    /// underscores, with a digit or an underscore among them (`date1`, `start_date`).
    static func isArgumentLabel(_ word: String) -> Bool {
        guard let first = word.first, first.isASCII, first.isLetter, word.count <= 64 else { return false }
        return word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            && word.contains { $0.isNumber || $0 == "_" }
    }

    /// Numbers in the order written, not those inside dates, clock times or zone names.
    static func numbers(in text: String) -> [NumberMention] {
        var cleaned = ArgumentText.replacing(
            #"\d{4}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?)?|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b"#, with: " ",
            in: thousands(text), caseInsensitive: true)
        cleaned = ArgumentText.replacing(#"(\d),(\d{3})\b"#, with: "$1$2", in: cleaned)
        // "2 and a half cups", "half a cup", "7%" (a word, so that it can name the number).
        cleaned = ArgumentText.replacing(#"\b(\d+) and a half\b"#, with: "$1.5", in: cleaned)
        cleaned = ArgumentText.replacing(#"\b(?:a )?half an? "#, with: "0.5 ", in: cleaned, caseInsensitive: true)
        cleaned = ArgumentText.replacing(#"(\d)\s*%"#, with: "$1 percent", in: cleaned)
        guard let regex = ArgumentText.regex(#"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*/)"#) else { return [] }
        let range = NSRange(cleaned.startIndex..<cleaned.endIndex, in: cleaned)
        return regex.matches(in: cleaned, range: range).compactMap { match in
            guard let r = Range(match.range, in: cleaned), let value = Double(cleaned[r]) else { return nil }
            let preceding = Lexicon.words(Lexicon.fold(String(cleaned[..<r.lowerBound])))
            let following = Lexicon.words(Lexicon.fold(String(cleaned[r.upperBound...])))
            let hash = cleaned[..<r.lowerBound].last == "#"
            let content = { (word: String) in !Lexicon.stopWords.contains(word) && Double(word) == nil }
            let near = [
                preceding.suffix(3).reversed().prefix { Double($0) == nil }.first(where: content)
            ].compactMap { $0 }
            return NumberMention(
                value: value, before: hash ? "#" : preceding.last ?? "", after: following.first ?? "", near: near)
        }
    }

    /// "15k" and "200K" as the numbers they stand for (15000, 200000).
    static func thousands(_ text: String) -> String {
        guard let regex = ArgumentText.regex(#"\b(\d+(?:\.\d+)?)[kK]\b"#) else { return text }
        var result = text
        let matches = regex.matches(in: text, range: NSRange(text.startIndex..<text.endIndex, in: text))
        for match in matches.reversed() {
            guard let whole = Range(match.range, in: result), let digits = Range(match.range(at: 1), in: result),
                let value = Double(result[digits]), value < 1e12
            else { continue }
            let thousand = value * 1000
            result.replaceSubrange(
                whole, with: thousand.rounded() == thousand ? String(Int64(thousand)) : String(thousand))
        }
        return result
    }

    static let months = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
        "november", "december",
    ]

    /// Calendar dates as YYYY-MM-DD: written so, or "July 20, 1969", "20 July 1969", "today", "tomorrow",
    /// "yesterday".
    static func dates(in text: String, now: Date, timeZone: TimeZone) -> [String] {
        var found: [(Int, String)] = []
        let lowered = text.lowercased()
        for match in ArgumentText.matchesWithOffsets(#"\b\d{4}-\d{2}-\d{2}\b"#, in: lowered) {
            found.append((match.offset, match.text))
        }
        let month = "(" + months.map { String($0.prefix(3)) + "[a-z]*" }.joined(separator: "|") + ")"
        for match in ArgumentText.groupsWithOffsets(
            month + #"\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b"#, in: lowered)
        {
            if let date = isoDate(year: match.groups[2], month: match.groups[0], day: match.groups[1]) {
                found.append((match.offset, date))
            }
        }
        for match in ArgumentText.groupsWithOffsets(
            #"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?"# + month + #",?\s+(\d{4})\b"#, in: lowered)
        {
            if let date = isoDate(year: match.groups[2], month: match.groups[1], day: match.groups[0]) {
                found.append((match.offset, date))
            }
        }
        // "31/12/2026" (day first) or "12/31/2026" (month first) when one of the two cannot be a month; "04/05/2026"
        // could be either, and is left alone.
        for match in ArgumentText.groupsWithOffsets(#"\b(\d{1,2})[/.](\d{1,2})[/.](\d{4})\b"#, in: lowered) {
            guard let first = Int(match.groups[0]), let second = Int(match.groups[1]), let year = Int(match.groups[2])
            else { continue }
            let (day, month) = first > 12 ? (first, second) : second > 12 ? (second, first) : (0, 0)
            guard (1...12).contains(month), (1...31).contains(day) else { continue }
            found.append((match.offset, String(format: "%04d-%02d-%02d", year, month, day)))
        }
        // Days every calendar names, with their year: "christmas 2027", "christmas eve 2026", "new year's day 2027".
        for (pattern, monthDay) in holidays {
            for match in ArgumentText.groupsWithOffsets(pattern + #"\s+(?:of\s+|in\s+)?(\d{4})\b"#, in: lowered) {
                found.append((match.offset, match.groups[0] + "-" + monthDay))
            }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        for (word, days) in [("today", 0), ("tomorrow", 1), ("yesterday", -1)] {
            for match in ArgumentText.matchesWithOffsets(#"\b"# + word + #"\b"#, in: lowered) {
                guard let day = calendar.date(byAdding: .day, value: days, to: now) else { continue }
                let parts = calendar.dateComponents([.year, .month, .day], from: day)
                if let y = parts.year, let m = parts.month, let d = parts.day {
                    found.append((match.offset, String(format: "%04d-%02d-%02d", y, m, d)))
                }
            }
        }
        return found.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Days with a fixed date, as people name them (the longer names first: "christmas eve" before "christmas").
    static let holidays: [(pattern: String, monthDay: String)] = [
        (#"\bchristmas\s+eve"#, "12-24"), (#"\bchristmas(?:\s+day)?"#, "12-25"), (#"\bboxing\s+day"#, "12-26"),
        (#"\bnew\s+year'?s\s+eve"#, "12-31"), (#"\bnew\s+year'?s(?:\s+day)?"#, "01-01"),
        (#"\bhalloween"#, "10-31"), (#"\bvalentine'?s(?:\s+day)?"#, "02-14"),
    ]

    static func isoDate(year: String, month: String, day: String) -> String? {
        guard let y = Int(year), let d = Int(day), (1...31).contains(d),
            let m = months.firstIndex(where: { $0.hasPrefix(String(month.prefix(3))) })
        else { return nil }
        return String(format: "%04d-%02d-%02d", y, m + 1, d)
    }

    /// Clock times as HH:MM (or a whole local date and time when one is written), from "15:00", "9:30 pm", "9am".
    static func times(in text: String) -> [String] { timeMentions(in: text).map(\.value) }

    /// Which of several zones a clock time belongs to (see `sourceZone`).
    static func sourceZone(_ zones: [ZoneNames.Mention], times: [(offset: Int, value: String)], in head: String)
        -> String?
    {
        guard zones.count >= 2 else { return nil }
        // "from X to Y" says it; else the zone written next to the time ("it is 9am in London"); else "from X".
        let words = Lexicon.words(Lexicon.fold(head))
        func preceded(_ mention: ZoneNames.Mention, by markers: Set<String>) -> Bool {
            mention.position > 0 && words.indices.contains(mention.position - 1)
                && markers.contains(words[mention.position - 1])
        }
        let from = zones.first { preceded($0, by: ["from"]) }
        if let from, zones.contains(where: { $0 != from && preceded($0, by: ["to", "into"]) }) { return from.zone }
        if let time = times.first {
            let offset = min(max(0, time.offset), head.utf16.count)
            let prefix = String(head[..<String.Index(utf16Offset: offset, in: head)])
            // Counted as ZoneNames counts: a written-out zone id ("America/Los_Angeles") is one word.
            var position = Lexicon.words(Lexicon.fold(prefix)).count
            for id in ArgumentText.matches(#"\b[A-Za-z][A-Za-z_\-]+(?:/[A-Za-z_\-]+){1,2}\b"#, in: prefix)
            where TimeZone(identifier: id) != nil {
                position -= max(0, Lexicon.words(Lexicon.fold(id)).count - 1)
            }
            // The nearest within three words; at equal distance the one after the time.
            let near = zones.map {
                (zone: $0.zone, distance: abs($0.position - position), after: $0.position >= position)
            }.filter { $0.distance <= 3 }
            if let zone = near.min(by: { ($0.distance, $0.after ? 0 : 1) < ($1.distance, $1.after ? 0 : 1) })?.zone {
                return zone
            }
        }
        return from?.zone
    }

    /// Clock times in the order written, with where each starts (UTF-16 offset in the lowered text).
    static func timeMentions(in text: String) -> [(offset: Int, value: String)] {
        var found: [(Int, String)] = []
        let lowered = text.lowercased()
        for match in ArgumentText.matchesWithOffsets(#"\b\d{4}-\d{2}-\d{2}[t ]\d{1,2}:\d{2}\b"#, in: lowered) {
            found.append((match.offset, match.text.replacingOccurrences(of: " ", with: "T").uppercased()))
        }
        let withoutDates = lowered.replacingOccurrences(
            of: #"\b\d{4}-\d{2}-\d{2}[t ]\d{1,2}:\d{2}\b"#, with: "", options: .regularExpression)
        guard found.isEmpty else { return found.map { (offset: $0.0, value: $0.1) } }
        for match in ArgumentText.groupsWithOffsets(
            #"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?![\w:])"#, in: withoutDates)
        {
            let hasMinutes = !match.groups[1].isEmpty
            let meridiem = match.groups[2]
            guard hasMinutes || !meridiem.isEmpty, var hour = Int(match.groups[0]), hour <= 24 else { continue }
            let minute = Int(match.groups[1]) ?? 0
            if meridiem.hasPrefix("p"), hour < 12 { hour += 12 }
            if meridiem.hasPrefix("a"), hour == 12 { hour = 0 }
            guard minute < 60 else { continue }
            found.append((match.offset, String(format: "%02d:%02d", hour, minute)))
        }
        for match in ArgumentText.matchesWithOffsets(#"\b(?:noon|midday|midnight)\b"#, in: withoutDates) {
            found.append((match.offset, match.text == "midnight" ? "00:00" : "12:00"))
        }
        return found.sorted { $0.0 < $1.0 }.map { (offset: $0.0, value: $0.1) }
    }
}

/// Regular-expression helpers for the router.
enum ArgumentText {
    static func matches(_ pattern: String, in text: String) -> [String] {
        matchesWithOffsets(pattern, in: text).map(\.text)
    }

    /// Compiled patterns, kept: the router's patterns are a fixed set (property names are escaped first, and
    /// the cache stops growing at 512 entries).
    private static let cache = Mutex<[String: NSRegularExpression]>([:])

    /// `text` with every match of `pattern` replaced by `template` ($1 for a group), the pattern compiled once.
    static func replacing(_ pattern: String, with template: String, in text: String, caseInsensitive: Bool = false)
        -> String
    {
        guard let regex = regex(pattern, caseInsensitive: caseInsensitive) else { return text }
        return regex.stringByReplacingMatches(
            in: text, range: NSRange(text.startIndex..<text.endIndex, in: text), withTemplate: template)
    }

    static func regex(_ pattern: String, caseInsensitive: Bool = false) -> NSRegularExpression? {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        if let cached = cache.withLock({ $0[key] }) { return cached }
        guard let regex = try? NSRegularExpression(pattern: pattern, options: caseInsensitive ? [.caseInsensitive] : [])
        else { return nil }
        cache.withLock { if $0.count < 512 { $0[key] = regex } }
        return regex
    }

    static func matchesWithOffsets(_ pattern: String, in text: String) -> [(offset: Int, text: String)] {
        guard let regex = regex(pattern) else { return [] }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range, in: text).map { (match.range.location, String(text[$0])) }
        }
    }

    /// Every match's capture groups ("" for a group that did not take part).
    static func groupsWithOffsets(_ pattern: String, in text: String) -> [(offset: Int, groups: [String])] {
        guard let regex = regex(pattern) else { return [] }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return regex.matches(in: text, range: range).map { match in
            let groups = (1..<max(1, match.numberOfRanges)).map { index in
                Range(match.range(at: index), in: text).map { String(text[$0]) } ?? ""
            }
            return (match.range.location, groups)
        }
    }

    /// The first match's first group and the whole match's range.
    static func firstMatch(_ pattern: String, in text: String) -> (text: String, range: Range<String.Index>)? {
        guard let regex = regex(pattern, caseInsensitive: true) else { return nil }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        guard let match = regex.firstMatch(in: text, range: range), let whole = Range(match.range, in: text) else {
            return nil
        }
        let group = match.numberOfRanges > 1 ? Range(match.range(at: 1), in: text).map { String(text[$0]) } : nil
        return (group ?? String(text[whole]), whole)
    }
}
