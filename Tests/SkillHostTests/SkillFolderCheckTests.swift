import Foundation
import TestSupport
import Testing

/// Skill folders of the Agent Skills format, judged by `skillhost check FOLDER`: the same verdicts as the reference
/// validator (`agentskills validate`, skills-ref from PyPI) on a corpus of valid and invalid folders; hostile
/// folders refused with a sentence, within bounds.
struct SkillFolderCheckTests {
    let root = Paths.temporaryDirectory("skill-corpus")

    /// Writes `folder/file` with `text`.
    func make(_ folder: String, _ text: String, file: String = "SKILL.md") throws -> String {
        let path = root + "/" + folder
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try text.write(toFile: path + "/" + file, atomically: true, encoding: .utf8)
        return path
    }

    func check(_ folder: String) throws -> ProcessResult {
        try runProcess(Paths.skillhost, ["check", folder], environment: cliEnvironment(home: root + "/home"))
    }

    /// name → (SKILL.md text, valid by the specification).
    static let corpus: [(name: String, text: String, valid: Bool)] = [
        ("minimal", "---\nname: minimal\ndescription: Does one thing. Use when asked.\n---\n# Minimal\n", true),
        (
            "full",
            "---\nname: full\ndescription: Everything.\nlicense: MIT\ncompatibility: Requires git\nmetadata:\n  "
                + "author: me\n  version: \"1.0\"\nallowed-tools: Bash(git:*) Read\n---\nbody\n", true
        ),
        ("café", "---\nname: café\ndescription: Unicode lowercase letters are letters.\n---\n", true),
        ("folded", "---\nname: folded\ndescription: >\n  folded\n  text\n---\n", true),
        ("numbers", "---\nname: numbers\ndescription: 12\nmetadata:\n  version: 1.0\n---\n", true),
        ("crlf", "---\r\nname: crlf\r\ndescription: Windows line ends.\r\n---\r\n", true),
        ("longest", "---\nname: longest\ndescription: " + String(repeating: "d", count: 1024) + "\n---\n", true),
        ("nested-metadata", "---\nname: nested-metadata\ndescription: d\nmetadata:\n  a:\n    b: c\n---\n", true),
        ("no-front-matter", "# Just markdown\n", false),
        ("unclosed", "---\nname: unclosed\ndescription: d\n", false),
        ("Upper", "---\nname: Upper\ndescription: d\n---\n", false),
        ("-leading", "---\nname: -leading\ndescription: d\n---\n", false),
        ("double--hyphen", "---\nname: double--hyphen\ndescription: d\n---\n", false),
        ("under_score", "---\nname: under_score\ndescription: d\n---\n", false),
        ("dot-dot", "---\nname: ../dot-dot\ndescription: A name that climbs out.\n---\n", false),
        ("mismatch", "---\nname: other-name\ndescription: d\n---\n", false),
        (
            String(repeating: "n", count: 65), "---\nname: \(String(repeating: "n", count: 65))\ndescription: d\n---\n",
            false
        ),
        ("no-description", "---\nname: no-description\n---\n", false),
        ("empty-description", "---\nname: empty-description\ndescription: ''\n---\n", false),
        ("too-long", "---\nname: too-long\ndescription: " + String(repeating: "d", count: 1025) + "\n---\n", false),
        (
            "compat",
            "---\nname: compat\ndescription: d\ncompatibility: " + String(repeating: "c", count: 501) + "\n---\n", false
        ),
        ("unknown-field", "---\nname: unknown-field\ndescription: d\nversion: 2\n---\n", false),
        ("bad-yaml", "---\nname: bad-yaml\ndescription: \"unclosed\n---\n", false),
        ("colon", "---\nname: colon\ndescription: Use when: the user asks\n---\n", false),
        ("flow", "---\nname: flow\ndescription: d\nmetadata: {a: b}\n---\n", false),
        ("duplicate", "---\nname: duplicate\ndescription: d\ndescription: e\n---\n", false),
        ("tagged", "---\nname: tagged\ndescription: !!str d\n---\n", false),
        ("not-a-mapping", "---\n- a\n- b\n---\n", false),
        ("list-name", "---\nname:\n  - a\ndescription: d\n---\n", false),
        (
            "yaml-bomb",
            "---\nname: yaml-bomb\ndescription: d\nmetadata:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                + "  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                + "  d: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n---\n", false
        ),
    ]

