import Foundation
import SkillJSON
import TestSupport
import Testing

@testable import SkillHost

/// A spare and its standby peek child build Landlock's rules for the peek's lists while they wait (`--prepare`). A
/// launch takes them only where they still hold: a file replaced since is confined as the new file, and a path the
/// prepared lists named but the launch's do not stays out of reach. What each process may read is seen from a
/// plugin whose constructor (it runs in the peek child, then in the worker) tries two files and names itself after
/// what it could open.
struct StandbyRulesTests {
    /// Whether `pid` holds a Landlock ruleset.
    static func holdsRuleset(_ pid: some BinaryInteger) -> Bool {
        let folder = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0))
                == "anon_inode:[landlock-ruleset]"
        }
    }

    /// The plugin's name as its peek reported it and as the worker then described it, for a spare that prepared
    /// `prepare` (besides the system's lists) and a launch whose lists add `launch` to the system's (the peek's and
    /// the worker's alike); `meanwhile` runs once the rules are built, before the launch, which says the prepared
    /// paths are `unchanged` (the host's word, from its watch) when asked to.
    static func names(
        plugin: String, prepare: [String], launch: [String], unchanged: Bool = false,
        meanwhile: () throws -> Void = {}
    ) async throws -> [String?] {
        let prepared = try #require(WorkerPreparation.make())
        func lists(read: [String], copy: [String]) -> String {
            NativeConfinement.peekSpecification(
                execute: prepared.paths.execute + copy, read: prepared.paths.read + read, maximumABI: -1
            ).jsonText
        }
        let launchSuffix =
            ([
                "--filter", prepared.filterHex, "--peek", lists(read: launch, copy: [plugin]),
            ] + (unchanged ? ["--prepared", "unchanged"] : [])).map { "," + JSONValue.string($0).jsonText }.joined()
        let worker = try NativeWorkerTests.Worker(
            plugin: plugin, spare: true,
            spareArguments: ["--filter", prepared.filterHex, "--prepare", lists(read: prepare, copy: [])],
            launchSuffix: launchSuffix, launches: false)
        await IsolationTests.eventually("the spare and its standby child built their rules") {
            holdsRuleset(worker.pid)
                && IsolationTests.children(of: worker.pid).contains { holdsRuleset(Int($0.prefix { $0 != " " }) ?? 0) }
        }
        try meanwhile()
        worker.launch()
        let peeked = worker.request(1, "declaration").last?["result"]?["name"]?.stringValue
        let described = worker.request(2, "confine", lists(read: launch, copy: [plugin])).last?["result"]
        _ = worker.finish()
        return [peeked, described?["plugin"]?["name"]?.stringValue]
    }

    static func probe(kept: String, secret: String, in folder: String) throws -> String {
        try Fixture.compile(
            """
            #define _GNU_SOURCE
            #include "skill_sdk.h"
            #include <fcntl.h>
            #include <stdio.h>
            #include <unistd.h>
            static char probe_name[32] = "probe";
            static int readable(const char *path) {
                int fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) close(fd);
                return fd >= 0;
            }
            __attribute__((constructor)) static void probe(void) {
                snprintf(probe_name, sizeof probe_name, "kept%d_secret%d", readable("\(kept)"), readable("\(secret)"));
            }
            static int noop(void *s, const skill_call_api *api, skill_call *call, const char *args) {
                (void)s; (void)args; api->set_result(call, "{}", 2); return SKILL_OK;
            }
            static const skill_descriptor skills[] = {
                SKILL_JSON("probe_noop", "Noop", "Does nothing.", "{\\"type\\":\\"object\\"}", SKILL_RISK_READ_ONLY, 0,
                           noop),
            };
            SKILL_PLUGIN(probe_name, "1.0.0", "reads two files", skills)
            """, name: "probe", into: folder)
    }

    @Test func aLaunchTakesThePreparedRulesOnlyWhereTheyStillHold() async throws {
        let folder = Paths.temporaryDirectory("standby-rules")
        let kept = folder + "/kept.txt", secret = folder + "/secret.txt"
        try "kept".write(toFile: kept, atomically: false, encoding: .utf8)
        try "secret".write(toFile: secret, atomically: false, encoding: .utf8)
        let plugin = try Self.probe(kept: kept, secret: secret, in: folder)

        let both = { (name: String) in [name, name] }
        #expect(try await Self.names(plugin: plugin, prepare: [kept], launch: [kept]) == both("kept1_secret0"))
        // Replaced after the rules were built (a new file renamed over it, as editors and package managers do).
        let replaced = try await Self.names(plugin: plugin, prepare: [kept], launch: [kept]) {
            try "kept again".write(toFile: kept, atomically: true, encoding: .utf8)
        }
        #expect(replaced == both("kept1_secret0"))
        // Prepared, then not in the launch's lists.
        #expect(try await Self.names(plugin: plugin, prepare: [kept, secret], launch: [kept]) == both("kept1_secret0"))
        #expect(try await Self.names(plugin: plugin, prepare: [], launch: [kept, secret]) == both("kept1_secret1"))
        // The host's word that nothing changed is taken without a stat of each path: told so wrongly, both keep the
        // rule of the file replaced (which no path names any more), so the new one is out of reach.
        let trusted = try await Self.names(plugin: plugin, prepare: [kept], launch: [kept], unchanged: true) {
            try "kept once more".write(toFile: kept, atomically: true, encoding: .utf8)
        }
        #expect(trusted == both("kept0_secret0"))
    }
}
