import Foundation
import SkillJSON
import Support
import Synchronization

/// What skillhost recorded of each skill's definition the first time it saw it — title, description, schemas,
/// risk, who provides it, what its plugin declares it may reach, a composite's steps — in a file of the user's
/// (`pins.json`, 0600). A later change (a server that quietly rewrites a tool's
/// description or widens its schema after it was approved) makes the skill unapproved: the call pipeline asks a
/// person, and refuses where no one can be asked, until `skillhost trust` records the new definition.
///
/// Checked on every call: a skill seen unchanged since the last check costs a dictionary lookup and comparisons
/// that stop at shared storage.
public final class DefinitionPins: Sendable {
    /// How a skill's definition differs from the one pinned.
    public struct Change: Sendable, Equatable {
        public let skill: String
        /// Which parts changed: `title`, `description`, `input schema`, `output schema`, `risk`, `provider`,
        /// `declared capabilities`, `steps`.
        public let parts: [String]
        /// One line per changed part: `- old` then `+ new`.
        public let diff: [String]
    }

    struct Pin: Sendable, Equatable {
        var title: String
        var description: String
        var input: String
        var output: String?
        var risk: String
        /// Nil in a pin written before these parts were recorded: pinned as first seen (`filledIn`).
        var provider: String?
        var declares: String?
        var steps: String?
        /// How a result reads (ABI 1.3): "" for none; nil in a pin written before it was recorded.
        var answer: String?
        /// Its view and who may call it (ABI 1.4; `viewText`): "" for none and both; nil in an older pin.
        var view: String?

        init(_ skill: SkillInfo) {
            title = skill.title
            description = skill.description
            input = skill.inputSchema.jsonText
            output = skill.outputSchema?.jsonText
            risk = skill.risk.rawValue
            provider = skill.provider
            declares = skill.declares.isEmpty ? "nothing" : skill.declares.joined(separator: ", ")
            steps = skill.compositeSteps?.jsonText
            answer = skill.answer?.text ?? ""
            view = Self.viewText(skill)
        }

        /// A skill's view as a pin records it: the view's address and title, what it may reach and use (in words:
        /// `list` shows a change of them as it is), its page by size and digest, and who may call the skill.
        static func viewText(_ skill: SkillInfo) -> String {
            guard skill.view != nil || skill.audience != [.model, .view] else { return "" }
            var parts: [String] = []
            if let view = skill.view {
                // What a person approves in words — what the page may reach and use — and the page by its digest.
                let digest = HTTPGuard.sha256(view.html).prefix(16).map { String(format: "%02x", $0) }.joined()
                parts.append(
                    "\(view.uri) \"\(view.title)\", page \(view.html.utf8.count) bytes sha256:\(digest), "
                        + "reaches \(view.csp?.jsonText ?? "nothing"), uses \(view.permissions?.jsonText ?? "nothing")"
                        + (view.prefersBorder ? ", bordered" : ""))
            }
            parts.append("callers: " + skill.audience.visibility.joined(separator: ", "))
            return parts.joined(separator: "; ")
        }

        init?(_ value: JSONValue) {
            guard let title = value["title"]?.stringValue, let description = value["description"]?.stringValue,
                let input = value["input_schema"]?.stringValue, let risk = value["risk"]?.stringValue
            else { return nil }
            (self.title, self.description, self.input, self.risk) = (title, description, input, risk)
            output = value["output_schema"]?.stringValue
            provider = value["provider"]?.stringValue
            declares = value["declares"]?.stringValue
            steps = value["steps"]?.stringValue
            answer = value["answer"]?.stringValue
            view = value["view"]?.stringValue
        }

        var json: JSONValue {
            var object = JSONObject([
                (key: "title", value: .string(title)), (key: "description", value: .string(description)),
                (key: "input_schema", value: .string(input)),
                (key: "output_schema", value: output.map { .string($0) } ?? .null),
                (key: "risk", value: .string(risk)),
            ])
            if let provider { object["provider"] = .string(provider) }
            if let declares { object["declares"] = .string(declares) }
            if let steps { object["steps"] = .string(steps) }
            if let answer { object["answer"] = .string(answer) }
            if let view { object["view"] = .string(view) }
            return .object(object)
        }

