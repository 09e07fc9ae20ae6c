import Foundation
import JSONRPC
import Synchronization
import TestSupport
import Testing

/// Drives the real `skillhost` binary with the bundled plugins and fixtures compiled during the run.
struct CLITests: DrivesSkillhost {
    let home: String
    let environment: [String: String]

    init() {
        home = Paths.temporaryDirectory("home")
        environment = cliEnvironment(home: home)
    }

    @Test func callsTheCalculator() throws {
        let result = try skillhost("call", "calculator", #"{"expression":"(23+7)*2"}"#)
        #expect(result.stdout == "60\n")
        #expect(result.stderr == "")
        #expect(result.status == 0)
    }

    /// Bundled skills are exact or say they cannot be: gcd(-2^63, 0) = 2^63 does not fit its int64 result.
    @Test func gcdIsExactOrRefuses() throws {
        #expect(try skillhost("call", "gcd", #"{"a": -9223372036854775807, "b": 0}"#).stdout == "9223372036854775807\n")
        let refused = try skillhost("call", "gcd", #"{"a": -9223372036854775808, "b": 0}"#)
        #expect(refused.status == 3)
        #expect(refused.stderr == "invalid arguments: $.a: must be >= -9223372036854775807, got -9223372036854775808\n")
    }

    /// `call` goes through the same policy as the agent: a deny rule always wins, and a destructive call needs
    /// --yes when there is no terminal to ask on.
    /// Bytes that are not UTF-8 are refused with the byte and where it is — on the command line and on standard
    /// input — never turned into U+FFFD and parsed as something else.
    @Test func textThatIsNotUTF8IsRefusedNamingTheByte() throws {
        let hint = "hint: give the text in UTF-8 (a JSON string can spell any character as \\uXXXX)\n"
        let argument = try runProcess(
            "/bin/sh", ["-c", #"exec "$0" call calculator "$(printf '{"expression":"1+\377"}')""#, Paths.skillhost],
            environment: environment)
        #expect(argument.status == 2)
        #expect(
            argument.stderr
                == "skillhost: argument 3 of the command line is not valid UTF-8: byte 0xFF at offset 17\n" + hint)
        let input = try runProcess(
            "/bin/sh", ["-c", #"printf '{"expression":"1+\300\200"}' | "$0" call calculator -"#, Paths.skillhost],
            environment: environment)
        #expect(input.status == 2)
        #expect(input.stderr == "skillhost: standard input is not valid UTF-8: byte 0xC0 at offset 17\n" + hint)
        #expect(try skillhost("call", "text_stats", #"{"text":"naïve 😀"}"#).status == 0, "UTF-8 itself is fine")
        // Standard input is bounded too: 17 MB of it is refused, not read to the end. (The writer's complaint about
        // the pipe closing under it is not skillhost's: SIGPIPE is ignored when an earlier test ignored it.)
        let huge = try runProcess(
            "/bin/sh",
            [
                "-c", #"head -c 17825792 /dev/zero 2>/dev/null | tr '\0' ' ' 2>/dev/null | "$0" call calculator -"#,
                Paths.skillhost,
            ],
            environment: environment)
        #expect(huge.status == 2)
        #expect(
            huge.stderr
                == "skillhost: standard input is more than 16 MB\nhint: send at most 16 MB: arguments and questions are "
                + "read whole before anything runs\n")
    }

    /// A plugin is installed under its plugin's name: the README's C `hello.so` and its Swift `hello.so` (plugin
    /// `greeter`) are two plugins, each removable by name; a file that holds another plugin is never replaced.
    @Test func pluginsAreInstalledByTheirName() throws {
        func plugin(_ name: String, skill: String) throws -> String {
            try Fixture.compile(
                """
                #include "skill_sdk.h"
                static double same(double a) { return a; }
                static const skill_descriptor skills[] = {
                    SKILL_TYPED("\(skill)", "T", "d.", "double \(skill)(double a)", same) };
                SKILL_PLUGIN("\(name)", "1.0.0", "x", skills)
                """, name: "hello", into: Paths.temporaryDirectory("same-file-name"))
        }
        let first = try plugin("hello", skill: "hypotenuse")
        let second = try plugin("greeter", skill: "greet_one")
        let folder = home + "/data/skillhost/plugins"
        #expect(
            try skillhost("plugin", "install", first).stdout.hasSuffix(
                "as \(folder)/hello.so; a running skillhost picks it up at once\n"))
        #expect(
            try skillhost("plugin", "install", second).stdout.hasSuffix(
                "as \(folder)/greeter.so; a running skillhost picks it up at once\n"))
        #expect(try skillhost("call", "hypotenuse", #"{"a":1}"#).stdout == "1\n")
        #expect(try skillhost("call", "greet_one", #"{"a":1}"#).stdout == "1\n")
        #expect(try skillhost("plugin", "remove", "hello").status == 0)
        #expect(try skillhost("call", "greet_one", #"{"a":1}"#).stdout == "1\n", "the other plugin stays")

        // A file of another plugin in the place this one would take.
        try FileManager.default.copyItem(atPath: first, toPath: folder + "/greeter2.so")
        let squatter = try plugin("greeter2", skill: "squat")
        let refused = try skillhost("plugin", "install", squatter)
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "skillhost: \(squatter): not installed: \(folder)/greeter2.so holds plugin \"hello\"; remove it first "
                + "(skillhost plugin remove hello) or give your plugin another name\n")
        // (Calling it now would be asked about: `hypotenuse` pinned with hello.so as its provider is answered from
        // another file — PinnedProvidersTests.)
        #expect(
            FileManager.default.contentsEqual(atPath: folder + "/greeter2.so", andPath: first),
            "the other plugin's file is untouched")
    }

    /// Listing sessions reads: with no history it says so and makes no history file.
    @Test func sessionsWithoutAHistoryMakesNone() throws {
        let listed = try skillhost("sessions")
        #expect(listed.status == 0)
        #expect(listed.stdout == "No saved sessions.\n")
        #expect(!FileManager.default.fileExists(atPath: home + "/data/skillhost/history.db"))
    }

    /// A client that sends every optional argument, unset ones as null (LangChain-based ones do), is served.
    @Test func nullForAnOptionalArgumentIsAsIfAbsent() throws {
        let result = try skillhost("call", "clock_now", #"{"time_zone": null}"#, "--json")
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.hasPrefix(#"{"status":"ok""#), "\(result.stdout)")
    }

    @Test func callAppliesThePolicy() throws {
        #expect(try skillhost("call", "notes_add", #"{"title":"milk"}"#).status == 0, "mutating without a rule runs")
        for file in ["notes.db"] {
            let path = home + "/data/skillhost/data/notes/" + file
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600, "\(file) is the user's alone")
        }
        let unconfirmed = try skillhost("call", "notes_delete", #"{"id":1}"#)
        #expect(unconfirmed.status == 1)
        #expect(
            unconfirmed.stderr
                == "error: not run: notes_delete is destructive; run it again with --yes to confirm, or allow it with a "
                + "policy rule in config.json\n")
        #expect(try skillhost("call", "notes_list", "{}").stdout.contains("milk"), "nothing was deleted")
        // Where the binary reads it: $XDG_CONFIG_HOME (set for every child, so a person's own setting never matters).
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"policy": {"notes_delete": "deny", "notes_*": "allow"}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let denied = try skillhost("call", "notes_delete", #"{"id":1}"#, "--yes")
        #expect(denied.status == 1)
        #expect(
            denied.stderr
                == "error: not run: calls to notes_delete are denied by the configuration (policy rule \"notes_delete\": \"deny\")\n"
        )
        try #"{"policy": {"notes_*": "allow"}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        #expect(try skillhost("call", "notes_delete", #"{"id":1}"#).status == 0, "an allow rule lets it run")
        #expect(try skillhost("call", "notes_list", "{}").stdout == "[]\n")
    }

    /// Private folders under $TMPDIR do not pile up: a dead host's is swept at the next start, a live one's is left,
    /// and SIGTERM removes this host's before it exits.
    @Test func temporaryFoldersAreCleanedUp() async throws {
        let temporary = Paths.temporaryDirectory("tmpdir")
        var environment = self.environment
        environment["TMPDIR"] = temporary
        func leftovers() -> Set<String> {
            Set(
                ((try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []).filter {
                    $0.hasPrefix("skillhost-")
                })
        }
        let gone = try runProcess("/bin/sh", ["-c", "echo $$"])  // a pid that no longer runs
        for (name, owner) in [("skillhost-Stale1", gone.stdout), ("skillhost-Alive1", "\(getpid())")] {
            try FileManager.default.createDirectory(atPath: temporary + "/" + name, withIntermediateDirectories: true)
            try owner.write(toFile: temporary + "/" + name + "/owner", atomically: true, encoding: .utf8)
        }
        let list = try runProcess(Paths.skillhost, ["list", "--no-default-plugins"], environment: environment)
        #expect(list.status == 0)
        #expect(leftovers() == ["skillhost-Alive1"], "the stale folder was swept, the live one kept, none left")

        let server = Process()
        server.executableURL = URL(fileURLWithPath: Paths.skillhost)
        server.arguments = ["mcp", "--no-default-plugins"]
        server.environment = environment
        let input = privatePipe()
        server.standardInput = input
        server.standardOutput = FileHandle.nullDevice
        try launch(server)
        #expect(await eventually { leftovers().count == 2 }, "the server made its folder")
        server.terminate()  // SIGTERM
        #expect(await eventually { !server.isRunning })
        #expect(server.terminationStatus == 143)
        #expect(leftovers() == ["skillhost-Alive1"], "SIGTERM removed the server's folder")
    }

    @Test func printsTheJSONEnvelopeAndExitCodes() throws {
        let ok = try skillhost("call", "calculator", #"{"expression":"2^10"}"#, "--json")
        #expect(ok.status == 0)
        #expect(
            ok.stdout.range(
                of: #"^\{"status":"ok","result":1024,"duration_ms":[0-9.]+\}\n$"#, options: .regularExpression) != nil)

        let error = try skillhost("call", "calculator", #"{"expression":"1/0"}"#, "--json")
        #expect(error.status == 1)
        #expect(
            error.stdout.range(
                of: #"^\{"status":"error","error":"division by zero","duration_ms":[0-9.]+,"code":"failed"\}\n$"#,
                options: .regularExpression) != nil, "\(error.stdout)")
        let unknownJSON = try skillhost("call", "calculater", "{}", "--json")
        #expect(unknownJSON.stdout.contains(#""code":"unknown_skill""#), "\(unknownJSON.stdout)")

        let invalid = try skillhost("call", "calculator", #"{"expression":5}"#)
        #expect(invalid.status == 3)
        #expect(invalid.stdout == "")
        #expect(invalid.stderr == "invalid arguments: $.expression: expected string, got integer\n")

        let syntax = try skillhost("call", "calculator", #"{"expression":"(23+7))*2"}"#)
        #expect(syntax.stderr == "invalid arguments: unexpected ')' at 7\n")

        let unknown = try skillhost("call", "calculater", "{}")
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "error: unknown skill \"calculater\" (did you mean \"calculator\"?)\n")
    }

    @Test func timesOutWithExitCode4() throws {
        let folder = Paths.temporaryDirectory("cli-plugins")
        _ = try Fixture.compileFile("behaviours.c", into: folder)
        // The stuck call would block for ten minutes: exiting well before that (a cap a busy machine cannot reach)
        // shows the process does not wait for it, without timing how fast it exits.
        let start = Date()
        let result = try skillhost(
            "call", "block", #"{"ms":600000}"#, "--timeout", "300ms", "--plugins", folder, "--json")
        #expect(result.status == 4)
        #expect(result.stdout.hasPrefix(#"{"status":"timeout","error":"block timed out after 300 ms","duration_ms":"#))
        #expect(Date().timeIntervalSince(start) < 300, "the process exits without waiting for the stuck call")
    }

    @Test func readsArgumentsFromStandardInput() throws {
        let result = try skillhost("call", "text_stats", "-", stdin: #"{"text":"One two. Three!\n"}"#)
        #expect(result.stdout == #"{"words":3,"characters":16,"lines":1,"sentences":2}"# + "\n")
    }

    @Test func runsSwiftSkills() throws {
        #expect(try skillhost("call", "clock_weekday", #"{"date":"2026-11-30"}"#).stdout == "Monday\n")
        let zone = try skillhost("call", "clock_now", #"{"time_zone":"Mars/Olympus"}"#)
        #expect(zone.status == 3)
        #expect(
            zone.stderr
                == "invalid arguments: unknown time zone \"Mars/Olympus\"; use an IANA name such as \"Europe/Paris\" or \"America/New_York\"\n"
        )
    }

    @Test func listsSkillsAndFailures() throws {
        let folder = Paths.temporaryDirectory("cli-list")
        try "not a library".write(toFile: folder + "/broken.so", atomically: true, encoding: .utf8)
        let result = try skillhost("list", "--plugins", folder)
        #expect(result.status == 0)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "20 skills from 5 plugins")
        #expect(
            lines.contains {
                $0.range(of: #"^SKILL +TITLE +PLUGIN +RISK +FLAGS +ARGUMENTS$"#, options: .regularExpression) != nil
            })
        #expect(
            lines.contains {
                $0.range(
                    of: #"^calculator +Calculator +calculator 1\.0\.0 +read-only +idempotent +expression: string$"#,
                    options: .regularExpression) != nil
            })
        #expect(
            lines.contains {
                $0.range(of: #"^text_summary .* text: string, sentences\?: integer$"#, options: .regularExpression)
                    != nil
            })
        #expect(lines.contains("Failed to load (1):"))
        #expect(lines.contains("  broken.so: is not a shared library (no ELF header); build it with cc -shared -fPIC"))
    }

    @Test func listsAsJSON() throws {
        let result = try skillhost("list", "--json")
        let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let skills = try #require(document?["skills"] as? [[String: Any]])
        let units = try #require(skills.first { $0["id"] as? String == "gcd" })
        #expect(units["kind"] as? String == "typed")
        #expect(units["signature"] as? String == "int64 gcd(int64 a, int64 b)")
        #expect(units["risk"] as? String == "read-only")
        let plugins = try #require(document?["plugins"] as? [[String: Any]])
        #expect(plugins.map { $0["name"] as? String } == ["calculator", "clock", "notes", "text", "units"])
        // SwiftPM links every bundled plugin with swiftc, which registers it with the Swift runtime.
        #expect(plugins.allSatisfy { $0["keeps_mapped"] as? Bool == true })
        let kept = try #require(document?["kept_images"] as? [String: Any])
        #expect(kept["count"] as? Int == 0, "nothing was retired in a one-shot listing")
        #expect((document?["failures"] as? [Any])?.isEmpty == true)
    }

    @Test func checksPlugins() throws {
        let good = try skillhost("check", Paths.products + "/libskill-units.so")
        #expect(good.status == 0)
        // A bundled plugin: no remark about how it was built (its user cannot act on it), in-process as `list`
        // says — however its path is written.
        #expect(
            good.stdout.hasPrefix(
                Paths.products
                    + "/libskill-units.so: ok — plugin units 1.0.0 (Unit conversions and small integer helpers), 8 skills\n"
            ))
        #expect(good.stdout.contains("\nruns: in-process · not confined\n"), "\(good.stdout)")
        let products = URL(fileURLWithPath: Paths.products)
        let relative = try runProcess(
            "/bin/sh",
            [
                "-c", #"cd "$1" && exec "$0" check "../$2/libskill-units.so""#, Paths.skillhost, products.path,
                products.lastPathComponent,
            ],
            environment: environment)
        #expect(relative.stdout.contains("\nruns: in-process · not confined\n"), "\(relative.stdout)")
        #expect(
            good.stdout.contains(
                "gcd — Greatest common divisor [read-only, idempotent]\n  typed skill: int64 gcd(int64 a, int64 b)\n"))
        #expect(
            good.stdout.contains("  input schema (generated from the signature):\n    {\n      \"type\": \"object\","))

        let folder = Paths.temporaryDirectory("cli-check")
        let source = """
            #include "skill_sdk.h"
            static const skill_descriptor skills[] = {
                SKILL_JSON("Bad", "T", "", "{", 0, 0, NULL),
            };
            SKILL_PLUGIN("bad", "1.0.0", "broken on purpose", skills)
            """
        let bad = try Fixture.compile(source, name: "bad", into: folder)
        let result = try skillhost("check", bad)
        #expect(result.status == 1)
        #expect(
            result.stdout == """
                \(bad): rejected, 4 problems:
                  - skill "Bad": id is invalid; use a lowercase letter followed by up to 63 of a-z, 0-9 and _
                  - skill "Bad": description is missing; the model needs it to decide when to call the skill
                  - skill "Bad": input schema is not valid JSON: invalid JSON at byte 1: expected a member name in double quotes
                  - skill "Bad": JSON skill without invoke: set invoke, or make it a typed skill with signature and function

                """)
        let missing = try skillhost("check", folder + "/nothing.so")
        #expect(missing.status == 1)
        #expect(missing.stderr == "skillhost: \(folder)/nothing.so: no such file\n")
    }

    @Test func explainsCommandLineMistakes() throws {
        let command = try skillhost("lst")
        #expect(command.status == 2)
        #expect(command.stderr == "skillhost: unknown command \"lst\"\nhint: did you mean skillhost list?\n")
        let option = try skillhost("list", "--jsn")
        #expect(option.stderr == "skillhost: unknown option --jsn\nhint: did you mean --json?\n")
        let missing = try skillhost("call")
        #expect(
            missing.stderr
                == "skillhost: call needs a skill id\nhint: usage: skillhost call <skill> '<json arguments>'\n")
        let timeout = try skillhost("call", "calculator", "{}", "--timeout", "soon")
        #expect(
            timeout.stderr
                == "skillhost: --timeout soon is not a duration\nhint: use a number with a unit: 500ms, 2s, 1m\n")
        let bare = try skillhost("call", "calculator", "{}", "--timeout", "0.5")
        #expect(bare.status == 2)
        #expect(
            bare.stderr
                == "skillhost: --timeout 0.5 has no unit\nhint: write 0.5s for seconds or 0.5ms for milliseconds\n")
        for huge in ["9223372036854775807ms", "99999999999999999999s", "1441m", "0.5ms", "0.0001s"] {
            let range = try skillhost("call", "calculator", "{}", "--timeout", huge)
            #expect(range.status == 2)
            #expect(
                range.stderr
                    == "skillhost: --timeout \(huge) is out of range\nhint: give a duration from 1 ms to 24 hours (1ms … 1440m)\n"
            )
        }
        let folder = try skillhost("list", "--plugins", "/nonexistent/folder")
        #expect(folder.status == 2)
        #expect(
            folder.stderr
                == "skillhost: --plugins /nonexistent/folder: no such folder\nhint: create it or fix the path\n")
    }

    @Test(arguments: ["list", "call", "check", "ask", "sessions", "mcp", "help"])
    func everyCommandHasHelp(command: String) throws {
        let result = try skillhost(command, "--help")
        #expect(result.status == 0)
        #expect(result.stdout.contains("Usage:") || result.stdout.contains("skillhost —"))
    }

    /// The C example of docs/write-a-skill.md, built with its cc line and dropped into the user plugins folder.
    @Test func theWriteASkillExampleWorksAsWritten() throws {
        let readme = try String(
            contentsOf: Paths.root.appendingPathComponent("docs/write-a-skill.md"), encoding: .utf8)
        let source = try #require(
            readme.components(separatedBy: "```c\n").dropFirst().first?.components(separatedBy: "```").first)
        let buildLine = try #require(readme.split(separator: "\n").first { $0.hasPrefix("cc -shared") })
        #expect(source.split(separator: "\n").count <= 25, "the example stays short")
        let work = Paths.temporaryDirectory("readme")
        try source.write(toFile: work + "/hello.c", atomically: true, encoding: .utf8)
        // The README builds against the installed SDK; here the headers are the clone's.
        let command = buildLine.replacingOccurrences(
            of: "$(pkg-config --cflags skillsdk)", with: "-I " + Paths.sdkInclude)
        let build = try runProcess("/bin/sh", ["-c", "cd \(work) && \(command)"])
        #expect(build.status == 0, "\(build.stderr)")
        let plugins = home + "/data/skillhost/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: work + "/hello.so", toPath: plugins + "/hello.so")
        let list = try skillhost("list")
        #expect(list.stdout.contains("hypotenuse"))
        #expect(list.stdout.contains("greet"))
        #expect(try skillhost("call", "hypotenuse", #"{"a": 3, "b": 4}"#).stdout == "5\n")
        #expect(try skillhost("call", "greet", #"{"name": "Ada"}"#).stdout == "Hello, Ada!\n")
    }
}