    @Test func verdictsAgreeWithTheReferenceValidator() async throws {
        let python = try await PythonPeers.ensure()
        let reference = (python as NSString).deletingLastPathComponent + "/agentskills"
        var disagreements: [String] = []
        for entry in Self.corpus {
            let folder = try make(entry.name, entry.text)
            let theirs = try runProcess(reference, ["validate", folder], environment: cliEnvironment(home: root))
            let ours = try check(folder)
            #expect((ours.status == 0) == entry.valid, "\(entry.name): \(ours.stdout)")
            if (theirs.status == 0) != (ours.status == 0) {
                disagreements.append("\(entry.name): skills-ref \(theirs.status), skillhost \(ours.status)")
            }
        }
        // No SKILL.md at all, and the lower-case file name the reference accepts too.
        let empty = root + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let lower = try make("lower", "---\nname: lower\ndescription: d\n---\n", file: "skill.md")
        for (folder, valid) in [(empty, false), (lower, true)] {
            let theirs = try runProcess(reference, ["validate", folder], environment: cliEnvironment(home: root))
            let ours = try check(folder)
            #expect((ours.status == 0) == valid && (theirs.status == 0) == valid, "\(folder)")
        }
        #expect(disagreements.isEmpty, "\(disagreements)")
    }

    /// Every problem is one sentence naming the file; the exact words of the common ones.
    @Test func problemsAreSentences() throws {
        let mismatch = try check(try make("mismatch", "---\nname: other-name\ndescription: d\n---\n"))
        #expect(
            mismatch.stdout == """
                ✗ \(root)/mismatch: 1 problem
                  \(root)/mismatch/SKILL.md: the name "other-name" differs from its folder's name "mismatch"; rename one so they match (skillhost knows a skill by its folder's name)
                  (skillhost loads it anyway: its name and description are usable)
                  its scripts: no network, reads its folder and the system, writes only its temporary folder — grant more in config.json: "skills": {"grant": {"mismatch": ["read:~/Documents", "write:~/out", "network"]}}

                """)
        let missing = try check(try make("missing", "---\nname: missing\n---\n"))
        #expect(
            missing.stdout == """
                ✗ \(root)/missing: 1 problem
                  \(root)/missing/SKILL.md: the front matter has no description; add one saying what the skill does and when to use it

                """)
        let colon = try check(try make("colon", "---\nname: colon\ndescription: Use when: asked\n---\n"))
        // One fact said once: the problem names the line, and nothing repeats it as a warning.
        #expect(
            colon.stdout == """
                ✗ \(root)/colon: 1 problem
                  \(root)/colon/SKILL.md, line 3: a value holds ": " without quotes, which is not valid YAML — put such values in quotes
                  (skillhost loads it anyway: its name and description are usable)
                  its scripts: no network, reads its folder and the system, writes only its temporary folder — grant more in config.json: "skills": {"grant": {"colon": ["read:~/Documents", "write:~/out", "network"]}}

                """, "\(colon.stdout)")
    }

    /// Hostile folders: refused within bounds, each with a sentence — a 10 MB SKILL.md, binary bytes, deep nesting,
    /// an alias bomb.
    @Test func hostileFoldersAreRefusedWithinBounds() throws {
        let huge = try make(
            "huge", "---\nname: huge\ndescription: d\n---\n" + String(repeating: "x", count: 10 << 20))
        let hugeResult = try check(huge)
        #expect(hugeResult.status == 1)
        #expect(
            hugeResult.stdout.contains(
                "\(root)/huge/SKILL.md is 10240 KB; a SKILL.md may be at most 1024 KB — move long material into "
                    + "references/ and point to it"), "\(hugeResult.stdout)")

        let binary = root + "/binary"
        try FileManager.default.createDirectory(atPath: binary, withIntermediateDirectories: true)
        try Data([0x2D, 0x2D, 0x2D, 0x0A, 0x00, 0xFF, 0xFE]).write(to: URL(fileURLWithPath: binary + "/SKILL.md"))
        #expect(try check(binary).stdout.contains("is not text (it is not UTF-8, or holds NUL bytes)"))

        var deep = "---\nname: deep\ndescription: d\nmetadata:\n"
        for level in 0..<200 { deep += String(repeating: " ", count: 2 * (level + 1)) + "k\(level):\n" }
        deep += String(repeating: " ", count: 402) + "end\n---\n"
        let deepResult = try check(try make("deep", deep))
        #expect(deepResult.stdout.contains("nests deeper than"), "\(deepResult.stdout)")

        let bomb = try check(
            try make("bomb", "---\nname: bomb\ndescription: &a d\nlicense: *a\n---\n"))
        #expect(
            bomb.stdout.contains(
                "bomb/SKILL.md, line 3: the front matter sets an anchor (&a); anchors and aliases are not allowed in "
                    + "a skill's front matter"), "\(bomb.stdout)")
    }
}