        /// This pin with the parts it did not record yet (an older pins.json) taken from `current`.
        func filledIn(from current: Pin) -> Pin {
            var pin = self
            if pin.provider == nil { pin.provider = current.provider }
            if pin.declares == nil { pin.declares = current.declares }
            if pin.answer == nil { pin.answer = current.answer }
            if pin.view == nil { pin.view = current.view }
            if provider == nil { pin.steps = current.steps }
            return pin
        }
    }

    /// The definition last checked for an id, and what the check found (compared before anything is computed).
    private struct Seen {
        /// The `SkillInfo` value last checked: the same one needs no comparison.
        var serial: UInt64
        let title: String
        let description: String
        let input: JSONValue
        let output: JSONValue?
        let risk: SkillRisk
        let plugin: String
        let file: String
        let declares: [String]
        let kind: SkillKind
        let answer: AnswerTemplate?
        let view: SkillView?
        let audience: SkillAudience
        let change: Change?

        func matches(_ skill: SkillInfo) -> Bool {
            description == skill.description && input == skill.inputSchema && title == skill.title
                && answer == skill.answer && view == skill.view && audience == skill.audience
                && risk == skill.risk && output == skill.outputSchema && plugin == skill.plugin && file == skill.file
                && declares == skill.declares && kind == skill.kind
        }
    }

    private struct State {
        var pins: [String: Pin]
        var seen: [String: Seen] = [:]
        /// Sources whose definitions skillhost itself writes (the browser's view skills, the skill folders'
        /// tools, whose enum and catalogue follow the folders found): never pinned.
        var exempt: Set<String> = []
        /// Ids this process trusted (or filled in) since it last saved: written over the file's entries.
        var dirty: Set<String> = []
        /// Ids this process pinned as first seen since it last saved: written only where the file has none (another
        /// process's pin, written meanwhile, stands).
        var firstSeen: Set<String> = []
    }

    /// Never pins the skills of `source` (part of skillhost itself; their definitions change with what it serves).
    package func exempt(_ source: String) { state.withLock { _ = $0.exempt.insert(source) } }

    public let file: String
    private let state: Mutex<State>
    /// False when the file exists but could not be read: it is left as it is, and pins live in memory.
    private let saves: Bool
    private let log: @Sendable (LogRecord) -> Void

    /// Reads `file` (none yet: nothing is pinned). A file that cannot be read is said (`log`) and left as it is:
    /// what is seen is pinned again, in memory only.
    public init(file: String, log: @escaping @Sendable (LogRecord) -> Void = { _ in }) {
        self.file = file
        self.log = log
        var pins: [String: Pin] = [:]
        var saves = true
        // At most 16 MB: thousands of skills' definitions; a larger file is not one skillhost wrote.
        let read = BoundedFile.read(file, limit: 16 << 20)
        if case .success(.bytes(let bytes)) = read {
            if let object = (try? JSONValue(parsing: bytes))?["skills"]?.objectValue {
                for (id, value) in object.members { pins[id] = Pin(value) }
            } else {
                saves = false
                log(
                    LogRecord(
                        level: .warning, source: "pins",
                        message: "\(file) is not a pin file skillhost can read; skill definitions are pinned anew "
                            + "(move it away to start over)"))
            }
        } else if case .failure(let problem) = read {
            saves = false
            log(
                LogRecord(
                    level: .warning, source: "pins",
                    message: "\(file) \(problem); skill definitions are pinned anew (move it away to start over)"))
        }
        state = Mutex(State(pins: pins))
        self.saves = saves
    }

    /// How `skill` differs from its pinned definition; nil when it does not (one seen for the first time is
    /// pinned now).
    public func change(_ skill: SkillInfo) -> Change? {
        // Every call asks this (the call pipeline): what is decided already is answered without a batch.
        if let known = state.withLock({ Self.known(skill, &$0) }) { return known }
        return changes([skill])[0]
    }

