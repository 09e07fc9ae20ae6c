import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// The skill folders as skills the model calls, registered as the built-in `skills` source, so every call goes
/// through the call pipeline (rules, hooks, budgets, confirmations, cards) like any other:
/// - `skill_activate(name)` — read-only: the skill's instructions, its folder and its files (progressive
///   disclosure: the catalogue of names and descriptions is the tool's description);
/// - `skill_read(name, path)` — read-only: one text file of that skill's folder, bounded, never out of it;
/// - `skill_run(name, script, arguments, input)` — mutating: one of the skill's scripts, confined by the binary's
///   sandbox role (reads the skill's folder and the system, writes a private temporary folder, no network unless
///   granted), under a timeout, its output bounded.
/// A skill name is an enum in each schema: the model cannot name a skill that is not there.
package final class SkillFolderTools: Sendable {
    package struct Settings: Sendable {
        /// What scripts may do beyond the defaults, and for which skill (`"skills": {"grant": {…}}`).
        package var grants = SkillGrants()
        package var timeout: Duration = .seconds(60)
        /// The skillhost binary, whose sandbox role confines scripts; nil: scripts cannot run.
        package var launcher: String?
        package var outputLimit = 64 << 10
        /// Characters of the catalogue (names and descriptions) in `skill_activate`'s description.
        package var catalogueBudget = 8000

        package init() {}
    }

    package static let source = "skills"
    package static let toolIDs: Set<String> = ["skill_activate", "skill_read", "skill_run"]

    let roots: [SkillFolderRoot]
    package let settings: Settings
    private let current: Mutex<SkillFolderScan>
    /// Skills MCP servers serve, by server.
    private let remote = Mutex<[String: [RemoteSkill]]>([:])

    package init(roots: [SkillFolderRoot], settings: Settings) {
        self.roots = roots
        self.settings = settings
        current = Mutex(SkillFolderScan.scan(roots))
    }

    /// The skill folders found by the last scan.
    package var scan: SkillFolderScan { current.withLock { $0 } }

    /// The skills MCP servers serve, sorted by label.
    package var remoteSkills: [RemoteSkill] {
        remote.withLock { $0.values.flatMap { $0 } }.sorted { $0.label < $1.label }
    }

    /// Replaces what MCP server `server` serves (none: it serves no skills any more) and registers the tools anew.
    package func setRemote(_ skills: [RemoteSkill], server: String, registry: SkillRegistry) {
        remote.withLock { $0[server] = skills.isEmpty ? nil : skills }
        register(in: registry)
    }

    /// Scans again and registers the tools anew (or removes them when no skill is left). Returns the scan's
    /// notices and the names that came and went.
    @discardableResult
    package func rescan(into registry: SkillRegistry) -> (notices: [String], added: [String], removed: [String]) {
        let scan = SkillFolderScan.scan(roots)
        let before = current.withLock { current in
            defer { current = scan }
            return Set(current.skills.map(\.name))
        }
        let after = Set(scan.skills.map(\.name))
        register(in: registry)
        return (scan.notices, after.subtracting(before).sorted(), before.subtracting(after).sorted())
    }

    /// Registers the three tools for the skills of the last scan (none when there are no skills).
    package func register(in registry: SkillRegistry) {
        let skills = scan.skills
        let served = remoteSkills
        guard !skills.isEmpty || !served.isEmpty else {
            registry.unregisterExternal(source: Self.source)
            return
        }
        // The names as an enum while they are few; past that (a server serving 5,000 skills put every name into
        // each of three schemas, on every model request) a string the call checks.
        let allNames = skills.map(\.name) + served.map(\.label)
        let name: JSONValue =
            allNames.count <= Self.enumeratedNames && allNames.reduce(0, { $0 + $1.utf8.count }) <= 2000
            ? ["type": "string", "enum": .array(allNames.map { .string($0) }), "description": "the skill's name"]
            : [
                "type": "string", "maxLength": 200,
                "description": "the skill's name, as the catalogue of skills lists it",
            ]
        registry.registerExternal(
            source: Self.source, version: SkillRegistry.hostVersion,
            description:
                "Agent Skills: \(skills.count + served.count) skill\(skills.count + served.count == 1 ? "" : "s")",
            location: roots.map(\.path).joined(separator: ", "),
            skills: [
                tool(
                    "skill_activate", "Activate a skill", Self.activateSummary, risk: .readOnly,
                    properties: [(key: "name", value: name)], required: ["name"]
                ) { [weak self] arguments in await self?.activate(arguments) ?? Self.gone },
                tool(
                    "skill_read", "Read a skill's file",
                    "Reads one text file of an activated skill's folder (a path its instructions or activation name, "
                        + "such as references/REFERENCE.md).", risk: .readOnly,
                    properties: [
                        (key: "name", value: name),
                        (key: "path", value: ["type": "string", "description": "relative to the skill's folder"]),
                    ], required: ["name", "path"]
                ) { [weak self] arguments in await self?.readFile(arguments) ?? Self.gone },
                tool(
                    "skill_run", "Run a skill's script",
                    "Runs one of an activated skill's scripts (such as scripts/extract.py) with arguments, confined: "
                        + "it reads its skill's folder and the system, writes only a temporary folder, and has no "
                        + "network unless granted. Returns its exit status and output.", risk: .mutating,
                    properties: [
                        (key: "name", value: name),
                        (key: "script", value: ["type": "string", "description": "relative to the skill's folder"]),
                        (
                            key: "arguments",
                            value: ["type": "array", "items": ["type": "string"], "default": .array([])]
                        ),
                        (key: "input", value: ["type": "string", "description": "standard input, if any"]),
                    ], required: ["name", "script"], timeout: settings.timeout + .seconds(5)
                ) { [weak self] arguments in await self?.run(arguments) ?? Self.gone },
            ], origin: .builtIn)
    }

    /// `skill_activate`'s own description; the catalogue reaches the model in a system message (`catalogue`), and
    /// MCP clients in the description `activateDescription` writes.
    static let activateSummary =
        "Loads a skill's full instructions (and lists its files). The skills there are, with what each is for, are "
        + "listed in the system message \"Skills\"; when a task matches one, activate it first."

    /// The catalogue for the model's system context: nil when there are no skills.
    package func catalogue() -> String? {
        let skills = scan.skills
        let served = remoteSkills
        guard !skills.isEmpty || !served.isEmpty else { return nil }
        return catalogueLines(
            "Skills: folders of instructions for specific tasks. When a task matches one, call skill_activate with "
                + "its name before anything else, then follow its instructions (skill_read reads its files, "
                + "skill_run runs its scripts).\n", skills, served)
    }

    /// `skill_activate`'s description for MCP clients (which see no system message of ours): the catalogue in it.
    package func activateDescription() -> String {
        catalogueLines(
            "Loads a skill's full instructions (and lists its files). Skills are folders of instructions for "
                + "specific tasks; when a task matches one of these, activate it first:\n", scan.skills, remoteSkills)
    }

    /// Skill names listed as an enum in the tools' schemas at most.
    static let enumeratedNames = 50

    /// Each skill's name and description after `heading`, then the names of those that did not fit, all within
    /// `catalogueBudget` characters — remote skills included — and how many are left unnamed. Linear in the skills.
    func catalogueLines(_ heading: String, _ skills: [SkillFolder], _ served: [RemoteSkill]) -> String {
        var text = heading
        var used = heading.count
        let budget = settings.catalogueBudget
        var left: [String] = []
        let entries = skills.map { ($0.name, $0.description) } + served.map { ($0.label, $0.description) }
        // Room is kept for the line that counts those left unnamed.
        let reserved = Self.unnamedLine(entries.count).count
        for (name, description) in entries {
            let line = "- \(name): \(description.split(whereSeparator: \.isNewline).joined(separator: " "))\n"
            let length = line.count
            if left.isEmpty, used + length <= budget - reserved {
                text += line
                used += length
            } else {
                left.append(name)
            }
        }
        guard !left.isEmpty else { return text }
        // The rest by name while the budget lasts (a line's worth kept for the count of those left unnamed).
        var named: [String] = []
        var length = "- and: \n".count
        for name in left where used + length + name.count + 2 <= budget - reserved {
            named.append(name)
            length += name.count + 2
        }
        if !named.isEmpty { text += "- and: " + named.joined(separator: ", ") + "\n" }
        let unnamed = left.count - named.count
        if unnamed > 0 { text += Self.unnamedLine(unnamed) }
        return text
    }

    private static func unnamedLine(_ count: Int) -> String {
        "- and \(count) more skill\(count == 1 ? "" : "s") not listed here (skill_activate takes any skill's name)\n"
    }

    /// What `skill_activate` returns, and what `/use NAME` puts into the conversation: the instructions wrapped
    /// with the skill's folder and files.
    package func activation(_ name: String) -> Result<String, SkillFolderError> {
        guard let skill = scan.skill(name) else {
            return .failure(
                SkillFolderError(
                    "there is no skill \(name); /skills in the shell (or the browser's skills panel) lists them"))
        }
        switch skill.body() {
        case .failure(let error): return .failure(error)
        case .success(let body):
            let (files, more) = SkillFolderFiles.list(skill)
            var text = "<skill_content name=\"\(skill.name)\">\n\(body)\n\nSkill directory: \(skill.folder)\n"
            text += "Relative paths in this skill are relative to the skill directory: read them with skill_read, "
            text += "run scripts with skill_run.\n"
            if !files.isEmpty {
                text += "<skill_resources>\n" + files.map { "  <file>\($0)</file>\n" }.joined()
                if more { text += "  (more files not listed)\n" }
                text += "</skill_resources>\n"
            }
            return .success(text + "</skill_content>")
        }
    }

    static let gone = SkillOutcome.failure(code: .failed, "skill folders are no longer served")

    /// A skill served by an MCP server, by its label (`server/name`).
    func remoteSkill(_ label: String) -> RemoteSkill? { remoteSkills.first { $0.label == label } }

    /// The activation of a local skill folder or of a skill an MCP server serves.
    package func activate(named name: String) async -> Result<String, SkillFolderError> {
        if let served = remoteSkill(name) { return await served.activation() }
        return activation(name)
    }

    func activate(_ arguments: JSONValue) async -> SkillOutcome {
        switch await activate(named: arguments["name"]?.stringValue ?? "") {
        case .failure(let error): return .failure(code: .failed, error.message)
        case .success(let text): return .success(.string(text))
        }
    }

    func readFile(_ arguments: JSONValue) async -> SkillOutcome {
        let name = arguments["name"]?.stringValue ?? ""
        if let served = remoteSkill(name) {
            switch await served.file(arguments["path"]?.stringValue ?? "") {
            case .failure(let error): return .failure(code: .failed, error.message)
            case .success(let text): return .success(.string(text))
            }
        }
        guard let skill = scan.skill(name) else { return .failure(code: .failed, "there is no skill \(name)") }
        switch SkillFolderFiles.read(arguments["path"]?.stringValue ?? "", in: skill) {
        case .failure(let error): return .failure(code: .failed, error.message)
        case .success(let text): return .success(.string(text))
        }
    }

    private func tool(
        _ id: String, _ title: String, _ description: String, risk: SkillRisk,
        properties: [(key: String, value: JSONValue)], required: [String], timeout: Duration? = nil,
        call: @escaping @Sendable (JSONValue) async -> SkillOutcome
    ) -> ExternalSkill {
        let schema: JSONValue = [
            "type": "object", "properties": .object(JSONObject(properties)),
            "required": .array(required.map { .string($0) }), "additionalProperties": false,
        ]
        let info = SkillInfo(
            id: id, title: title, description: description, plugin: Self.source,
            pluginVersion: SkillRegistry.hostVersion, file: "skill folders", risk: risk, flags: [], timeout: timeout,
            inputSchema: schema, schemaIsGenerated: false, kind: .external)
        return ExternalSkill(info: info, call: call)
    }
}

