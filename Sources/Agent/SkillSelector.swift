import SkillHost
import SkillJSON

/// Picks the skills most relevant to a conversation with BM25 over each skill's id, title, description and
/// argument names, plus what the request holds for each skill's arguments (the offline router's evidence). Built
/// once per registry snapshot; `select` is cheap.
package struct SkillSelector: Sendable {
    struct Document: Sendable {
        let id: String
        let termFrequencies: [String: Int]
        let length: Int
        /// Its arguments, when some take what a request can hold on its own (arithmetic, a choice, a zone, a date
        /// or time, a text): the evidence the offline router weighs, and text given as such.
        let properties: JSONObject?
    }

    let documents: [Document]
    let documentFrequency: [String: Int]
    let averageLength: Double
    /// Whether a word that names a concept counts as the concept alone (see `terms`); the offline router keeps
    /// word, stem and concept, which its labelled set is tuned to.
    let conceptsOnly: Bool
    static let k1 = 1.2
    static let b = 0.75

    package init(_ skills: [SkillInfo], others: [(id: String, text: String)] = []) {
        var properties: [String: JSONObject] = [:]
        let texts = skills.map { skill in
            let arguments = skill.inputSchema["properties"]?.objectValue
            properties[skill.id] = arguments
            // The id and title count twice: they name what the skill is about.
            return (
                id: skill.id,
                text:
                    "\(skill.id) \(skill.id) \(skill.title) \(skill.title) \(skill.description) "
                    + (arguments?.keys.joined(separator: " ") ?? "")
            )
        }
        self.init(documents: texts + others, properties: properties)
    }

    /// Tools as the model sees them (name, description, parameter names), and other documents beside them;
    /// `weighingArguments: false` ranks by their words alone.
    package init(tools: [ToolDefinition], others: [(id: String, text: String)] = [], weighingArguments: Bool = true) {
        var properties: [String: JSONObject] = [:]
        let texts = tools.map { tool in
            let arguments = tool.parameters["properties"]?.objectValue
            if weighingArguments { properties[tool.name] = arguments }
            return (
                id: tool.name,
                text: "\(tool.name) \(tool.name) \(tool.description) \(arguments?.keys.joined(separator: " ") ?? "")"
            )
        }
        self.init(documents: texts + others, properties: properties, conceptsOnly: weighingArguments)
    }

    /// Any documents: an id and the text that describes it, and the arguments of those that have some.
    package init(
        documents texts: [(id: String, text: String)], properties: [String: JSONObject] = [:], conceptsOnly: Bool = true
    ) {
        self.conceptsOnly = conceptsOnly
        var frequency: [String: Int] = [:]
        documents = texts.map { id, text in
            let terms = Self.terms(text, conceptsOnly: conceptsOnly)
            var counts: [String: Int] = [:]
            for term in terms { counts[term, default: 0] += 1 }
            for term in counts.keys { frequency[term, default: 0] += 1 }
            let arguments = properties[id].flatMap { Self.takesEvidence($0) ? $0 : nil }
            return Document(id: id, termFrequencies: counts, length: terms.count, properties: arguments)
        }
        documentFrequency = frequency
        averageLength = documents.isEmpty ? 1 : Double(documents.map(\.length).reduce(0, +)) / Double(documents.count)
    }

    /// The terms of a text (see `Lexicon.terms`): words without stop words and their stems, or a word's concept
    /// alone when it names one (synonyms weigh the same); ids split at `_`.
    static func terms(_ text: String, conceptsOnly: Bool) -> [String] {
        Lexicon.terms(text.replacingOccurrences(of: "_", with: " "), conceptsOnly: conceptsOnly)
    }

    /// Whether some argument takes what a request can hold on its own (see `Document.properties`).
    static func takesEvidence(_ properties: JSONObject) -> Bool {
        properties.members.contains { name, schema in
            switch ArgumentFiller.role(of: name, schema) {
            case .expression, .choice, .zone, .date, .time: return true
            case .text: return ArgumentFiller.types(of: schema).contains("string")
            default: return false
            }
        }
    }

    /// BM25 scores of every skill for `query`, plus what the request holds for its arguments (arithmetic for an
    /// expression, a unit among a choice's values, a zone, a date, a time — as the offline router weighs it),
    /// highest first (zero scores omitted).
    package func rank(_ query: String) -> [(id: String, score: Double)] {
        let queryTerms = Set(Self.terms(query, conceptsOnly: conceptsOnly))
        let count = Double(documents.count)
        let request = documents.contains { $0.properties != nil } ? RouterRequest(String(query.prefix(2000))) : nil
        var scored: [(id: String, score: Double)] = []
        for document in documents {
            var score = 0.0
            if let request, let properties = document.properties {
                // What the request holds for the skill's arguments; arithmetic for an expression or a unit among a
                // choice's values says more than any word: a thousand skills may share the words.
                let signal = OfflineRouter.signals(request, properties: properties)
                score += signal.score + (signal.strong ? 10 : 0)
                // Text given as such ("summarize this: …", quoted) for a skill that takes a text.
                if request.payload != nil,
                    properties.members.contains(where: { name, schema in
                        ArgumentFiller.role(of: name, schema) == .text
                            && ArgumentFiller.types(of: schema).contains("string")
                    })
                {
                    score += 3
                }
            }
            for term in queryTerms {
                guard let tf = document.termFrequencies[term] else { continue }
                let df = Double(documentFrequency[term] ?? 0)
                let idf = log(1 + (count - df + 0.5) / (df + 0.5))
                let frequency = Double(tf)
                score +=
                    idf * frequency * (Self.k1 + 1)
                    / (frequency + Self.k1 * (1 - Self.b + Self.b * Double(document.length) / averageLength))
            }
            if score > 0 { scored.append((document.id, score)) }
        }
        return scored.sorted { $0.score > $1.score || ($0.score == $1.score && $0.id < $1.id) }
    }

    /// The ids to offer the model: all of them when there are at most `limit`; otherwise the `limit` best for
    /// `query`, always including `keep` (skills already used in the conversation), filled up in id order.
    package func select(_ query: String, limit: Int, keep: Set<String>) -> [String] {
        let all = documents.map(\.id)
        guard all.count > limit else { return all }
        var chosen: [String] = all.filter { keep.contains($0) }
        var seen = Set(chosen)
        for (id, _) in rank(query) where chosen.count < limit && seen.insert(id).inserted { chosen.append(id) }
        for id in all where chosen.count < limit && seen.insert(id).inserted { chosen.append(id) }
        return chosen
    }
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