    /// `change` for each of `skills`, in order, reading the file at most once and writing it at most once (a
    /// server listing 100,000 tools had `skillhost list` read and write pins.json once per tool: a minute for 2,000).
    public func changes(_ skills: [SkillInfo]) -> [Change?] {
        // A skill this process has no pin for may have been pinned by another process since this one read the file
        // (a running `mcp`, then `list`): the file is asked before the definition in hand is taken as first seen.
        var results = [Change?](repeating: nil, count: skills.count)
        var save = false
        let unpinned = state.withLock { state -> [Int] in
            var unpinned: [Int] = []
            for (index, skill) in skills.enumerated() {
                if let known = Self.known(skill, &state) {
                    results[index] = known
                } else if state.pins[skill.id] == nil {
                    unpinned.append(index)
                } else {
                    let decided = Self.decide(skill, &state)
                    results[index] = decided.change
                    save = save || decided.save
                }
            }
            return unpinned
        }
        if !unpinned.isEmpty {
            let disk = diskPins()
            state.withLock { state in
                for index in unpinned {
                    let skill = skills[index]
                    if let known = Self.known(skill, &state) {
                        results[index] = known
                        continue
                    }
                    if state.pins[skill.id] == nil, let pin = disk[skill.id].flatMap(Pin.init) {
                        state.pins[skill.id] = pin
                    }
                    let decided = Self.decide(skill, &state)
                    results[index] = decided.change
                    save = save || decided.save
                }
            }
        }
        if save { persist() }
        return results
    }

    /// What is already decided for `skill` — exempt, or seen with this definition — as `.some(change)`; nil when
    /// it must be decided.
    private static func known(_ skill: SkillInfo, _ state: inout State) -> Change?? {
        // A built-in source's own skills (external, by the source's name): a plugin that calls itself `skills` is
        // pinned like any other.
        if case .external = skill.kind, state.exempt.contains(skill.plugin) { return .some(nil) }
        guard let seen = state.seen[skill.id] else { return nil }
        if seen.serial == skill.serial { return .some(seen.change) }
        if seen.matches(skill) {
            state.seen[skill.id]?.serial = skill.serial
            return .some(seen.change)
        }
        return nil
    }

    /// How `skill` compares with its pin in `state` (pinned now when it has none), and whether to save.
    private static func decide(_ skill: SkillInfo, _ state: inout State) -> (change: Change?, save: Bool) {
        var save = false
        let current = Pin(skill)
        let change: Change?
        if let recorded = state.pins[skill.id] {
            let pinned = recorded.filledIn(from: current)
            if pinned != recorded {
                state.pins[skill.id] = pinned
                state.dirty.insert(skill.id)
                save = true
            }
            change = compare(pinned, current, skill.id)
        } else {
            state.pins[skill.id] = current
            state.firstSeen.insert(skill.id)
            change = nil
            save = true
        }
        state.seen[skill.id] = Seen(
            serial: skill.serial, title: skill.title, description: skill.description, input: skill.inputSchema,
            output: skill.outputSchema, risk: skill.risk, plugin: skill.plugin, file: skill.file,
            declares: skill.declares, kind: skill.kind, answer: skill.answer, view: skill.view,
            audience: skill.audience, change: change)
        return (change, save)
    }

    /// The pins the file holds now, by id (read once for a batch of skills).
    private func diskPins() -> [String: JSONValue] {
        guard saves, case .success(.bytes(let bytes)) = BoundedFile.read(file, limit: 16 << 20),
            let object = (try? JSONValue(parsing: bytes))?["skills"]?.objectValue
        else { return [:] }
        var pins: [String: JSONValue] = [:]
        pins.reserveCapacity(object.count)
        for (id, value) in object.members { pins[id] = value }
        return pins
    }

    /// Records the current definitions of `skills` as approved. Returns those that had changed.
    @discardableResult
    public func trust(_ skills: [SkillInfo]) -> [String] {
        let changed = zip(skills, changes(skills)).filter { $0.1 != nil }.map(\.0.id)
        state.withLock { state in
            for skill in skills {
                state.pins[skill.id] = Pin(skill)
                state.seen[skill.id] = nil
                state.dirty.insert(skill.id)
            }
        }
        persist()
        return changed
    }

