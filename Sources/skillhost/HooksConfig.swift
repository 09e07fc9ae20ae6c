import SkillHost
import SkillJSON

/// `"hooks"` in config.json: `{"before_call": [{"match": "notes_*", "command": ["~/bin/audit", "--strict"],
/// "timeout_ms": 2000, "on_error": "deny"}], "after_call": […], "permission": […], "turn_start": […],
/// "turn_end": […]}`.
enum HooksConfig {
    static let example = #"{"match": "notes_*", "command": ["~/bin/audit"], "timeout_ms": 2000}"#

    static func hooks(_ value: JSONValue, fail: (String) -> CLIError) throws(CLIError) -> Hooks {
        let events = HookEvent.allCases.map(\.rawValue).joined(separator: ", ")
        guard let object = value.objectValue else {
            throw fail("\"hooks\" must map events (\(events)) to lists of hooks like [\(example)]")
        }
        var hooks = Hooks()
        for (name, list) in object.members {
            guard let event = HookEvent(rawValue: name) else {
                let hint =
                    EditDistance.closest(to: name, among: HookEvent.allCases.map(\.rawValue))
                    .map { "did you mean \"\($0)\"? " } ?? ""
                throw fail("\"hooks\" has \"\(name)\", which is not an event (\(hint)\(events))")
            }
            guard let items = list.arrayValue else {
                throw fail("hooks.\(name) must be a list of hooks like [\(example)]")
            }
            var parsed: [Hook] = []
            for (index, item) in items.enumerated() {
                parsed.append(try hook(item, place: "hooks.\(name)[\(index + 1)]", fail: fail))
            }
            hooks.events[event] = parsed
        }
        return hooks
    }

    private static func hook(_ item: JSONValue, place: String, fail: (String) -> CLIError) throws(CLIError) -> Hook {
        guard let object = item.objectValue else { throw fail("\(place) must be an object like \(example)") }
        let keys = ["match", "command", "timeout_ms", "on_error", "sandbox"]
        for key in object.keys where !keys.contains(key) {
            let hint = EditDistance.closest(to: key, among: keys).map { "did you mean \"\($0)\"? " } ?? ""
            throw fail("\(place) has \"\(key)\", which hooks do not take (\(hint)\(keys.joined(separator: ", ")))")
        }
        guard let command = object["command"]?.arrayValue?.compactMap(\.stringValue), !command.isEmpty,
            command.count == object["command"]?.arrayValue?.count, !command[0].isEmpty
        else {
            throw fail(
                "\(place) needs \"command\": the program and its arguments, like [\"~/bin/audit\", \"--strict\"]")
        }
        var timeout = Duration.seconds(5)
        if let given = object["timeout_ms"] {
            guard let milliseconds = given.doubleValue, milliseconds >= 1, milliseconds <= 600_000 else {
                throw fail("\(place): \"timeout_ms\" must be a number of milliseconds from 1 to 600000")
            }
            timeout = .milliseconds(Int64(milliseconds))
        }
        var allowOnError = false
        if let given = object["on_error"] {
            guard let text = given.stringValue, ["allow", "deny"].contains(text) else {
                throw fail("\(place): \"on_error\" must be \"allow\" or \"deny\" (what a hook that fails means)")
            }
            allowOnError = text == "allow"
        }
        let pattern = object["match"].map { $0.stringValue ?? "" } ?? "*"
        guard !pattern.isEmpty else { throw fail("\(place): \"match\" must be a skill id or pattern") }
        let sandbox = try object["sandbox"].map { value throws(CLIError) in
            try Config.sandbox(value, "\(place).sandbox", fail: fail)
        }
        return Hook(
            pattern: pattern, command: command, timeout: timeout, allowOnError: allowOnError, sandbox: sandbox)
    }
}