/// `skillhost list --watch` prints one line per change as plugins come and go.
struct ListWatchTests {
    /// Starts `skillhost list --watch` (plus `extra` options) on `folder` and reads its output line by line.
    static func watch(_ folder: String, _ extra: [String] = []) throws -> (Process, LineReader) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Paths.skillhost)
        process.arguments = ["list", "--watch"] + extra + ["--no-default-plugins", "--plugins", folder]
        process.environment = cliEnvironment(home: Paths.temporaryDirectory("watch-home"))
        let output = privatePipe()
        process.standardOutput = output
        try launch(process)
        return (process, LineReader(output.fileHandleForReading))
    }

    @Test func printsChangesLive() async throws {
        let folder = Paths.temporaryDirectory("watch-plugins")
        let (process, lines) = try Self.watch(folder)
        defer { process.terminate() }
        #expect(
            await lines.next(until: { $0.hasPrefix("Watching") }) == "Watching 1 folder for changes (Ctrl-C to stop)")

        let plugin = try Fixture.compileFile("typed.c", into: Paths.temporaryDirectory("watch-staging"))
        try FileManager.default.copyItem(atPath: plugin, toPath: folder + "/typed.so")
        let added = await lines.next()
        #expect(added?.hasPrefix("+ typed 1.0.0: 9 skills added (add, negate32, twice64,") == true)
        try "junk".write(toFile: folder + "/junk.so", atomically: false, encoding: .utf8)
        #expect(
            await lines.next() == "! junk.so: is not a shared library (no ELF header); build it with cc -shared -fPIC")
        try FileManager.default.removeItem(atPath: folder + "/typed.so")
        #expect(await lines.next()?.hasPrefix("- typed 1.0.0: 9 skills removed") == true)
    }
}

