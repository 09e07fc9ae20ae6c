import Foundation

/// The small piece of English the offline router and the skill selector share: which words carry no meaning,
/// how words are reduced to a stem, which words name the same idea, and which verbs ask for a change.
///
/// Everything here is about English, never about a particular skill: the same tables serve the bundled plugins
/// and any third-party skill, whose ids, titles and descriptions go through the same reduction.
enum Lexicon {
    /// Words that say nothing about which skill is wanted.
    static let stopWords: Set<String> = [
        "a", "an", "the", "is", "are", "was", "were", "be", "been", "am", "of", "to", "in", "on", "for", "and", "or",
        "it", "its", "me", "my", "mine", "i", "im", "you", "your", "we", "our", "us", "they", "them", "their", "what",
        "whats", "how", "please", "can", "could", "would", "will", "shall", "should", "with", "by", "at", "from",
        "this", "that", "these", "those", "do", "does", "did", "give", "tell", "as", "into", "than", "then", "have",
        "has", "had", "got", "get", "any", "some", "there", "here", "which", "who", "whom", "where", "when", "why",
        "if", "so", "just", "also", "now", "right", "ok", "okay", "thanks", "thank", "hey", "yo", "let", "lets",
        "need", "want", "like", "know", "much", "very", "quickly", "really", "about", "up", "out", "one", "go",
        "make", "use", "using", "say", "says", "said", "per", "again", "mean", "means", "result",
    ]

    /// Reduces a lowercased word to a crude stem so that "summarise", "summarize" and "summary", or "deletes"
    /// and "deleted", meet.
    static func stem(_ word: String) -> String {
        var word = word
        for suffix in ["isation", "ization", "ations", "ation", "izing", "ising", "ized", "ised", "izes", "ises"]
        where word.count > suffix.count + 2 && word.hasSuffix(suffix) {
            word.removeLast(suffix.count)
            return word
        }
        for suffix in ["ize", "ise", "ies", "ing", "ed", "es", "s", "y", "e"]
        where word.count > suffix.count + 2 && word.hasSuffix(suffix) {
            word.removeLast(suffix.count)
            if word.count > 3, let last = word.last, word.dropLast().last == last, !"aeiouls".contains(last) {
                word.removeLast()  // "stopped" → "stopp" → "stop"
            }
            return word
        }
        return word
    }

    /// Words that name the same idea, mapped to one concept term added beside them (for requests and skill
    /// texts alike), so "work out", "compute" and "calculator" meet.
    static let concepts: [String: String] = {
        let groups: [String: [String]] = [
            "#calc": [
                "calculate", "calculation", "calculator", "compute", "computes", "evaluate", "evaluates", "solve",
                "arithmetic", "math", "maths", "expression", "equation",
            ],
            "#count": ["count", "counts", "counting", "tally", "statistics", "stats", "howmany"],
            "#summary": ["summary", "summarize", "summarise", "summarizes", "summarises", "gist", "tldr", "recap"],
            "#greet": ["greet", "greets", "greeting", "hello", "hi", "welcome", "salute"],
            "#search": [
                "search", "searches", "find", "finds", "look", "lookup", "containing", "contains", "mentioning",
            ],
            "#list": ["list", "lists", "listing", "show", "display", "every", "all", "saved"],
            "#time": ["time", "clock", "hour", "hours", "oclock"],
            "#now": ["now", "current", "currently", "timenow"],
            "#weekday": ["weekday", "dayoftheweek"],
            "#temperature": ["temperature", "degrees", "degree", "celsius", "fahrenheit", "kelvin"],
            "#mass": ["mass", "weight", "weigh", "weighs", "heavy"],
            "#length": ["length", "distance", "far", "long"],
            "#character": ["character", "characters", "chars", "letters"],
            "#divisor": ["divisor", "gcd", "hcf", "factor"],
            "#slug": ["slug", "slugify", "url"],
            "#note": ["note", "notes", "memo", "memos"],
            "#task": ["task", "tasks", "todo", "todos", "chore", "chores"],
        ]
        var map: [String: String] = [:]
        for (concept, words) in groups {
            for word in words { map[word] = concept }
        }
        return map
    }()