/// Skill folders' views (MCP Apps): a folder declares one in its front matter (`metadata: {skillhost-view: FILE}`,
/// a page in its folder), and skillhost's browser shows it where that folder's scripts ran (`skill_run` calls of
/// it). A folder's view declares no origins or permissions: the restrictive default holds.
extension SkillFolderTools {
    /// The front matter's `metadata` key that names a folder's view.
    package static let viewKey = "skillhost-view"

    /// The view skill folder `name` declares, read now (at most `SkillFolderFiles.maximumReadBytes`, text, inside
    /// its folder); nil when there is no such folder or it declares none; a failure says why it cannot be shown.
    package func view(named name: String) -> Result<SkillView, SkillFolderError>? {
        guard let skill = scan.skill(name),
            let file = skill.metadata.first(where: { $0.key == Self.viewKey })?.value
        else { return nil }
        switch SkillFolderFiles.read(file, in: skill) {
        case .failure(let error): return .failure(SkillFolderError("skill \(name)'s view: \(error.message)"))
        case .success(let html):
            var view = SkillView(
                resource: "ui://\(Self.source)/\(name)", plugin: Self.source, title: name, html: html, csp: nil,
                permissions: nil, prefersBorder: false)
            view.folder = name
            return .success(view)
        }
    }

    /// Every folder's view that can be shown now.
    package func views() -> [SkillView] {
        scan.skills.compactMap { skill in
            if case .success(let view)? = view(named: skill.name) { return view }
            return nil
        }
    }
}
