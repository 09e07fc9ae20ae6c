import SkillHost

/// Picks the skills most relevant to a conversation with BM25 over each skill's id, title, description and
/// argument names. Built once per registry snapshot; `select` is cheap.
package struct SkillSelector: Sendable {
    struct Document: Sendable {
        let id: String
        let termFrequencies: [String: Int]
        let length: Int
    }

    let documents: [Document]
    let documentFrequency: [String: Int]
    let averageLength: Double
    static let k1 = 1.2
    static let b = 0.75

    package init(_ skills: [SkillInfo]) {
        self.init(
            documents: skills.map { skill in
                let arguments = skill.inputSchema["properties"]?.objectValue?.keys.joined(separator: " ") ?? ""
                // The id and title count twice: they name what the skill is about.
                return (
                    skill.id, "\(skill.id) \(skill.id) \(skill.title) \(skill.title) \(skill.description) \(arguments)"
                )
            })
    }

    /// Tools as the model sees them (name, description, parameter names).
    package init(tools: [ToolDefinition]) {
        self.init(
            documents: tools.map { tool in
                let arguments = tool.parameters["properties"]?.objectValue?.keys.joined(separator: " ") ?? ""
                return (tool.name, "\(tool.name) \(tool.name) \(tool.description) \(arguments)")
            })
    }

    /// Any documents: an id and the text that describes it.
    package init(documents texts: [(id: String, text: String)]) {
        var frequency: [String: Int] = [:]
        documents = texts.map { id, text in
            let terms = Self.terms(text)
            var counts: [String: Int] = [:]
            for term in terms { counts[term, default: 0] += 1 }
            for term in counts.keys { frequency[term, default: 0] += 1 }
            return Document(id: id, termFrequencies: counts, length: terms.count)
        }
        documentFrequency = frequency
        averageLength = documents.isEmpty ? 1 : Double(documents.map(\.length).reduce(0, +)) / Double(documents.count)
    }

    /// The terms of a text (see `Lexicon.terms`): words without stop words, their stems and concepts; ids split
    /// at `_`.
    static func terms(_ text: String) -> [String] {
        Lexicon.terms(text.replacingOccurrences(of: "_", with: " "))
    }

    /// BM25 scores of every skill for `query`, highest first (zero scores omitted).
    package func rank(_ query: String) -> [(id: String, score: Double)] {
        let queryTerms = Set(Self.terms(query))
        let count = Double(documents.count)
        var scored: [(id: String, score: Double)] = []
        for document in documents {
            var score = 0.0
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
