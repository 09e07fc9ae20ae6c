import Foundation
import TestSupport
import Testing

/// The small things users look for: version, completion, the configuration, the manual, what `check` warns
/// about, and errors that name the user's file.
struct UserCommandsTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("user-commands")

    @Test func versionNamesTheHostTheABIAndSwift() async throws {
        let version = try await skillhostOffPool("version")
        #expect(version.status == 0)
        let lines = version.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "skillhost 0.1.0")
        #expect(
            lines.dropFirst().first
                == "plugin ABI 1.4 (skill_sdk.h; plugins built against 1.0, 1.1, 1.2, 1.3 or 1.4 load)")
        #expect(lines.last?.hasPrefix("built with Swift 6.") == true)
        #expect(try await skillhostOffPool("--version").stdout == version.stdout)
    }

    /// The bash script completes commands, their words and skill ids; zsh and fish scripts name the same.
    @Test func completionCompletesCommandsWordsAndSkills() async throws {
        let script = try await skillhostOffPool("completion", "bash").stdout
        let file = home + "/completion.bash"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        func complete(_ words: [String]) async throws -> [String] {
            let line = words.map { "'\($0)'" }.joined(separator: " ")
            let result = try await runProcessOffPool(
                "/bin/bash",
                [
                    "-c",
                    "source '\(file)'; COMP_WORDS=(\(line)); COMP_CWORD=\(words.count - 1); _skillhost; "
                        + "printf '%s\\n' \"${COMPREPLY[@]}\"",
                ], environment: cliEnvironment(home: home, ["PATH": Paths.products + ":/usr/bin:/bin"]))
            return result.stdout.split(separator: "\n").map(String.init)
        }
        #expect(try await complete(["skillhost", "c"]) == ["call", "check", "config", "completion"])
        #expect(try await complete(["skillhost", "plugin", ""]) == ["install", "remove", "list"])
        #expect(try await complete(["skillhost", "call", "calc"]) == ["calculator"])
        #expect(try await complete(["skillhost", "list", "--js"]) == ["--json"])
        let zsh = try await skillhostOffPool("completion", "zsh").stdout
        #expect(zsh.hasPrefix("#compdef skillhost\n") && zsh.contains("compdef _skillhost skillhost"))
        let fish = try await skillhostOffPool("completion", "fish").stdout
        #expect(
            fish.contains("complete -c skillhost -f -n '__fish_seen_subcommand_from plugin' -a 'install remove list'"))
        let wrong = try await skillhostOffPool("completion", "tcsh")
        #expect(wrong.status == 2)
        #expect(wrong.stderr.hasPrefix("skillhost: completion needs bash, zsh or fish\n"))
    }

    /// `config show` says where each value came from and never echoes a secret.
    @Test func configShowsWhereValuesComeFromWithoutSecrets() async throws {
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try
            #"{"api_key": "sk-file-secret", "model": "qwen", "mcpServers": {"x": {"command": "/bin/true", "env": {"TOKEN": "env-secret"}}}}"#
            .write(toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        #expect(try await skillhostOffPool("config", "path").stdout == home + "/config/skillhost/config.json\n")
        let shown = try await skillhostOffPool(
            "config", "show", extra: ["OPENAI_API_KEY": "sk-env-secret", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"])
        #expect(shown.status == 0, "\(shown.stderr)")
        for secret in ["sk-file-secret", "sk-env-secret", "env-secret"] {
            #expect(!shown.stdout.contains(secret), "\(secret) was echoed")
        }
        let rows = shown.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        func row(_ key: String) -> [String]? { rows.first { $0.first.map(String.init) == key }?.map(String.init) }
        #expect(row("api_key") == ["api_key", "(set)", "environment", "OPENAI_API_KEY"])
        #expect(row("base_url") == ["base_url", "http://127.0.0.1:1/v1", "environment", "OPENAI_BASE_URL"])
        #expect(row("model") == ["model", "\"qwen\"", "config.json"])
        #expect(row("step_limit") == ["step_limit", "8", "default"])
        #expect(shown.stdout.contains(#""env":{"TOKEN":"(set)"}"#), "\(shown.stdout)")

        try #"{"step_limit": "many"}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let check = try await skillhostOffPool("config", "check")
        #expect(check.status == 2)
        #expect(
            check.stderr.hasPrefix("skillhost: \(home)/config/skillhost/config.json: \"step_limit\""), "\(check.stderr)"
        )
    }

    @Test func theManualIsMadeFromTheHelp() async throws {
        let manual = try await skillhostOffPool("help", "--man")
        #expect(manual.stdout.hasPrefix(".TH SKILLHOST 1 "))
        for section in [".SH NAME", ".SH LIST", ".SH CALL", ".SH PLUGIN", ".SH NEW", ".SH CONFIG", ".SH FILES"] {
            #expect(manual.stdout.contains("\n\(section)\n"), "\(section)")
        }
        #expect(manual.stdout.contains("Usage: skillhost call <skill>"))
        // Nothing in the text starts a line with a roff request by accident.
        let lines = manual.stdout.split(separator: "\n")
        #expect(
            lines.allSatisfy {
                !$0.hasPrefix(".") || $0.hasPrefix(".TH") || $0.hasPrefix(".SH") || $0 == ".nf" || $0 == ".fi"
            })
    }

    /// `check` warns about exports besides the entry point, and load errors name the user's file.
    @Test func checkSaysWhatAnAuthorWillTripOver() async throws {
        let folder = Paths.temporaryDirectory("check-warnings")
        let visible = try Fixture.compile(
            """
            #include "skill_sdk.h"
            __attribute__((visibility("default"))) int helper(int x) { return x + 1; }
            __attribute__((visibility("default"))) int counter;
            static double one(void) { return 1; }
            static const skill_descriptor skills[] = { SKILL_TYPED("one", "One", "One.", "double one()", one) };
            SKILL_PLUGIN("visible", "1.0.0", "x", skills)
            """, name: "visible", into: folder)
        let checked = try await skillhostOffPool("check", visible)
        #expect(checked.status == 0)
        #expect(
            checked.stdout.contains(
                "warning: it exports 2 symbols besides skill_plugin_entry (counter, helper); build it with "
                    + "-fvisibility=hidden so its names cannot clash with the host's or another plugin's (SKILL_PLUGIN "
                    + "exports the entry point)\n")
                || checked.stdout.contains("(helper, counter)"), "\(checked.stdout)")
        let clean = try await skillhostOffPool("check", Paths.products + "/libskill-calculator.so")
        #expect(!clean.stdout.contains("warning:"))

        let missing = try Fixture.compile(
            """
            #include "skill_sdk.h"
            extern int not_defined_anywhere(int);
            static double one2(void) { return not_defined_anywhere(1); }
            static const skill_descriptor skills[] = { SKILL_TYPED("one2", "One", "One.", "double one2()", one2) };
            SKILL_PLUGIN("missing", "1.0.0", "x", skills)
            """, name: "missing", into: folder)
        for isolation in [["--isolate", "none"], []] {
            let result = try await runProcessOffPool(
                Paths.skillhost, ["check", missing] + isolation, environment: cliEnvironment(home: home))
            #expect(
                result.stdout.contains("  - cannot be loaded: missing.so: undefined symbol: not_defined_anywhere\n"),
                "\(isolation): \(result.stdout)")
        }
    }
}
