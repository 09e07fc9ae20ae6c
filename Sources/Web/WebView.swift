import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// The browser front end's own view — theme, open panel, text size, the conversation used last — as state the
/// agent reads and changes: it is published as the state snapshot of the built-in `ui` source, and changed only
/// through its skills (`ui_set_theme`, `ui_show_panel`, `ui_set_text_size`). The conversation is the person's to
/// change (a turn cannot replace the conversation it runs in), so the agent reads it but has no skill for it. Every
/// tab renders from it, so "switch to dark mode" in the chat turns every open tab dark. The agent never touches the page; it changes this state, and the page follows.
package final class WebView: Sendable {
    /// The source name the skills and the snapshot are registered under.
    package static let source = "ui"

    struct State: Equatable {
        var theme = "system"
        var panel = "none"
        var textSize = "normal"
        var conversation: String?
    }

    static let themes = ["light", "dark", "system"]
    static let panels = ["none", "conversations", "skills", "state", "trace"]
    static let textSizes = ["small", "normal", "large"]

    private let state = Mutex(State())
    /// Told the new view after every change.
    private let follower = Mutex<(@Sendable (JSONValue) -> Void)?>(nil)

    package init() {}

    /// Calls `changed` with the new view after every change from now on (the session that shows it).
    func follow(_ changed: @escaping @Sendable (JSONValue) -> Void) { follower.withLock { $0 = changed } }

    /// The view as tabs and the model see it.
    package var json: JSONValue {
        let view = state.withLock { $0 }
        return [
            "theme": .string(view.theme), "panel": .string(view.panel), "text_size": .string(view.textSize),
            "conversation": view.conversation.map { .string($0) } ?? .null,
        ]
    }

    /// The skills' ids.
    package static var skillIDs: Set<String> { ["ui_set_theme", "ui_show_panel", "ui_set_text_size"] }

    /// Registers the view's skills and snapshot in `registry` (the `ui` source, built in).
    package func register(in registry: SkillRegistry) {
        let skills = [
            skill(
                "ui_set_theme", "Window theme: dark mode, light mode",
                "Switches the browser window's colour theme: dark (dark mode), light, or system (as the computer is).",
                parameter: "theme", choices: Self.themes, apply: { $0.theme = $1 }),
            skill(
                "ui_show_panel", "Window side panel",
                "Shows a side panel of the browser window — conversations, skills, state (what plugins hold) or trace "
                    + "(the last turn's steps and timings) — or none.",
                parameter: "panel", choices: Self.panels, apply: { $0.panel = $1 }),
            skill(
                "ui_set_text_size", "Window text size",
                "Sets the browser window's text size: small, normal or large.",
                parameter: "size", choices: Self.textSizes, apply: { $0.textSize = $1 }),
        ]
        registry.registerExternal(
            source: Self.source, version: SkillRegistry.hostVersion,
            description: "The browser window's view: theme, panel, text size", location: "skillhost web",
            skills: skills, origin: .builtIn, snapshot: { [weak self] in self?.json ?? .null })
    }

    /// A person's own change from the page (the theme button), the same as the skill's.
    package func set(_ key: String, _ value: String) -> Bool {
        let apply: ((inout State, String) -> Void)?
        switch key {
        case "theme" where Self.themes.contains(value): apply = { $0.theme = $1 }
        case "panel" where Self.panels.contains(value): apply = { $0.panel = $1 }
        case "text_size" where Self.textSizes.contains(value): apply = { $0.textSize = $1 }
        default: apply = nil
        }
        guard let apply else { return false }
        update { apply(&$0, value) }
        return true
    }

    /// The conversation used last (its id in the history; nil without one).
    func showing(conversation id: String?) { update { $0.conversation = id } }

    private func update(_ change: (inout State) -> Void) {
        let moved = state.withLock { state in
            let before = state
            change(&state)
            return state != before
        }
        if moved, let changed = follower.withLock({ $0 }) { changed(json) }
    }

    private func skill(
        _ id: String, _ title: String, _ description: String, parameter: String, choices: [String],
        apply: @escaping @Sendable (inout State, String) -> Void
    ) -> ExternalSkill {
        let schema: JSONValue = [
            "type": "object",
            "properties": [parameter: ["type": "string", "enum": .array(choices.map { .string($0) })]],
            "required": [.string(parameter)], "additionalProperties": false,
        ]
        let info = SkillInfo(
            id: id, title: title, description: description, plugin: Self.source,
            pluginVersion: SkillRegistry.hostVersion,
            file: "skillhost web", risk: .mutating, flags: [.idempotent], timeout: nil, inputSchema: schema,
            schemaIsGenerated: false, kind: .external)
        return ExternalSkill(info: info) { [weak self] arguments in
            // The registry validated the arguments against the schema: the value is one of the choices.
            guard let self, let value = arguments[parameter]?.stringValue else {
                return .failure(code: .failed, "the browser front end has stopped")
            }
            self.update { apply(&$0, value) }
            return .success(["view": self.json])
        }
    }
}
