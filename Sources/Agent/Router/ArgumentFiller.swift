import Foundation
import SkillJSON

/// Fills one tool's arguments from a request, guided by its JSON Schema: each property gets a role from its
/// name, type, enum, pattern and description (an expression, a time zone, a date, a clock time, a choice, an id,
/// a number, free text), and each role reads its own kind of evidence.
///
/// For a tool that changes something (`strict`), every value must be stated: an id only as "note 3" / "#3" /
/// "id 3", a number only next to the argument's name, text only when the request gives some beyond the words
/// that name the action. A number in a maths question is never an id.
struct ArgumentFiller {
    let request: RouterRequest
    let tool: ToolDefinition
    /// The tool's own words (id, description, argument names), which are never taken as free text.
    let vocabulary: Set<String>
    /// Words of the tool's id and title that name what it acts on ("note", "task").
    let objectNouns: Set<String>
    let strict: Bool
    /// Items the plugins' state names, for an id the request gives by title ("the note about milk").
    var known: KnownItems = .none

    enum Role: Equatable {
        case expression, zone, date, time, choice, identifier, number, integer, boolean, text
    }

    static func role(of name: String, _ schema: JSONValue) -> Role {
        let lowered = name.lowercased()
        let description = (schema["description"]?.stringValue ?? "").lowercased()
        let types = types(of: schema)
        if schema["enum"]?.arrayValue?.isEmpty == false { return .choice }
        if types.contains("integer") || types.contains("number") {
            if lowered == "id" || lowered.hasSuffix("_id") || lowered.hasSuffix("id") && lowered.count <= 4
                || Lexicon.words(description).contains("id")
            {
                return .identifier
            }
            return types.contains("integer") ? .integer : .number
        }
        if types.contains("boolean") { return .boolean }
        let pattern = schema["pattern"]?.stringValue ?? ""
        if lowered.contains("expression") || lowered.contains("formula") || description.contains("expression") {
            return .expression
        }
        if lowered.contains("zone") || description.contains("time zone") || description.contains("iana")
            || lowered == "tz"
        {
            return .zone
        }
        // The name's words without digits: "date1", "start_date", "due_date_2" name a date; "updated" does not.
        let words = Set(lowered.filter { !$0.isNumber }.split(separator: "_").map(String.init))
        if words.contains("date") || schema["format"]?.stringValue == "date"
            || pattern.contains(#"\d{4}-\d{2}-\d{2}$"#) || description == "yyyy-mm-dd"
        {
            return .date
        }
        if words.contains("time") || schema["format"]?.stringValue == "time" { return .time }
        return .text
    }

    static func types(of schema: JSONValue) -> Set<String> {
        switch schema["type"] {
        case .string(let name)?: return [name]
        case .array(let names)?: return Set(names.compactMap(\.stringValue))
        default: return schema["enum"] != nil ? ["string"] : []
        }
    }

    /// A required argument the request gives no evidence for.
    struct Missing: Error, Equatable {
        let name: String
        /// The request names it but not plainly ("clear the list except what I bought"): no other skill is tried.
        var unclear = false
    }

    /// The arguments, or the first required one without evidence.
    func fill() -> Result<JSONObject, Missing> {
        guard let properties = tool.parameters["properties"]?.objectValue else { return .success(JSONObject()) }
        let required = Set((tool.parameters["required"]?.arrayValue ?? []).compactMap(\.stringValue))
        // Each number keeps its place in the request: a number attached to an argument's words is that
        // argument's, whatever order the schema lists them in.
        var numbers = Array(request.numbers.enumerated())
        let attachments = attachedNumbers(properties)
        var zones = request.zones.map(\.zone)
        var dates = request.dates
        var times = request.times
        var choices = ArgumentFiller.choiceMentions(in: request.head, properties: properties)
        var shaped: [TokenShape: [String]] = [:]
        var arguments = JSONObject()
        var textProperties: [String] = []
        // Ids first: the number they take is no longer free for other arguments.
        let ordered = properties.members.sorted {
            (Self.role(of: $0.key, $0.value) == .identifier ? 0 : 1)
                < (Self.role(of: $1.key, $1.value) == .identifier ? 0 : 1)
        }
        for (name, schema) in ordered {
            let role = Self.role(of: name, schema)
            var value: JSONValue?
            switch role {
            case .expression:
                value = request.expression.map { .string($0) }
            case .zone:
                // The zone a time is given in goes to the argument named as the source ("from"); the others
                // keep the order written.
                let source = request.sourceZone.flatMap { zones.firstIndex(of: $0) }
                if let source, Self.namesASource(name) {
                    value = .string(zones.remove(at: source))
                } else if let index = zones.indices.first(where: { $0 != source }) {
                    value = .string(zones.remove(at: index))
                }
            case .date:
                if !dates.isEmpty { value = .string(dates.removeFirst()) }
            case .time:
                if !times.isEmpty { value = .string(times.removeFirst()) }
            case .choice:
                let options = schema["enum"]?.arrayValue ?? []
                let candidates = choices.indices.filter { options.contains(choices[$0].value) }
                let preferred = name == "from" ? candidates.first { choices[$0].afterNumber } : nil
                if let index = preferred ?? candidates.first { value = choices.remove(at: index).value }
            case .identifier:
                if let index = numbers.firstIndex(where: { isReference($0.element) }) {
                    value = Self.number(numbers.remove(at: index).element.value, integer: true)
                } else if let id = known.id(named: request, nouns: objectNouns) {
                    value = .int(id)
                }
            case .number, .integer:
                let attached = attachments[name].flatMap { place in numbers.firstIndex { $0.offset == place } }
                let othersAttached = Set(attachments.filter { $0.key != name }.values)
                let next =
                    (required.contains(name) && !strict)
                    ? numbers.firstIndex {
                        (role == .number || $0.element.value.rounded() == $0.element.value)
                            && Self.within($0.element.value, schema)
                            && !(takesIdentifier && isReference($0.element)) && !othersAttached.contains($0.offset)
                    } : nil
                // A number written with another unit is not this argument's ("72 fahrenheit" is not
                // `celsius_to_fahrenheit(celsius:)`, "5 km" not `fahrenheit_to_celsius(fahrenheit:)`).
                if attached == nil, let index = next {
                    let word = numbers[index].element.after
                    let namedUnit = Self.unitName(name)
                    if namedUnit != nil, Self.unitName(word) != nil, Self.unitName(word) != namedUnit {
                        return .failure(Missing(name: name))
                    }
                }
                if let index = attached ?? next {
                    value = Self.number(numbers.remove(at: index).element.value, integer: role == .integer)
                }
            case .boolean:
                switch flag(name, required: required.contains(name)) {
                case .value(let flag)?: value = .bool(flag)
                // A change is not made on a guess about what the person meant.
                case .unclear? where strict: return .failure(Missing(name: name, unclear: true))
                case .unclear?, nil: break
                }
            case .text:
                guard let shape = TokenShape.of(argument: name, schema, toolDescription: tool.description) else {
                    textProperties.append(name)
                    continue
                }
                // A hex colour, an address, a network, a numeral: only a value of its shape, each used once.
                var values = shaped[shape] ?? shape.values(in: request.text)
                if !values.isEmpty { value = .string(values.removeFirst()) }
                shaped[shape] = values
            }
            if let value {
                arguments[name] = value
            } else if required.contains(name) {
                return .failure(Missing(name: name))
            }
        }
        if let missing = fillText(textProperties, required: required, into: &arguments) {
            return .failure(Missing(name: missing))
        }
        // Keep the schema's order.
        return .success(JSONObject(properties.keys.compactMap { key in arguments[key].map { (key, $0) } }))
    }

    /// What the request says of a boolean argument.
    enum Flag: Equatable {
        case value(Bool)
        /// It names the argument's words, but not plainly enough to set it ("don't … unless …", a question).
        case unclear
    }

    /// A yes or no the request gives for a boolean argument: its name's own words used in the request ("only the
    /// items already bought" → `only_bought: true`; "without symbols", "don't make it permanent" → false, a
    /// negation earlier in the same clause); unclear when the request also says "except", "unless", "but" or a
    /// negation elsewhere, or asks a question. For a required one without such words, "yes"/"true"/"on" or
    /// "no"/"false"/"off". Nil when the request says nothing of it.
    func flag(_ name: String, required: Bool) -> Flag? {
        let words = Lexicon.words(Lexicon.fold(request.head))
        let own = Set(
            Lexicon.words(Lexicon.fold(name.replacingOccurrences(of: "_", with: " "))).filter {
                !Lexicon.stopWords.contains($0) && !["only", "include", "use", "allow", "is", "has"].contains($0)
            }.map(Lexicon.stem))
        // "permanently" names `permanent` too.
        func named(_ word: String) -> Bool {
            own.contains(Lexicon.stem(word))
                || (word.hasSuffix("ly") && own.contains(Lexicon.stem(String(word.dropLast(2)))))
        }
        if !own.isEmpty, let index = words.firstIndex(where: named) {
            let clause = (words[..<index].lastIndex { ["and", "then", "or"].contains($0) } ?? -1) + 1
            let negated = words[clause..<index].contains { Lexicon.negations.contains($0) }
            let doubtful = words.indices.contains { position in
                ["except", "unless", "but", "apart", "besides"].contains(words[position])
                    || (Lexicon.negations.contains(words[position]) && !(clause..<index).contains(position))
            }
            return doubtful || request.text.contains("?") ? .unclear : .value(!negated)
        }
        guard required else { return nil }
        if !Set(words).isDisjoint(with: ["yes", "true", "on"]) { return .value(true) }
        if !Set(words).isDisjoint(with: ["no", "false", "off"]) { return .value(false) }
        return nil
    }

    /// The number each numeric argument is attached to, by its place in the request: a number next to a word of
    /// the argument's name ("5 years" → `years`), else next to a word of its description ("at 7 percent" → an
    /// `annual_rate` "in percent"; "borrow 15000" → a `principal`, "amount borrowed"). Each number goes to one
    /// argument, names before descriptions, in the schema's order.
    func attachedNumbers(_ properties: JSONObject) -> [String: Int] {
        let numeric = properties.members.filter {
            let role = Self.role(of: $0.key, $0.value)
            return role == .number || role == .integer
        }
        var attached: [String: Int] = [:]
        var used: Set<Int> = []
        func words(_ text: String) -> Set<String> {
            Set(Lexicon.terms(text).filter { !$0.hasPrefix("#") && Double($0) == nil })
        }
        for byDescription in [false, true] {
            for (name, schema) in numeric where attached[name] == nil {
                let own =
                    byDescription
                    ? words(schema["description"]?.stringValue ?? "").subtracting(Self.vagueWords)
                    : words(name.replacingOccurrences(of: "_", with: " "))
                guard !own.isEmpty else { continue }
                let integer = Self.role(of: name, schema) == .integer
                let place = request.numbers.indices.first { index in
                    let number = request.numbers[index]
                    return !used.contains(index) && (!integer || number.value.rounded() == number.value)
                        && Self.within(number.value, schema)
                        && !(takesIdentifier && isReference(number))
                        && !words(([number.after, number.before] + number.near).joined(separator: " "))
                            .isDisjoint(with: own)
                }
                if let place {
                    attached[name] = place
                    used.insert(place)
                }
            }
        }
        return attached
    }

    /// Whether a number is within the bounds the argument's schema sets (gas mark 30 is no gas mark of 1 to 9).
    static func within(_ value: Double, _ schema: JSONValue) -> Bool {
        if let minimum = schema["minimum"]?.doubleValue, value < minimum { return false }
        if let maximum = schema["maximum"]?.doubleValue, value > maximum { return false }
        if let minimum = schema["exclusiveMinimum"]?.doubleValue, value <= minimum { return false }
        if let maximum = schema["exclusiveMaximum"]?.doubleValue, value >= maximum { return false }
        return true
    }

    /// Words of a description too common to attach a number by ("e.g. 4.5 for 4.5%").
    static let vagueWords: Set<String> = Set(Lexicon.terms("number value amount count many much for eg example total"))

    /// Whether the tool takes an id (only then do "note 3" style numbers belong to it alone).
    var takesIdentifier: Bool {
        (tool.parameters["properties"]?.objectValue?.members ?? []).contains {
            Self.role(of: $0.key, $0.value) == .identifier
        }
    }

    /// The unit a word names ("kilograms" → kg, "celsius" → c), if any.
    static func unitName(_ word: String) -> String? {
        let lowered = word.lowercased()
        if let unit = aliases[lowered] { return unit }
        return Set(aliases.values).contains(lowered) && lowered.count > 1 ? lowered : nil
    }

    /// "note 3", "task #3", "#3", "id 3", "number 3".
    func isReference(_ number: RouterRequest.NumberMention) -> Bool {
        guard number.value >= 0, number.value.rounded() == number.value else { return false }
        let before = number.before
        if ["#", "id", "number", "no", "nr", "num"].contains(before) { return true }
        return objectNouns.contains(before) || objectNouns.contains(Lexicon.stem(before))
    }

    /// A number as JSON: an integer when it is one and fits (a stranger may type 99999999999999999999; beyond
    /// ±2^53 a double no longer holds every integer, so it stays a double and the schema decides).
    static func number(_ value: Double, integer: Bool) -> JSONValue {
        guard value.rounded() == value, abs(value) < 9.007_199_254_740_992e15 else { return .double(value) }
        return integer || abs(value) < 1e15 ? .int(Int64(value)) : .double(value)
    }

    /// Free text for the string properties: named fields first ("with body …", "title: …"), then the payload or
    /// the words left after those that name the action.
    /// Returns the required property left without a value, if any.
    private func fillText(_ names: [String], required: Set<String>, into arguments: inout JSONObject) -> String? {
        guard !names.isEmpty else { return nil }
        if strict { return fillChangedText(names, required: required, into: &arguments) }
        var rest = request.payload ?? request.head
        // Named fields: "… with body eggs and milk", "title: Groceries".
        for name in names.reversed() where names.count > 1 || request.payload == nil {
            // A property name is a stranger's text: matched literally, never as a pattern.
            let label = NSRegularExpression.escapedPattern(for: name.replacingOccurrences(of: "_", with: " "))
            if let match = ArgumentText.firstMatch(
                #"\s*\b(?:with|and)?\s*(?:the|a|its)?\s*\b"# + label + #"\b\s*(?:[:=]|is|of|to|as)?\s+(.+)$"#, in: rest)
            {
                let value = match.text.trimmingCharacters(in: .whitespacesAndNewlines)
                if !value.isEmpty, isContent(value) {
                    arguments[name] = .string(Self.trimmed(value))
                    rest.removeSubrange(match.range)
                }
            }
        }
        let unnamed = names.filter { arguments[$0] == nil }
        // Free text fills one argument: the first required one, an optional one only when the text was given
        // explicitly.
        guard let first = unnamed.first(where: required.contains) ?? (request.payload != nil ? unnamed.first : nil)
        else { return nil }
        let value: String?
        if let payload = request.payload, rest == payload {
            value = payload
        } else {
            // Found text never holds numbers: those belong to other arguments or other tools ("how many pounds
            // is 3 kg" is not a text to summarise).
            // ("hunter2" is a word, not a number).
            value = leftover(rest).flatMap {
                $0.range(of: #"(?<![\p{L}\d])\d+(?:[.,]\d+)?(?![\p{L}\d])"#, options: .regularExpression) == nil
                    ? $0 : nil
            }
        }
        if let value, value == request.payload || isContent(bare(value)) {
            // Text given explicitly is kept exactly; found text loses trailing punctuation and "please", and what
            // only places it.
            arguments[first] = .string(value == request.payload ? value : bare(Self.trimmed(value)))
        } else if required.contains(first) {
            return first
        }
        return names.first { required.contains($0) && arguments[$0] == nil }
    }

    /// The text arguments of a change: every value must be found for its own argument. Labelled fields first
    /// (read from the whole request, quotes included: `titled "…" with body "…"`, `body to "sourdough"`); a
    /// field the request names without giving it is missing, never empty. Then, for what is left: `TITLE: BODY`
    /// fills two arguments in order, quoted or colon text fills the first, a change to an existing item takes
    /// what follows "to" ("rename note 3 to Groceries") — only when nothing but the action stands before it —
    /// and a new item takes the words after those that name the action.
    private func fillChangedText(_ names: [String], required: Set<String>, into arguments: inout JSONObject)
        -> String?
    {
        // Like every reader, only the first 2,000 characters (a request is a sentence; the readers are linear).
        let labelled = LabelledFields(in: String(request.text.prefix(2000)), names: names)
        for field in labelled.fields {
            // "the body of note 1 to eggs" → "eggs".
            var value = withoutReferences(field.value).trimmingCharacters(in: .whitespaces)
            if value.lowercased().hasPrefix("to ") { value = Self.unquoted(String(value.dropFirst(3))) }
            // `title from "Shopping" to "Groceries"`: an old value and a new one — asked for, never both written.
            if takesIdentifier, Self.quotedSpans(in: value) >= 2 { return field.name }
            if isContent(value) {
                // Quoted text is kept as written; other text loses what only places it.
                let quoted = value.first.map { LabelledFields.closing[$0] != nil } ?? false
                if arguments[field.name] == nil {
                    arguments[field.name] = .string(quoted ? Self.trimmed(value) : bare(Self.trimmed(value)))
                }
            } else if field.explicit {
                return field.name
            }
        }
        let unnamed = names.filter { arguments[$0] == nil }
        guard let first = unnamed.first(where: required.contains) ?? unnamed.first else {
            return names.first { required.contains($0) && arguments[$0] == nil }
        }
        let rest = labelled.remaining
        // "groceries: eggs and butter", `"groceries": eggs and butter` — a head with content, then a colon.
        if unnamed.count >= 2, !takesIdentifier,
            let colon = rest.range(of: #":(?!\d)"#, options: .regularExpression)
        {
            let before = leftover(String(rest[..<colon.lowerBound])).map(Self.unquoted)
            let after = rest[colon.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
            if let before, isContent(before), !after.isEmpty {
                arguments[unnamed[0]] = .string(Self.trimmed(before))
                arguments[unnamed[1]] = .string(Self.unquoted(after))
                return names.first { required.contains($0) && arguments[$0] == nil }
            }
        }
        let value: String?
        let found = RouterRequest.payload(in: rest)
        let payload = found?.text
        if let found, takesIdentifier, labelled.fields.isEmpty,
            isContent(withoutReferences(String(rest[..<found.range.lowerBound]))) || Self.quotedSpans(in: rest) >= 2
        {
            // A quoted (or after-colon) value for a change, after words that are not the action: "update note 2
            // description to "…"" names an argument this tool does not have — asked for, never put in another.
            // So are two quoted values (`rename note 4 from "Shopping" to "Groceries"`: the first is the old one).
            value = nil
        } else if let payload, labelled.fields.isEmpty || !takesIdentifier {
            value = payload
        } else if takesIdentifier {
            // A change to an existing item: the new value follows "to" ("rename note 3 to Groceries"), and only
            // when what stands before it is the action itself ("update note 4 description to …" names an
            // argument this tool does not have).
            let cleaned = withoutReferences(rest)
            if let to = cleaned.range(of: #"\bto\s+"#, options: [.regularExpression, .caseInsensitive]),
                !isContent(String(cleaned[..<to.lowerBound]))
            {
                value = String(cleaned[to.upperBound...])
            } else {
                value = nil
            }
        } else {
            value = leftover(rest)
        }
        if let value, value == payload || isContent(bare(value)) {
            arguments[first] = .string(value == payload ? value : bare(Self.trimmed(value)))
        } else if required.contains(first) {
            return first
        }
        return names.first { required.contains($0) && arguments[$0] == nil }
    }

    /// Found text without what only places it or starts another request: "eggs to my shopping list" → "eggs"
    /// (a phrase naming what the skill acts on), "reading and wipe its history" → "reading" (another action), "the
    /// flossing habit" → "flossing" (the skill's noun after it, and the words before it that only point).
    func bare(_ text: String) -> String {
        var words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        func folded(_ word: String) -> String { Lexicon.fold(word).trimmingCharacters(in: .punctuationCharacters) }
        func isNoun(_ word: String) -> Bool { !Set(Lexicon.terms(folded(word))).isDisjoint(with: objectNouns) }
        var placed = false
        // Another action: ", and wipe …", "then delete …".
        if let cut = words.indices.dropFirst().first(where: { index in
            let word = folded(words[index])
            let joined = ["and", "then"].contains(word) || words[index - 1].hasSuffix(",")
            let next = index + 1 < words.count ? folded(words[index + 1]) : ""
            return (joined && Lexicon.changeVerbs[next] != nil)
                || (words[index - 1].hasSuffix(",") && Lexicon.changeVerbs[word] != nil)
        }) {
            words.removeSubrange(cut...)
            placed = true
        }
        // A phrase that says where, and nothing more: "to my shopping list", "off the list i got them", "from my
        // habits" — not one that goes on ("from the list, all but 2", "… tomorrow": the qualifier stays, and a
        // skill that does not know such an item says so instead of acting on a shorter name).
        if let cut = words.indices.dropFirst().first(where: { index in
            guard Self.places.contains(folded(words[index])) else { return false }
            let rest = words[(index + 1)...]
            return rest.contains(where: isNoun)
                && rest.allSatisfy { word in
                    isNoun(word) || Lexicon.stopWords.contains(folded(word))
                        || !Set(Lexicon.terms(folded(word))).isDisjoint(with: vocabulary)
                }
        }) {
            words.removeSubrange(cut...)
            placed = true
        }
        // The skill's noun after the text: "the flossing habit".
        while words.count > 1, let last = words.last, isNoun(last) {
            words.removeLast()
            placed = true
        }
        // An item named for a change to it is named without "the": "delete the flossing habit".
        let naming = !request.changes.isEmpty && !request.changes.contains(.create)
        if placed || naming {
            while words.count > 1, let first = words.first, Lexicon.stopWords.contains(folded(first)) {
                words.removeFirst()
            }
        }
        return words.joined(separator: " ")
    }

    /// Words that start a phrase saying where something is kept.
    static let places: Set<String> = ["to", "on", "onto", "off", "from", "in", "into", "under", "of"]

    /// How many quoted spans a text holds ("…", “…”, '…', and an arrow between two values counts as two).
    static func quotedSpans(in text: String) -> Int {
        var count = 0
        for pattern in [#""[^"]+""#, #"“[^”]+”"#, #"(?<![\w])'[^']+'(?![\w])"#] {
            count += ArgumentText.matchesWithOffsets(pattern, in: text).count
        }
        return text.contains("→") || text.contains("->") ? max(count, 2) : count
    }

    /// Whether an argument's name says it is where something comes from (`from`, `source_zone`, `origin`).
    static func namesASource(_ name: String) -> Bool {
        !Set(Lexicon.words(Lexicon.fold(name.replacingOccurrences(of: "_", with: " ")))).isDisjoint(
            with: ["from", "source", "src", "origin"])
    }

    /// The text without surrounding quotes.
    static func unquoted(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let open = trimmed.first, let close = LabelledFields.closing[open], trimmed.count >= 2,
            trimmed.last == close
        else { return trimmed }
        return String(trimmed.dropFirst().dropLast())
    }

    /// The text without "note 3" style references.
    func withoutReferences(_ text: String) -> String {
        var result = text
        for noun in objectNouns.union(["id", "number", "no"]) {
            result = result.replacingOccurrences(
                of: #"\b"# + NSRegularExpression.escapedPattern(for: noun) + #"s?\s*#?\d+\b"#, with: " ",
                options: [.regularExpression, .caseInsensitive])
        }
        return result.replacingOccurrences(of: #"#\d+"#, with: " ", options: .regularExpression)
    }

    /// What follows the words that name the action: leading words of the tool's vocabulary, stop words and change
    /// verbs are dropped; when they end in a marker ("to", "for", "called", "in"), the text after it is kept whole.
    func leftover(_ text: String) -> String? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var cut = 0
        var afterMarker: Int?
        // After the last word that names the action: stop words right after it belong to the text ("greet the
        // team" → "the team"), unless the text ends up being only stop words.
        var afterAction = 0
        while cut < words.count {
            let folded = Lexicon.fold(words[cut]).trimmingCharacters(in: .punctuationCharacters)
            let terms = Set(Lexicon.terms(folded))
            let stop = folded.isEmpty || Lexicon.stopWords.contains(folded)
            let action =
                Lexicon.changeVerbs[folded] != nil || (!terms.isEmpty && !terms.isDisjoint(with: vocabulary))
                || Self.fillers.contains(folded)
            guard stop || action else { break }
            if Self.markers.contains(folded) { afterMarker = cut + 1 }
            if action { afterAction = cut + 1 }
            cut += 1
        }
        let start = afterMarker.map { max($0, afterAction) } ?? afterAction
        guard start < words.count else { return nil }
        return words[start...].joined(separator: " ")
    }

    static let markers: Set<String> = [
        "to", "for", "about", "called", "named", "titled", "saying", "says", "in", "of", "containing", "mentioning",
        "into", "that",
    ]
    static let fillers: Set<String> = [
        "called", "named", "titled", "saying", "containing", "mentioning", "note", "text",
    ]

    /// Whether the text says something beyond stop words, the tool's own words, change verbs and ids.
    func isContent(_ value: String) -> Bool {
        Lexicon.words(Lexicon.fold(value)).contains { word in
            !Lexicon.stopWords.contains(word) && Lexicon.changeVerbs[word] == nil && !Lexicon.negations.contains(word)
                && Set(Lexicon.terms(word)).isDisjoint(with: vocabulary) && Double(word) == nil
        }
    }

    static func trimmed(_ text: String) -> String {
        var value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        while let last = value.last, "?!.,;".contains(last), !value.hasSuffix("..") { value.removeLast() }
        if value.lowercased().hasSuffix(" please") { value.removeLast(7) }
        return value.trimmingCharacters(in: .whitespaces)
    }

    /// Enum values mentioned in the text, in order (common unit names as aliases), and whether each follows a
    /// number.
    static func choiceMentions(in text: String, properties: JSONObject) -> [(value: JSONValue, afterNumber: Bool)] {
        let values = Set(properties.members.flatMap { $0.value["enum"]?.arrayValue ?? [] }.compactMap(\.stringValue))
        guard !values.isEmpty else { return [] }
        let lowered = values.reduce(into: [String: String]()) { $0[$1.lowercased()] = $1 }
        var mentions: [(value: JSONValue, afterNumber: Bool)] = []
        let words = text.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" && $0 != "." })
            .map { String($0).trimmingCharacters(in: CharacterSet(charactersIn: ".")) }
        for (index, word) in words.enumerated() {
            let previousIsNumber = index > 0 && Double(words[index - 1]) != nil
            // "in" is a preposition unless it follows a number ("12 in to cm").
            if word == "in", !previousIsNumber { continue }
            let token = aliases[word] ?? word
            if let value = lowered[token] { mentions.append((.string(value), previousIsNumber)) }
        }
        return mentions
    }

    static let aliases: [String: String] = [
        "celsius": "c", "centigrade": "c", "fahrenheit": "f", "kelvin": "k", "millimeters": "mm", "millimetres": "mm",
        "millimeter": "mm", "millimetre": "mm", "centimeters": "cm", "centimetres": "cm", "centimeter": "cm",
        "centimetre": "cm", "meters": "m", "metres": "m", "meter": "m", "metre": "m", "kilometers": "km",
        "kilometres": "km", "kilometer": "km", "kilometre": "km", "inches": "in", "inch": "in", "feet": "ft",
        "foot": "ft", "yards": "yd", "yard": "yd", "miles": "mi", "mile": "mi", "milligrams": "mg", "milligram": "mg",
        "grams": "g", "gram": "g", "kilograms": "kg", "kilogram": "kg", "kilos": "kg", "kilo": "kg", "kgs": "kg",
        "tonnes": "t", "tonne": "t", "tons": "t", "ton": "t", "ounces": "oz", "ounce": "oz", "pounds": "lb",
        "pound": "lb", "lbs": "lb", "degc": "c", "degf": "f",
    ]
}