extension ListWatchTests {
    /// `list --watch` ends on SIGTERM and SIGHUP (as a service manager or a closed terminal sends them), with the
    /// shell's status for a signal.
    @Test(arguments: [SIGTERM, SIGHUP]) func endsOnATerminationSignal(_ number: Int32) async throws {
        let (process, lines) = try Self.watch(Paths.temporaryDirectory("watch-signal"))
        #expect(await lines.next(until: { $0.hasPrefix("Watching") }) != nil)
        kill(process.processIdentifier, number)
        let ended = try await offPool { () -> Int32 in
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(ended == 128 + number)
    }

    @Test func printsChangesAsJSONLines() async throws {
        let folder = Paths.temporaryDirectory("watch-json")
        let (process, lines) = try Self.watch(folder, ["--json"])
        defer { process.terminate() }
        _ = await lines.next(until: { $0 == "}" })  // the end of the initial listing
        let staging = Paths.temporaryDirectory("watch-json-staging")
        let source = try String(contentsOfFile: Paths.fixtures + "/hot.c", encoding: .utf8)
        for version in [1, 2] {
            let built = try Fixture.compile(
                source, name: "hot\(version)", into: staging, flags: ["-shared", "-fPIC", "-DVERSION=\(version)"])
            _ = rename(built, folder + "/hot.so")
            let line = try #require(await lines.next())
            let change = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(change?["change"] as? String == (version == 1 ? "loaded" : "replaced"))
            #expect(change?["version"] as? String == "1.\(version)")
            #expect((change?["kept_images"] as? [String: Any])?["count"] as? Int == 0)
        }
    }
}

/// Reads lines from a pipe as they arrive, on a thread of its own (never blocking the cooperative pool).
final class LineReader: Sendable {
    private struct State {
        var lines: [String] = []
        var ended = false
    }

    private let state = Mutex(State())

    init(_ handle: FileHandle) {
        let descriptor = handle.fileDescriptor
        Thread { [self] in
            var buffer = Data()
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(descriptor, &chunk, chunk.count)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                buffer.append(contentsOf: chunk[0..<count])
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    self.state.withLock { $0.lines.append(line) }
                }
            }
            self.state.withLock { $0.ended = true }
        }.start()
    }

    /// The next line satisfying `until` (default: any), or nil when the output ends or a generous cap passes.
    func next(until: (String) -> Bool = { _ in true }) async -> String? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let (line, ended) = state.withLock { state -> (String?, Bool) in
                state.lines.isEmpty ? (nil, state.ended) : (state.lines.removeFirst(), false)
            }
            if let line {
                if until(line) { return line }
                continue
            }
            if ended { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}
