import Foundation
import SkillHost
import SkillJSON

/// The embedded default model when no endpoint is configured. Not a language model and never pretends to be
/// one: it ranks the offered skills against the request (BM25 over name, description and argument names, plus
/// what the request holds: arithmetic, zones, dates, units), fills the arguments from the text guided by each
/// schema, calls the best read-only skill whose required arguments it could fill, and answers with the result,
/// labelled as offline. When nothing matches it says so plainly.
///
/// **Safety.** A mutating or destructive skill is called only when the request asks for that change in so many
/// words (a verb of the kind the skill declares in its id or title — add, update, delete, restore — not negated,
/// not a question about how to do it), names what the skill acts on ("note", "task"), and states every required
/// argument (an id only as "note 3" or "#3", or by a title the plugins' state names — "the note about milk" —
/// when exactly one item matches). Everything else about such a call is still up to the policy and the person
/// confirming it.
package final class OfflineRouter: ModelProvider {
    package let displayName = "offline router"
    /// What every answer of the router starts with.
    package static let label = RouterAnswer.label
    package let answersInMarkdown = false
    /// Today's date for "today" and "tomorrow" (injected by tests).
    let now: @Sendable () -> Date

    package init() { now = { Date() } }

    init(now: @escaping @Sendable () -> Date) { self.now = now }

    package func stream(_ request: ModelRequest) -> AsyncThrowingStream<ModelChunk, any Error> {
        let chunks = respond(to: request)
        return AsyncThrowingStream { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
    }

    func respond(to request: ModelRequest) -> [ModelChunk] {
        guard let last = request.messages.last else { return [.text("[offline router] nothing to answer")] }
        let userIndex = request.messages.lastIndex(where: { $0.role == .user })
        let text = userIndex.map { request.messages[$0].content } ?? ""
        let plan = plan(text, tools: request.tools, known: KnownItems(request.messages))
        let calls = plan.compactMap { clause -> (name: String, arguments: JSONValue)? in
            if case .call(let name, let arguments) = clause.decision { return (name, arguments) }
            return nil
        }
        func call(_ index: Int) -> [ModelChunk] {
            [
                .toolCall(
                    ToolCall(
                        id: "offline_\(request.messages.count)", name: calls[index].name,
                        arguments: calls[index].arguments.jsonText))
            ]
        }
        if last.role == .tool {
            // A request of several clauses: one call per step, in order, then one answer for them all.
            let made = request.messages[((userIndex ?? -1) + 1)...].filter {
                $0.role == .assistant && !$0.toolCalls.isEmpty
            }.count
            if plan.count > 1, made < calls.count { return call(made) }
            return [.text(RouterAnswer.summary(request.messages, tools: request.tools) + Self.leftOut(plan))]
        }
        if plan.count > 1 { return call(0) }
        switch plan[0].decision {
        case .call: return call(0)
        case .missing(let skill, let argument, let example):
            return [
                .text(
                    "[offline router] To run \(skill) I need its \(argument) in the request (for example "
                        + "“\(example)”); without a model I do not guess it."),
                .noSkillMatched,
            ]
        case .nothing:
            let names = request.tools.prefix(8).map(\.name).joined(separator: ", ")
            return [
                .text(
                    "[offline router] No skill matches “\(text)”. Without a model (set OPENAI_BASE_URL) I can only "
                        + "run skills for requests that name what they do\(names.isEmpty ? "" : ", e.g. \(names)")."),
                .noSkillMatched,
            ]
        }
    }

    /// The clauses of a request with what the router makes of each: several when it asks for several things and
    /// at least one of them can be served, else the whole request as one.
    func plan(_ text: String, tools: [ToolDefinition], known: KnownItems = .none) -> [(
        text: String, decision: Decision
    )] {
        let clauses = Clauses.split(text)
        if clauses.count > 1 {
            let decided = clauses.map { (text: $0, decision: decide($0, tools: tools, known: known)) }
            if decided.contains(where: { if case .call = $0.decision { return true } else { return false } }) {
                return decided
            }
        }
        return [(text, decide(text, tools: tools, known: known))]
    }

    /// Sentences for the clauses of a request that were not served, each on its own line ("" when none).
    static func leftOut(_ plan: [(text: String, decision: Decision)]) -> String {
        guard plan.count > 1 else { return "" }
        return plan.map { clause -> String in
            switch clause.decision {
            case .call: return ""
            case .nothing: return "\nLeft out “\(clause.text)”: no skill matches it."
            case .missing(let skill, let argument, let example):
                return "\nLeft out “\(clause.text)”: to run \(skill) I need its \(argument) (for example “\(example)”)."
            }
        }.joined()
    }

    /// How a request states `argument` of `tool`: "… note 3" for an id of a tool titled "Delete a note",
    /// "title: …" otherwise.
    static func example(for argument: String, of tool: ToolDefinition) -> String {
        let schema = tool.parameters["properties"]?[argument] ?? .null
        guard ArgumentFiller.role(of: argument, schema) == .identifier else { return "\(argument): …" }
        let noun = Lexicon.words(Lexicon.fold(tool.title + " " + tool.name.replacingOccurrences(of: "_", with: " ")))
            .first { Lexicon.changeVerbs[$0] == nil && !Lexicon.stopWords.contains($0) }
        return "… \(noun ?? "id") 3"
    }

    /// What the router does with a request.
    enum Decision: Equatable {
        case call(name: String, arguments: JSONValue)
        /// A change was asked for in so many words, but a required argument was not stated; `example` shows how
        /// to state it.
        case missing(skill: String, argument: String, example: String)
        case nothing
    }

    /// The best tool whose required arguments can be filled from `text`, with those arguments.
    package func route(_ text: String, tools: [ToolDefinition]) -> (name: String, arguments: JSONValue)? {
        if case .call(let name, let arguments) = decide(text, tools: tools) { return (name, arguments) }
        return nil
    }

    /// - Parameter known: the items the plugins' state names, for ids given by title.
    func decide(_ text: String, tools: [ToolDefinition], known: KnownItems = .none) -> Decision {
        guard !tools.isEmpty else { return .nothing }
        let request = RouterRequest(text, now: now())
        let relevance = Dictionary(
            // Words alone: the router weighs the request's evidence for arguments itself (`signals`).
            SkillSelector(tools: tools, weighingArguments: false).rank(String(request.text.prefix(2000))).map {
                ($0.id, $0.score)
            },
            uniquingKeysWith: max)
        var candidates: [(tool: ToolDefinition, score: Double)] = []
        for tool in tools {
            let bm25 = relevance[tool.name] ?? 0
            let signal = signals(request, tool)
            // A tool is a candidate when the request holds what its arguments take (arithmetic, units, zones,
            // dates), or shares a word with its id or title — a word that only its description uses is not enough
            // ("open the pod bay doors" is not "lists tasks, open ones first").
            let named = !request.terms.isDisjoint(
                with: Lexicon.terms(tool.name.replacingOccurrences(of: "_", with: " ") + " " + tool.title))
            // Or when its description matches and two or more of the request's numbers are named by its arguments
            // ("the bill is 84.50, 3 people, 20 percent" for a tip calculator's bill, people and percent).
            guard
                signal.strong || (named && (bm25 > 0 || signal.score > 0))
                    || (bm25 > 0 && namedNumbers(request, tool) >= 2)
            else { continue }
            candidates.append((tool, bm25 + signal.score))
        }
        candidates.sort { $0.score > $1.score || ($0.score == $1.score && $0.tool.name < $1.tool.name) }

        // A change asked for in so many words: only tools that make that kind of change, on that kind of thing.
        if !request.changes.isEmpty {
            var missing: Decision?
            for (tool, _) in candidates where tool.risk != .readOnly {
                let vocabulary = Self.vocabulary(of: tool)
                let declared = Lexicon.declaredChanges(id: tool.name, title: tool.title, description: tool.description)
                guard !declared.isDisjoint(with: request.changes),
                    !vocabulary.nouns.isDisjoint(with: request.terms)
                else { continue }
                let filler = ArgumentFiller(
                    request: request, tool: tool, vocabulary: vocabulary.all, objectNouns: vocabulary.nouns,
                    strict: true, known: known)
                switch filler.fill() {
                case .success(let arguments):
                    // An update that changes nothing, or a "new" item that names an existing one, is not it.
                    let identifiers = arguments.keys.filter { key in
                        ArgumentFiller.role(of: key, tool.parameters["properties"]?[key] ?? .null) == .identifier
                    }
                    let settable = tool.parameters["properties"]?.objectValue?.count ?? 0
                    if declared == [.update], arguments.count == identifiers.count, settable > identifiers.count {
                        // It names the item but not the new value: say what is needed instead of guessing.
                        let properties = tool.parameters["properties"]?.objectValue?.keys ?? []
                        if let wanted = properties.first(where: { !identifiers.contains($0) }) {
                            missing =
                                missing
                                ?? .missing(
                                    skill: tool.name, argument: wanted, example: Self.example(for: wanted, of: tool))
                        }
                        continue
                    }
                    if declared == [.create], request.numbers.contains(where: filler.isReference) { continue }
                    return .call(name: tool.name, arguments: .object(arguments))
                case .failure(let argument) where argument.unclear:
                    // The person named this change and something about it that is not plain: ask, do not look
                    // for another skill that would take the words differently.
                    return .missing(
                        skill: tool.name, argument: argument.name, example: Self.example(for: argument.name, of: tool))
                case .failure(let argument):
                    missing =
                        missing
                        ?? .missing(
                            skill: tool.name, argument: argument.name,
                            example: Self.example(for: argument.name, of: tool))
                }
            }
            if let missing { return missing }
        }
        // The best read-only candidate that can be filled — and, among those close to it, the one whose arguments
        // use the most of what the request says: "a 200k mortgage at 6% for 30 yrs and 60 payments made" is the
        // remaining balance (every number used), not the payment (60 left over).
        var best: (name: String, arguments: JSONObject, score: Double)?
        var tried = 0
        for (tool, score) in candidates where tool.risk == .readOnly {
            if let best, score + Self.fitWeight * 4 < best.score || tried >= 6 { break }
            let vocabulary = Self.vocabulary(of: tool)
            let filler = ArgumentFiller(
                request: request, tool: tool, vocabulary: vocabulary.all, objectNouns: vocabulary.nouns, strict: false,
                known: known)
            guard case .success(let arguments) = filler.fill() else { continue }
            tried += 1
            let properties = tool.parameters["properties"]?.objectValue ?? JSONObject()
            let attached = filler.attachedNumbers(properties).filter { arguments[$0.key] != nil }.count
            let used = arguments.members.filter { $0.value.doubleValue != nil }.count
            let unused = max(0, request.numbers.count - used)
            let fit = score + Self.fitWeight * (Double(attached) - Double(unused))
            if best == nil || fit > best?.score ?? 0 { best = (tool.name, arguments, fit) }
        }
        if let best { return .call(name: best.name, arguments: .object(best.arguments)) }
        return .nothing
    }

    /// What one number attached to an argument (or left unused) weighs against the words' score.
    static let fitWeight = 1.0

    /// Evidence in the request for the kinds of argument a tool takes; `strong` when it is enough on its own
    /// (arithmetic for an expression, units for a choice of units) — a city name alone is not a time request.
    func signals(_ request: RouterRequest, _ tool: ToolDefinition) -> (score: Double, strong: Bool) {
        guard let properties = tool.parameters["properties"]?.objectValue else { return (0, false) }
        var (score, strong) = Self.signals(request, properties: properties)
        // A value of the shape an argument takes ("192.168.1.0/24" for a `cidr`) is enough on its own.
        for (name, schema) in properties.members where ArgumentFiller.role(of: name, schema) == .text {
            if let shape = TokenShape.of(argument: name, schema, toolDescription: tool.description),
                !shape.values(in: request.text).isEmpty
            {
                strong = true
                score += 4
            }
        }
        return (score, strong)
    }

    /// How many of the request's numbers the tool's arguments name (by their names or descriptions).
    func namedNumbers(_ request: RouterRequest, _ tool: ToolDefinition) -> Int {
        guard request.numbers.count >= 2, let properties = tool.parameters["properties"]?.objectValue else { return 0 }
        let filler = ArgumentFiller(
            request: request, tool: tool, vocabulary: [], objectNouns: [], strict: false)
        return filler.attachedNumbers(properties).count
    }

    /// `signals` for a skill's argument properties (the skill selector weighs the same evidence).
    static func signals(_ request: RouterRequest, properties: JSONObject) -> (score: Double, strong: Bool) {
        var score = 0.0
        var strong = false
        var zones = request.zones.count
        let mentioned = ArgumentFiller.choiceMentions(in: request.head, properties: properties).map(\.value)
        for (name, schema) in properties.members {
            switch ArgumentFiller.role(of: name, schema) {
            case .expression where request.expression != nil:
                strong = true
                score += 6
            case .zone where zones > 0:
                zones -= 1
                score += 1.5
            case .date where !request.dates.isEmpty: score += 1.5
            case .time where !request.times.isEmpty: score += 1.5
            case .choice:
                if (schema["enum"]?.arrayValue ?? []).contains(where: mentioned.contains) {
                    strong = true
                    score += 3
                }
            default: break
            }
        }
        return (score, strong)
    }

    /// A tool's words (id, title, description, argument names) and, among those of its id and title, the nouns
    /// that name what it acts on.
    static func vocabulary(of tool: ToolDefinition) -> (all: Set<String>, nouns: Set<String>) {
        let arguments = tool.parameters["properties"]?.objectValue?.keys.joined(separator: " ") ?? ""
        let all = Set(
            Lexicon.terms(
                "\(tool.name.replacingOccurrences(of: "_", with: " ")) \(tool.title) \(tool.description) \(arguments)"))
        var nouns: Set<String> = []
        for word in Lexicon.words(Lexicon.fold("\(tool.name.replacingOccurrences(of: "_", with: " ")) \(tool.title)"))
        where Lexicon.changeVerbs[word] == nil && !Lexicon.stopWords.contains(word) {
            nouns.formUnion(Lexicon.terms(word))
        }
        return (all, nouns)
    }
}
