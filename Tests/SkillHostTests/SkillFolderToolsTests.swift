import Foundation
import SkillJSON
import TestSupport
import Testing

/// Skill folders through the real binary: their tools (`skill_activate`, `skill_read`, `skill_run`), scripts
/// confined — refused ~/.ssh, a loopback listener, writes outside their temporary folder, each with a sentence; a
/// grant lets one through — and the agent's flow with a scripted model: activate → read → run → answer.
struct SkillFolderToolsTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("skill-tools-home")
    var skills: String { home + "/data/skillhost/skills" }

    /// A skill `probe` with scripts that try what a confined script must not do.
    func makeProbe(listenerPort: Int) throws {
        let folder = skills + "/probe"
        try FileManager.default.createDirectory(atPath: folder + "/scripts", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/references", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        try "PRIVATE KEY".write(toFile: home + "/.ssh/id_rsa", atomically: true, encoding: .utf8)
        try """
        ---
        name: probe
        description: Probes what a script may do. Use when asked to probe.
        ---
        # Probe
        Read references/GUIDE.md, then run scripts/hello.sh with a name.
        """.write(toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "Say hello politely.\n".write(toFile: folder + "/references/GUIDE.md", atomically: true, encoding: .utf8)
        let scripts: [(String, String)] = [
            ("hello.sh", "echo \"hello $1 from $(pwd)\"; echo made > \"$TMPDIR/out\" && cat \"$TMPDIR/out\""),
            ("ssh.sh", "cat \"$HOME/.ssh/id_rsa\""),
            ("net.sh", "exec 3<>/dev/tcp/127.0.0.1/\(listenerPort) && head -c 5 <&3"),
            ("write.sh", "echo x > \"$HOME/escaped.txt\""),
            ("own.sh", "echo 'no module named yaml' >&2; echo scratch > \"$TMPDIR/kept\"; exit 2"),
        ]
        for (name, body) in scripts {
            try writeExecutable("#!/bin/bash\n" + body + "\n", to: folder + "/scripts/" + name)
        }
        // A symbolic link out of the folder is never followed.
        try FileManager.default.createSymbolicLink(
            atPath: folder + "/references/key", withDestinationPath: home + "/.ssh/id_rsa")
    }

    @Test func scriptsRunConfinedAndFilesStayInTheirFolder() throws {
        // The small launcher scripts go through (without it the binary's sandbox role would do the same).
        #expect(FileManager.default.isExecutableFile(atPath: Paths.products + "/skillhost-sandbox"))
        let listener = try LoopbackListener()
        try makeProbe(listenerPort: listener.port)
        let activated = try skillhost(["call", "skill_activate", #"{"name":"probe"}"#])
        #expect(activated.status == 0, "\(activated.stderr)")
        #expect(activated.stdout.contains("Read references/GUIDE.md"))
        #expect(activated.stdout.contains("<file>scripts/hello.sh</file>"))
        #expect(
            try skillhost(["call", "skill_read", #"{"name":"probe","path":"references/GUIDE.md"}"#]).stdout
                == "Say hello politely.\n\n")
        let outside = try skillhost(["call", "skill_read", #"{"name":"probe","path":"../../../../.ssh/id_rsa"}"#])
        #expect(
            outside.stderr
                == "error: ../../../../.ssh/id_rsa is not a path inside skill probe's folder: give it relative to the "
                + "folder, without \"..\", such as references/REFERENCE.md\n")
        // A file is opened once, one component at a time beneath the folder: no link is followed (a link swapped in
        // after a check was read out of the folder), no hidden file or FIFO is served, an empty file is.
        let link = try skillhost(["call", "skill_read", #"{"name":"probe","path":"references/key"}"#])
        #expect(
            link.stderr
                == "error: references/key in skill probe goes through a symbolic link or is one; links are not "
                + "followed\n")
        let skill = skills + "/probe"
        try FileManager.default.createSymbolicLink(
            atPath: skill + "/linked", withDestinationPath: skill + "/references")
        try "secret".write(toFile: skill + "/references/.hidden", atomically: true, encoding: .utf8)
        try "".write(toFile: skill + "/references/empty.md", atomically: true, encoding: .utf8)
        #expect(mkfifo(skill + "/references/pipe", 0o600) == 0)
        let throughLink = try skillhost(["call", "skill_read", #"{"name":"probe","path":"linked/GUIDE.md"}"#])
        #expect(throughLink.stderr.hasSuffix("goes through a symbolic link or is one; links are not followed\n"))
        let hidden = try skillhost(["call", "skill_read", #"{"name":"probe","path":"references/.hidden"}"#])
        #expect(hidden.stderr.contains("hidden files and files more than three folders down are not served"))
        let fifo = try skillhost(["call", "skill_read", #"{"name":"probe","path":"references/pipe"}"#])
        #expect(fifo.stderr == "error: references/pipe in skill probe is not a file\n", "\(fifo.stderr)")
        let empty = try skillhost(["call", "skill_read", #"{"name":"probe","path":"references/empty.md"}"#])
        #expect(empty.status == 0 && empty.stdout == "\n", "\(empty.stdout) \(empty.stderr)")
        let listed = try skillhost(["call", "skill_activate", #"{"name":"probe"}"#]).stdout
        #expect(!listed.contains(".hidden") && !listed.contains("linked") && !listed.contains("pipe"), "\(listed)")
        #expect(listed.contains("<file>references/empty.md</file>"), "\(listed)")
        for name in ["linked", "references/.hidden", "references/empty.md", "references/pipe"] {
            try FileManager.default.removeItem(atPath: skill + "/" + name)
        }

        let hello = try skillhost([
            "call", "skill_run", #"{"name":"probe","script":"scripts/hello.sh","arguments":["Ann"]}"#,
        ])
        #expect(hello.status == 0, "\(hello.stderr)")
        let result = try JSONValue(parsing: hello.stdout)
        let folder = (skills + "/probe" as NSString).resolvingSymlinksInPath
        #expect(result["stdout"]?.stringValue == "hello Ann from \(folder)\nmade\n", "\(hello.stdout)")

        let confinement =
            "It ran confined: it may read skill probe's folder and the system, write only its temporary folder "
            + "($TMPDIR), and has no network — if it needs more, grant it in config.json: \"skills\": {\"grant\": "
            + "{\"probe\": [\"network\"]}}\n"
        let ssh = try skillhost(["call", "skill_run", #"{"name":"probe","script":"scripts/ssh.sh"}"#])
        #expect(ssh.status != 0)
        #expect(ssh.stderr.hasPrefix("error: scripts/ssh.sh exited with status 1: "), "\(ssh.stderr)")
        #expect(ssh.stderr.contains("Permission denied") && ssh.stderr.hasSuffix(confinement), "\(ssh.stderr)")
        #expect(!ssh.stdout.contains("PRIVATE KEY") && !ssh.stderr.contains("PRIVATE KEY"))

        let net = try skillhost(["call", "skill_run", #"{"name":"probe","script":"scripts/net.sh"}"#])
        #expect(net.status != 0 && net.stderr.hasSuffix(confinement), "\(net.stderr)")
        #expect(listener.connections == 0, "the listener was reached")

        let write = try skillhost(["call", "skill_run", #"{"name":"probe","script":"scripts/write.sh"}"#])
        #expect(write.status != 0 && write.stderr.hasSuffix(confinement), "\(write.stderr)")
        #expect(!FileManager.default.fileExists(atPath: home + "/escaped.txt"))

        // A script that fails for its own reasons is not told how it was confined; what it wrote to its temporary
        // folder goes with the run (each run left a folder behind).
        let scratch = home + "/scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let own = try runProcess(
            Paths.skillhost, ["call", "skill_run", #"{"name":"probe","script":"scripts/own.sh"}"#],
            environment: cliEnvironment(home: home, ["TMPDIR": scratch]))
        #expect(own.stderr == "error: scripts/own.sh exited with status 2: no module named yaml\n", "\(own.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch) == [], "nothing is left behind")

        // Granted the network in config.json, the same script reaches the listener.
        let config = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try #"{"skills": {"grant": {"probe": ["network"]}}}"#.write(
            toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let granted = try skillhost(["call", "skill_run", #"{"name":"probe","script":"scripts/net.sh"}"#])
        #expect(granted.status == 0, "\(granted.stderr)")
        #expect((try? JSONValue(parsing: granted.stdout))?["stdout"]?.stringValue == "hello")
        #expect(listener.connections == 1)
    }

    /// A scripted model activates the skill, reads its reference, runs its script, and answers from the result.
    @Test func theAgentActivatesReadsRunsAndAnswers() throws {
        let listener = try LoopbackListener()
        try makeProbe(listenerPort: listener.port)
        let server = try LoopbackServer([
            .chatToolCalls([("c1", "skill_activate", #"{"name":"probe"}"#)]),
            .chatToolCalls([("c2", "skill_read", #"{"name":"probe","path":"references/GUIDE.md"}"#)]),
            .chatToolCalls([("c3", "skill_run", #"{"name":"probe","script":"scripts/hello.sh","arguments":["Bo"]}"#)]),
            .chatText(["The script said hello to Bo."]),
        ])
        defer { server.stop() }
        let asked = try skillhost(
            ["ask", "probe for Bo", "--json"],
            ["OPENAI_BASE_URL": server.baseURL.absoluteString, "SKILLHOST_MODEL": "m"])
        #expect(asked.status == 0, "\(asked.stderr)")
        let events = try asked.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
        let finished = events.filter { $0["event"] == "tool_call_finished" }
        #expect(finished.map { $0["skill"]?.stringValue ?? "" } == ["skill_activate", "skill_read", "skill_run"])
        #expect(finished.last?["result"]?["stdout"]?.stringValue?.hasPrefix("hello Bo from ") == true)
        // The model was offered the catalogue: skill_activate's description names the skill.
        let first = try #require(server.requests.first)
        #expect(first.body.contains("- probe: Probes what a script may do. Use when asked to probe."))
        #expect(
            first.body.contains(#"{"role":"system","content":"Skills: folders of instructions for specific tasks."#))
        // And it saw the instructions in the activation's result.
        #expect(server.requests.count == 4 && server.requests[1].body.contains("Read references/GUIDE.md"))
    }
}

/// A project's skill folders load only once the project is trusted, and then override the user's of the same name;
/// a grant that is not one is refused with the sentence.
struct SkillFolderTrustTests: DrivesSkillhost {
    let home = Paths.temporaryDirectory("skill-trust-home")

    func resolved(_ path: String) -> String { (path as NSString).resolvingSymlinksInPath }

    func make(_ folder: String, description: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "---\nname: greet\ndescription: \(description)\n---\n# Greet\n".write(
            toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
    }

    @Test func aProjectsSkillsLoadOnceTrusted() throws {
        let project = Paths.temporaryDirectory("skill-trust-project")
        try make(home + "/data/skillhost/skills/greet", description: "The user's greeting.")
        try make(project + "/.agents/skills/greet", description: "The project's greeting.")
        let before = try skillhost(["call", "skill_activate", #"{"name":"greet"}"#], in: project)
        #expect(before.stdout.contains("# Greet") && before.stdout.contains(home + "/data/skillhost/skills/greet"))
        let trusted = try skillhost(["trust", "."], in: project)
        let real = (project as NSString).resolvingSymlinksInPath
        #expect(
            trusted.stdout
                == "trusted \(real): its .agents/skills and .claude/skills are loaded when skillhost runs there\n")
        let after = try skillhost(["call", "skill_activate", #"{"name":"greet"}"#], in: project)
        #expect(after.stdout.contains(project + "/.agents/skills/greet"), "\(after.stdout)")
        // Elsewhere the project's skills are not loaded.
        let elsewhere = try skillhost(["call", "skill_activate", #"{"name":"greet"}"#], in: home)
        #expect(elsewhere.stdout.contains(home + "/data/skillhost/skills/greet"))
        // In a folder inside it, the project's skills — not that folder's own (a vendored dependency's).
        let vendored = project + "/vendor/dep"
        try make(vendored + "/.agents/skills/greet", description: "A dependency's greeting.")
        let inside = try skillhost(["call", "skill_activate", #"{"name":"greet"}"#], in: vendored)
        #expect(inside.stdout.contains(project + "/.agents/skills/greet"), "\(inside.stdout)")
        #expect(!inside.stdout.contains("A dependency's greeting."))
        // Trust is for a project's own folder: not the root, the home folder, or a folder above the current one.
        for (folder, named) in [("/", "/"), (home, resolved(home)), ("..", resolved(project + "/vendor"))] {
            let refused = try skillhost(["trust", folder], in: vendored)
            #expect(refused.status != 0)
            #expect(
                refused.stderr.hasSuffix(
                    "skillhost: not trusted: \(named) holds more than one project (it is the root, your home folder, "
                        + "or a folder above it or above the one you are in); trust the project's own folder, such as "
                        + "skillhost trust .\n"), "\(refused.stderr)")
        }

        let config = home + "/config/skillhost"
        try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
        try #"{"skills": {"grant": {"greet": ["root"]}}}"#.write(
            toFile: config + "/config.json", atomically: true, encoding: .utf8)
        let wrong = try skillhost(["list"], in: home)
        #expect(
            wrong.stderr.hasPrefix(
                "skillhost: \(config)/config.json: skills.grant.greet has \"root\"; a grant is \"network\", "
                    + "\"read:FOLDER\" or \"write:FOLDER\"\n"), "\(wrong.stderr)")
    }
}

/// Skills Over MCP: `skillhost mcp` serves the skill folders as `skill://` resources with `skills/list` and
/// `skills/get`, read by the official MCP SDK client, every digest verified against the bytes it read.
struct SkillsOverMCPTests {
    @Test func theOfficialSDKReadsSkillFoldersAsResources() async throws {
        let python = try await PythonPeers.ensure()
        let home = Paths.temporaryDirectory("skills-mcp-home")
        let folder = home + "/data/skillhost/skills/greet"
        try FileManager.default.createDirectory(atPath: folder + "/scripts", withIntermediateDirectories: true)
        try "---\nname: greet\ndescription: Greets people.\nmetadata:\n  version: \"2\"\n---\n# Greet\n".write(
            toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "print('hi')\n".write(toFile: folder + "/scripts/hi.py", atomically: true, encoding: .utf8)
        // A link out of the folder is not served; nor a hidden file or one four folders down (not listed either); an
        // empty file is listed and served.
        try FileManager.default.createSymbolicLink(atPath: folder + "/secret", withDestinationPath: "/etc/hostname")
        try "hidden".write(toFile: folder + "/.hidden", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: folder + "/a/b/c/d", withIntermediateDirectories: true)
        try "deep".write(toFile: folder + "/a/b/c/d/deep.md", atomically: true, encoding: .utf8)
        try "".write(toFile: folder + "/empty.md", atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in cliEnvironment(home: home) { environment[key] = value }
        let result = try await runProcessOffPool(
            python, [Paths.fixtures + "/mcp_skills_client.py", Paths.skillhost], environment: environment)
        #expect(result.status == 0, "\(result.stderr.suffix(2000))")
        let seen = try JSONValue(parsing: result.stdout)
        #expect(seen["extension"] == true)
        #expect(seen["skills"] == ["greet"])
        #expect(
            seen["frontmatter"] == ["name": "greet", "description": "Greets people.", "metadata": ["version": "2"]])
        #expect(seen["get_matches"] == true)
        #expect(
            seen["resources"]?.arrayValue?.compactMap(\.stringValue).filter { $0.hasPrefix("skill://") } == [
                "skill://greet/SKILL.md", "skill://greet/empty.md", "skill://greet/scripts/hi.py",
            ], "\(seen)")
        #expect(seen["verified"] == [true, true, true])
        #expect(
            seen["unlisted"] == ["skill://greet/.hidden": "refused", "skill://greet/a/b/c/d/deep.md": "refused"],
            "\(seen)")
        #expect(seen["missing"]?.stringValue?.contains("no skill at skill://nope/SKILL.md") == true)
        #expect(seen["catalogue"] == true, "skill_activate's description lists the skills for MCP clients")
    }
}

extension SkillsOverMCPTests {
    /// skillhost as an MCP client: a server's skills (here another skillhost's) are offered as `server/name`, read
    /// through the server with every file checked against its digest; their scripts never run here.
    @Test func skillsAServerServesAreUsedAsServerSlashName() throws {
        let peer = Paths.temporaryDirectory("skills-peer-home")
        let folder = peer + "/data/skillhost/skills/greet"
        try FileManager.default.createDirectory(atPath: folder + "/scripts", withIntermediateDirectories: true)
        try "---\nname: greet\ndescription: Greets people.\n---\n# Greet\nSay hello.\n".write(
            toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "print('hi')\n".write(toFile: folder + "/scripts/hi.py", atomically: true, encoding: .utf8)
        let home = Paths.temporaryDirectory("skills-client-home")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        let peerEnvironment = cliEnvironment(home: peer)
        let server: JSONValue = [
            "command": .string(Paths.skillhost), "args": ["mcp"],
            "env": .object(JSONObject(peerEnvironment.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
        ]
        try JSONValue.object(JSONObject([(key: "mcpServers", value: ["peer": server])])).jsonText.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        func skillhost(_ arguments: String...) throws -> ProcessResult {
            try runProcess(Paths.skillhost, arguments, environment: cliEnvironment(home: home))
        }
        let activated = try skillhost("call", "skill_activate", #"{"name":"peer/greet"}"#)
        #expect(activated.status == 0, "\(activated.stderr)")
        #expect(activated.stdout.hasPrefix("<skill_content name=\"peer/greet\">\n# Greet\nSay hello.\n"))
        #expect(activated.stdout.contains("<file>scripts/hi.py</file>"))
        #expect(
            try skillhost("call", "skill_read", #"{"name":"peer/greet","path":"scripts/hi.py"}"#).stdout
                == "print('hi')\n\n")
        let run = try skillhost("call", "skill_run", #"{"name":"peer/greet","script":"scripts/hi.py"}"#)
        #expect(
            run.stderr
                == "error: skill peer/greet is served by MCP server peer: its scripts are a remote party's code and "
                + "do not run here — read them with skill_read, or install the skill as a folder of your own to run "
                + "them\n")
        let listed = try skillhost("list")
        #expect(!listed.stdout.contains("peer_skill_activate"), "the server's own skill tools stand aside")
    }
}
