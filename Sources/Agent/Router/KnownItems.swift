import SkillJSON

/// The items the plugins' state names — objects with an integer `id` and a string `title` anywhere in a snapshot
/// (the notes plugin lists its newest notes so) — read from the state message of the request, so the router can
/// resolve "the note about milk" to its id.
///
/// A title resolves only when every word of it that is not the kind of thing ("note") is in the request, and no
/// other item of the same plugin matches as well: the router never guesses between two.
struct KnownItems: Sendable {
    struct Item: Sendable, Equatable {
        let plugin: String
        let id: Int64
        let title: String
    }

    let items: [Item]

    static let none = KnownItems(items: [])

    init(items: [Item]) { self.items = items }

    /// The items of the request's state message (the system message `StateSnapshots` builds), if it has one.
    init(_ messages: [Message]) {
        guard
            let state = messages.last(where: {
                $0.role == .system && $0.content.hasPrefix(StateSnapshots.heading)
            })
        else {
            items = []
            return
        }
        var found: [Item] = []
        for line in state.content.split(separator: "\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":"),
                let value = try? JSONValue(parsing: String(line[line.index(after: colon)...]))
            else { continue }
            Self.collect(value, plugin: String(line[..<colon]), depth: 0, into: &found)
        }
        items = found
    }

    private static func collect(_ value: JSONValue, plugin: String, depth: Int, into found: inout [Item]) {
        guard depth < 8, found.count < 256 else { return }
        switch value {
        case .object(let object):
            if case .int(let id)? = object["id"], let title = object["title"]?.stringValue {
                found.append(Item(plugin: plugin, id: id, title: title))
            }
            for member in object.members { collect(member.value, plugin: plugin, depth: depth + 1, into: &found) }
        case .array(let elements):
            for element in elements { collect(element, plugin: plugin, depth: depth + 1, into: &found) }
        default: break
        }
    }

    /// The id of the one item (of a plugin named like the tool's nouns) whose title the request names, if any.
    func id(named request: RouterRequest, nouns: Set<String>) -> Int64? {
        var best: (id: Int64, words: Int)?
        var tied = false
        for item in items where !Set(Lexicon.terms(item.plugin)).isDisjoint(with: nouns) {
            let words = Set(Lexicon.terms(item.title)).subtracting(nouns).subtracting(Lexicon.stopWords)
            guard !words.isEmpty, words.isSubset(of: request.terms) else { continue }
            if let current = best, current.words == words.count, current.id != item.id { tied = true }
            if best == nil || words.count > best?.words ?? 0 {
                best = (item.id, words.count)
                tied = false
            }
        }
        return tied ? nil : best?.id
    }
}