    /// Phrases rewritten to one word before anything else reads the request, each with a literal it needs (so
    /// that most texts skip the pattern).
    static let phrases: [(triggers: [String], pattern: String, replacement: String)] = [
        (["how many"], #"\bhow many\b"#, "howmany"),
        (["day of"], #"\bday of (?:the )?week\b"#, "dayoftheweek"),
        (["what day"], #"\bwhat day\b"#, "what dayoftheweek"),
        (["look up", "look for"], #"\blook (?:up|for)\b"#, "lookup"),
        (["clock"], #"\bo'?clock\b"#, "oclock"),
        (["to-do", "to do"], #"\bto-?do\b"#, "todo"),
        // "what time is it", "what's the time": the time now.
        // (Read after folding, which drops apostrophes: "what's" is "whats".)
        (["what time is it", "the time"], #"\b(?:what time is it|what(?:s| is) the time)\b"#, "what time timenow"),
    ]

    /// `phrases`, compiled once.
    static let compiledPhrases: [([String], NSRegularExpression, String)] = phrases.compactMap {
        triggers, pattern, replacement in
        (try? NSRegularExpression(pattern: pattern)).map { (triggers, $0, replacement) }
    }

    /// The terms of a text: lowercased words (diacritics folded) without stop words, each with its stem and its
    /// concept when they differ; ids split at `_`.
    /// With `conceptsOnly`, a word that names a concept counts as the concept alone, so that words of one idea
    /// weigh the same ("summarise" and "summarize", "calculator" and "compute"): what ranking by shared terms wants.
    static func terms(_ text: String, conceptsOnly: Bool = false) -> [String] {
        var folded = fold(text)
        if folded.contains(" ") {  // phrases have several words
            for (triggers, regex, replacement) in compiledPhrases where triggers.contains(where: folded.contains) {
                folded = regex.stringByReplacingMatches(
                    in: folded, range: NSRange(folded.startIndex..<folded.endIndex, in: folded),
                    withTemplate: replacement)
            }
        }
        var terms: [String] = []
        for word in words(folded) where !stopWords.contains(word) {
            let stem = stem(word)
            let concept = concepts[word] ?? concepts[stem]
            if let concept, conceptsOnly {
                terms.append(concept)
                continue
            }
            terms.append(word)
            if stem != word { terms.append(stem) }
            if let concept { terms.append(concept) }
        }
        return terms
    }

    /// Lowercase without diacritics ("São Paulo" → "sao paulo"), apostrophes dropped ("what's" → "whats").
    static func fold(_ text: String) -> String {
        // Most texts are ASCII: lowercasing is all the folding they need (and far cheaper).
        let folded =
            text.utf8.allSatisfy { $0 < 0x80 }
            ? text.lowercased()
            : text.folding(options: [.diacriticInsensitive, .caseInsensitive, .widthInsensitive], locale: nil)
                .replacingOccurrences(of: "’", with: "'")
        return folded.contains("'") ? folded.replacingOccurrences(of: "'", with: "") : folded
    }

    /// Runs of letters and digits.
    static func words(_ text: String) -> [String] {
        var result: [String] = []
        var word = ""
        for scalar in text.unicodeScalars {
            if scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                word.unicodeScalars.append(scalar)
            } else if !word.isEmpty {
                result.append(word)
                word = ""
            }
        }
        if !word.isEmpty { result.append(word) }
        return result
    }

    // MARK: Changes

    /// The kind of change a verb asks for.
    enum Change: String, Sendable, CaseIterable {
        case create, update, delete, restore
    }

    /// Verbs that ask for a change, by kind (lowercased, as written).
    static let changeVerbs: [String: Change] = {
        let groups: [Change: [String]] = [
            .create: [
                "add", "adds", "create", "creates", "save", "saves", "remember", "store", "stores", "jot", "insert",
                "append",
            ],
            .update: [
                "update", "updates", "change", "changes", "rename", "renames", "edit", "edits", "modify", "modifies",
                "replace", "mark", "marks", "tick", "retitle", "switch", "set", "turn", "toggle",
            ],
            .delete: [
                "delete", "deletes", "remove", "removes", "erase", "erases", "drop", "forget", "trash", "discard",
                "clear", "clears", "wipe", "wipes", "purge", "purges", "destroy",
            ],
            .restore: ["restore", "restores", "undo", "undelete", "recover", "reinstate", "revert"],
        ]
        var map: [String: Change] = [:]
        for (change, verbs) in groups {
            for verb in verbs { map[verb] = change }
        }
        return map
    }()

    /// Words that, just before a verb, say the change is not wanted ("don't delete", "never remove").
    static let negations: Set<String> = ["dont", "not", "never", "without", "no", "doesnt", "didnt", "wont", "cant"]

    /// Openings that ask about an action instead of asking for it ("how do I delete a note?").
    static let questionsAboutActions =
        #"^\s*(?:how (?:do|can|would|should) (?:i|you|we)|how to|what happens|should i|is it (?:safe|possible)|can i|why (?:did|does|do|would))\b"#

    /// The change kinds asked for in `text`: verbs not preceded by a negation, in a request that is not a
    /// question about how to do it.
    static func requestedChanges(in text: String) -> Set<Change> {
        let folded = fold(text)
        if folded.range(of: questionsAboutActions, options: .regularExpression) != nil { return [] }
        let words = words(folded)
        var changes: Set<Change> = []
        for (index, word) in words.enumerated() {
            guard let change = changeVerbs[word] else { continue }
            let before = words[max(0, index - 3)..<index]
            if before.contains(where: negations.contains) { continue }
            changes.insert(change)
        }
        return changes
    }

    /// The change kinds a skill performs, read from its id and title (its description only when they name none):
    /// `notes_delete` → delete, "Mark a task done" → update.
    static func declaredChanges(id: String, title: String, description: String) -> Set<Change> {
        func changes(_ text: String) -> Set<Change> {
            Set(words(fold(text.replacingOccurrences(of: "_", with: " "))).compactMap { changeVerbs[$0] })
        }
        let named = changes(id + " " + title)
        if !named.isEmpty { return named }
        let firstSentence = description.split(separator: ".", maxSplits: 1).first.map(String.init) ?? description
        return changes(firstSentence)
    }

    // MARK: Numbers in words

    static let numberWords: [String: Int] = [
        "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
        "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
        "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40,
        "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    ]

    /// The text with numbers written in words turned into digits ("twenty five" → "25", "two hundred" → "200",
    /// "a dozen" → "12"). Words that are not part of a number are left alone.
    static func digits(_ text: String) -> String {
        let pattern =
            #"\b(?:(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million)(?:[\s-]+(?:and[\s-]+)?(?=(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million)\b))?)+\b"#
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive]) else { return text }
        var result = text.replacingOccurrences(of: #"\ba dozen\b"#, with: "12", options: [.regularExpression])
        let range = NSRange(result.startIndex..<result.endIndex, in: result)
        for match in regex.matches(in: result, range: range).reversed() {
            guard let r = Range(match.range, in: result), let value = numberValue(String(result[r])) else { continue }
            result.replaceSubrange(r, with: String(value))
        }
        return result
    }

    /// The value of a phrase of number words, or nil when it is not one number a person would write (more than
    /// 12 words, or beyond a trillion: "hundred hundred hundred …" is text, not a number to overflow on).
    private static func numberValue(_ phrase: String) -> Int? {
        let words = phrase.lowercased().split(whereSeparator: { $0 == " " || $0 == "-" }).filter { $0 != "and" }
        guard words.count <= 12 else { return nil }
        let limit = 1_000_000_000_000
        var total = 0
        var current = 0
        for word in words {
            switch word {
            case "hundred": current = max(current, 1) * 100
            case "thousand":
                total += max(current, 1) * 1000
                current = 0
            case "million":
                total += max(current, 1) * 1_000_000
                current = 0
            default:
                guard let value = numberWords[String(word)] else { return nil }
                current += value
            }
            guard current <= limit, total <= limit else { return nil }
        }
        return total + current
    }
}
