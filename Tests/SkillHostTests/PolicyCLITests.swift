import Foundation
import TestSupport
import Testing

/// Policy rules that look at the skill's risk and the call's arguments, through the real binary: `call` obeys them,
/// `policy explain` says which rule decides and why, `list` shows the rules per skill, and a rule that cannot be
/// used is refused with the sentence naming it.
struct PolicyCLITests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("policy-home")
    var file: String { home + "/config/skillhost/config.json" }

    func configure(_ text: String) throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try text.write(toFile: file, atomically: true, encoding: .utf8)
    }

    @Test func rulesAboutArgumentsDecideCallsAndAreExplained() throws {
        try configure(
            """
            {"policy": [
              {"skill": "notes_delete", "arguments": {"properties": {"id": {"maximum": 100}}}, "then": "allow"},
              {"skill": "notes_add", "arguments": {"properties": {"title": {"pattern": "^secret"}}}, "then": "deny"},
              {"skill": "*", "risk": "destructive", "then": "ask"},
              {"skill": "notes_add", "then": "allow"}
            ]}
            """)
        #expect(try skillhost("call", "notes_add", #"{"title": "milk"}"#).status == 0)
        let secret = try skillhost("call", "notes_add", #"{"title": "secret plan"}"#, "--yes")
        #expect(secret.status == 1)
        #expect(
            secret.stderr
                == "error: not run: calls to notes_add are denied by the configuration (policy rule {\"skill\": "
                + #""notes_add", "arguments": {"properties":{"title":{"pattern":"^secret"}}}, "then": "deny"})"#
                + "\n")
        // id 1 is within the rule's maximum: no --yes needed; id 500 is not, so the destructive rule asks.
        #expect(try skillhost("call", "notes_delete", #"{"id": 1}"#).status == 0, "allowed by its arguments")
        let high = try skillhost("call", "notes_delete", #"{"id": 500}"#)
        #expect(
            high.stderr
                == "error: not run: notes_delete is destructive; run it again with --yes to confirm, or allow it with "
                + "a policy rule in config.json\n")

        let explained = try skillhost("policy", "explain", "notes_delete", #"{"id": 5}"#)
        #expect(explained.status == 0)
        #expect(
            explained.stdout == """
                notes_delete {"id":5}: allow
                  rule 1: {"skill": "notes_delete", "arguments": {"properties":{"id":{"maximum":100}}}, "then": "allow"}
                    the most specific of 2 matching: exact skill id, the arguments match its schema
                  also matches, less specific: rule 3: {"skill": "*", "risk": "destructive", "then": "ask"}

                """)
        let fallback = try skillhost("policy", "explain", "notes_delete", #"{"id": 500}"#)
        #expect(
            fallback.stdout == """
                notes_delete {"id":500}: ask
                  rule 3: {"skill": "*", "risk": "destructive", "then": "ask"}
                    the most specific of 1 matching: a pattern with 0 literal characters, risk destructive
                  asked in the shell, the browser and the agent; skillhost call needs --yes; MCP clients are refused \
                unless they can ask their user

                """)
        let none = try skillhost("policy", "explain", "calculator", #"{"expression": "1+1"}"#)
        #expect(
            none.stdout
                == "calculator {\"expression\":\"1+1\"}: allow\n  no rule matches; calculator is read-only, so it runs\n"
        )
        let invalid = try skillhost("policy", "explain", "notes_delete", #"{"id": "x"}"#)
        #expect(invalid.status == 3)
        #expect(invalid.stderr == "skillhost: invalid arguments for notes_delete: $.id: expected integer, got string\n")

        let list = try skillhost("list")
        #expect(list.stdout.contains("Policy rules per skill"), "\(list.stdout)")
        let row = list.stdout.split(separator: "\n").last { $0.hasPrefix("notes_delete ") }.map(String.init) ?? ""
        #expect(
            row.hasSuffix(
                #"1. notes_delete (arguments {"properties":{"id":{"maximum":100}}}) → allow; 3. * (destructive) → ask"#),
            "\(row)")
    }

    /// With `{"*": "allow", "notes_delete": "ask"}`, a one-step composite deleted the note while a direct call was
    /// refused: the glob that matched the composite spoke for its step. A step's ask stands unless a rule names the
    /// composite itself.
    @Test func aCompositesStepIsDecidedAsTheCallItIs() throws {
        let plugins = home + "/data/skillhost/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        try """
        {"id": "wipe_one", "description": "Deletes note 1.", "input_schema": {"type": "object"},
         "steps": [{"call": "notes_delete", "with": {"id": 1}}]}
        """.write(toFile: plugins + "/wipe_one.skill.json", atomically: true, encoding: .utf8)
        try configure(#"{"policy": {"*": "allow", "notes_delete": "ask"}}"#)
        #expect(try skillhost("call", "notes_add", #"{"title": "milk"}"#).status == 0)
        let direct = try skillhost("call", "notes_delete", #"{"id": 1}"#)
        #expect(direct.status == 1)
        let composite = try skillhost("call", "wipe_one", "{}")
        #expect(composite.status == 1)
        #expect(
            composite.stderr.hasSuffix(
                "error: not run: wipe_one is destructive; run it again with --yes to confirm, or allow it with a policy rule in config.json\n"
            ), "\(composite.stderr)")
        #expect(
            try skillhost("call", "notes_list", "{}").stdout.contains(#""title":"milk""#), "the note is still there")
        // A rule for the composite by its own id speaks for its steps.
        try configure(#"{"policy": {"*": "allow", "notes_delete": "ask", "wipe_one": "allow"}}"#)
        #expect(try skillhost("call", "wipe_one", "{}").status == 0)
    }

    /// The README's own path rule `^/home/me/scratch/` let `<scratch>/../outside.txt` through: a rule sees an
    /// absolute path as it leads (`.`, `..` and repeated slashes resolved as text).
    @Test func aPathRuleSeesWhereAPathLeads() throws {
        try configure(
            """
            {"policy": [
              {"skill": "notes_add", "then": "deny"},
              {"skill": "notes_add", "arguments": {"properties": {"title": {"pattern": "^/home/me/scratch/"}}}, "then": "allow"}
            ]}
            """)
        #expect(try skillhost("call", "notes_add", #"{"title": "/home/me/scratch/a.txt"}"#).status == 0)
        for title in [
            "/home/me/scratch/../outside.txt", "/home/me/scratch/./../../me/x", "//home/me/scratch/../../etc/passwd",
        ] {
            let refused = try skillhost("call", "notes_add", #"{"title": "\#(title)"}"#)
            #expect(refused.status != 0, "\(title)")
            #expect(refused.stderr.contains("not run"), "\(title): \(refused.stderr)")
        }
        // An allow rule must hold for the path as written and as it leads.
        #expect(try skillhost("call", "notes_add", #"{"title": "/home/me/other/../scratch/b.txt"}"#).status != 0)
        // A deny rule holds for either: a string that only starts like a path is judged as written too.
        try configure(
            #"{"policy": [{"skill": "notes_add", "arguments": {"properties": {"body": {"pattern": "\\.\\./"}}}, "then": "deny"}]}"#
        )
        #expect(try skillhost("call", "notes_add", #"{"title": "t", "body": "/srv/app/link/../secret"}"#).status != 0)
    }

    @Test func aRuleThatCannotBeUsedIsRefusedByNumber() throws {
        let cases: [(String, String)] = [
            (#"[{"skill": "x", "then": "maybe"}]"#, #"policy rule 1 needs "then": "allow", "ask" or "deny""#),
            (#"[{"then": "deny"}]"#, #"policy rule 1 needs "skill": a skill id or pattern ("*" for every skill)"#),
            (
                #"[{"skill": "x", "then": "deny"}, {"skill": "y", "when": 1, "then": "deny"}]"#,
                #"policy rule 2 has "when", which rules do not take (skill, risk, arguments, then)"#
            ),
            (
                #"[{"skill": "x", "risk": "scary", "then": "deny"}]"#,
                #"policy rule 1: "risk" must be "read-only", "mutating" or "destructive""#
            ),
            (
                #"[{"skill": "x", "arguments": 5, "then": "deny"}]"#,
                #"policy rule 1: "arguments" must be a JSON Schema object, like {"properties": {…}}"#
            ),
            (#"["x"]"#, #"policy rule 1 must be an object like {"skill": "notes_*", "then": "ask"}"#),
            // A misspelt keyword is ignored by JSON Schema — the rule would match every call: refused instead.
            (
                #"[{"skill": "notes_delete", "arguments": {"properties": {"id": {"maximun": 0}}}, "then": "allow"}]"#,
                #"policy rule 1: its "arguments" schema has "maximun" at /properties/id, which JSON Schema does not know (did you mean "maximum"?)"#
            ),
            (
                #"[{"skill": "x", "arguments": {"propertyNames": {"enum": ["title"]}}, "then": "allow"}]"#,
                #"policy rule 1: its "arguments" schema has "propertyNames" at its top, which skillhost's rules do not check; express the condition with the keywords they do (properties, pattern, enum, maximum, required…)"#
            ),
            (
                #"[{"skill": "x", "arguments": {"anyOf": [{"type": "object"}, {"requird": ["a"]}]}, "then": "deny"}]"#,
                #"policy rule 1: its "arguments" schema has "requird" at /anyOf/1, which JSON Schema does not know (did you mean "required"?)"#
            ),
            (
                #""deny""#,
                #""policy" must map skill id patterns to "allow", "ask" or "deny", or list rules like [{"skill": "notes_*", "then": "ask"}]"#
            ),
        ]
        for (policy, sentence) in cases {
            try configure(#"{"policy": \#(policy)}"#)
            let result = try skillhost("call", "calculator", #"{"expression": "1"}"#)
            #expect(result.status == 2, "\(policy)")
            #expect(result.stderr == "skillhost: \(file): \(sentence)\nhint: fix the file or remove it\n", "\(policy)")
        }
        try configure(#"{"policy": [{"skill": "x", "arguments": {"pattern": "("}, "then": "deny"}]}"#)
        let broken = try skillhost("call", "calculator", #"{"expression": "1"}"#)
        #expect(broken.status == 2)
        #expect(
            broken.stderr.hasPrefix(#"skillhost: \#(file): policy rule 1: its "arguments" schema cannot be used: "#),
            "\(broken.stderr)")
    }
}