    private static func compare(_ old: Pin, _ new: Pin, _ id: String) -> Change? {
        var parts: [String] = []
        var diff: [String] = []
        func differ(_ name: String, _ before: String?, _ after: String?) {
            guard before != after else { return }
            parts.append(name)
            diff.append("\(name): - \(before.map { String($0.prefix(300)) } ?? "(none)")")
            diff.append("\(name): + \(after.map { String($0.prefix(300)) } ?? "(none)")")
        }
        differ("title", old.title, new.title)
        differ("description", old.description, new.description)
        differ("input schema", old.input, new.input)
        differ("output schema", old.output, new.output)
        differ("risk", old.risk, new.risk)
        differ("provider", old.provider, new.provider)
        differ("declared capabilities", old.declares, new.declares)
        differ("steps", old.steps, new.steps)
        differ("answer", old.answer.flatMap { $0.isEmpty ? nil : $0 }, new.answer.flatMap { $0.isEmpty ? nil : $0 })
        differ("view", old.view.flatMap { $0.isEmpty ? nil : $0 }, new.view.flatMap { $0.isEmpty ? nil : $0 })
        return parts.isEmpty ? nil : Change(skill: id, parts: parts, diff: diff)
    }

    /// Writes the pins (0600, replaced whole); a failure is said, never passed over.
    /// Writes the pins this process changed into the file as it is now (another skillhost may have written others
    /// since this one read it: a running `mcp` dropped a pin `call` had written), under a lock all of them take.
    private func persist() {
        guard saves else { return }
        let folder = (file as NSString).deletingLastPathComponent
        _ = try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let lock = open(file + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if lock >= 0 { _ = flock(lock, LOCK_EX) }
        defer {
            if lock >= 0 { close(lock) }
        }
        var onDisk: [String: JSONValue] = [:]
        if case .success(.bytes(let bytes)) = BoundedFile.read(file, limit: 16 << 20),
            let object = (try? JSONValue(parsing: bytes))?["skills"]?.objectValue
        {
            for (id, value) in object.members { onDisk[id] = value }
        }
        let document = state.withLock { state -> JSONValue in
            for id in state.dirty { onDisk[id] = state.pins[id]?.json }
            for id in state.firstSeen.subtracting(state.dirty) {
                if let theirs = onDisk[id], let pin = Pin(theirs) {
                    // Pinned by another process meanwhile: its pin stands, and this process compares with it.
                    state.pins[id] = pin
                    state.seen[id] = nil
                } else {
                    onDisk[id] = state.pins[id]?.json
                }
            }
            (state.dirty, state.firstSeen) = ([], [])
            let skills = onDisk.keys.sorted().map { (key: $0, value: onDisk[$0] ?? .null) }
            return ["version": 1, "skills": .object(JSONObject(skills))]
        }
        let temporary = file + ".tmp"
        let saved =
            (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil
            && FileManager.default.createFile(
                atPath: temporary, contents: Data(document.prettyJSONText.utf8),
                attributes: [.posixPermissions: 0o600])
            && rename(temporary, file) == 0
        if !saved {
            log(
                LogRecord(
                    level: .warning, source: "pins",
                    message: "could not save skill definitions to \(file) (\(String(cString: strerror(errno)))); "
                        + "they are kept for this run only"))
        }
    }
}

extension SkillRegistry {
    /// The definitions a registry change brought that differ from those pinned (a front end says so at once, as a
    /// diff); none when definitions are not pinned.
    public func definitionChanges(_ change: RegistryChange) -> [DefinitionPins.Change] {
        guard let pins else { return [] }
        let ids: [String]
        switch change {
        case .loaded(let plugin): ids = plugin.skillIDs
        case .replaced(_, _, let added, _, let updated): ids = added + updated
        case .unloaded, .failed: ids = []
        }
        return pins.changes(ids.compactMap { skill($0) }).compactMap { $0 }
    }
}

extension DefinitionPins.Change {
    /// `! helper_echo's definition changed since first seen (description); until you trust it …` then the diff,
    /// one line each.
    public var lines: [String] {
        [
            "! \(skill)'s definition changed since first seen (\(parts.joined(separator: ", "))); until you trust "
                + "it (skillhost trust \(skill)) each call is asked about here and refused by call, ask and MCP"
        ] + diff.map { "    " + $0 }
    }
}
