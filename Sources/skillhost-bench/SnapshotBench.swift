import Agent
import Foundation
import SkillHost
import SkillJSON

// What the plugins' state costs each model request: 20 in-process plugins with a snapshot each, taken (on a
// thread of their own, as the agent does) and assembled into the trimmed system message.
//
//   .build/release/skillhost-bench --snapshots-only [--runs R]

func snapshotBenchmarks(_ options: Options) async throws {
    let registry = try SkillRegistry(
        configuration: .init(dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-snapshots")))
    var names: [String] = []
    for index in 0..<20 {
        let name = "state\(index)"
        let source = """
            #include "skill_sdk.h"
            #include <string.h>
            static int noop(void *s, const skill_call_api *api, skill_call *call, const char *args) {
                (void)s; (void)args; api->set_result(call, "1", 1); return SKILL_OK;
            }
            static int snapshot(void *state, const skill_snapshot_api *api, skill_snapshot *out) {
                static const char text[] = "{\\"count\\":\(index),\\"recent\\":[\\"milk\\",\\"eggs\\",\\"bread\\"]}";
                (void)state; api->set(out, text, sizeof text - 1); return SKILL_OK;
            }
            static const skill_descriptor skills[] = {
                SKILL_JSON("\(name)_get", "Get", "Gets.", "{\\"type\\":\\"object\\"}", SKILL_RISK_READ_ONLY, 0, noop),
            };
            SKILL_PLUGIN_EX("\(name)", "1.0.0", "state bench", skills, NULL, NULL, NULL, 0u, NULL, snapshot)
            """
        _ = try registry.load(file: try compile(source, name: name)).get()
        names.append(name)
    }
    func measure(_ plugins: [String]) async -> [Run] {
        var runs: [Run] = []
        for _ in 0..<max(1, options.runs) {
            var samples: [Double] = []
            for _ in 0..<2000 {
                let start = now()
                let taken = await registry.snapshots(of: plugins)
                _ = StateSnapshots.message(taken, budget: 2000)
                samples.append(Double(now() - start))
            }
            runs.append(Run(samples: samples))
        }
        return runs
    }
    let runs = await measure(names)
    let hopOnly = await measure([])
    var inline: [Run] = []
    for _ in 0..<max(1, options.runs) {
        var samples: [Double] = []
        for _ in 0..<2000 {
            let start = now()
            var taken: [PluginState] = []
            for name in names {
                if case .success(let state)? = registry.stateOnCurrentThread(plugin: name) { taken.append(state) }
            }
            _ = StateSnapshots.message(taken, budget: 2000)
            samples.append(Double(now() - start))
        }
        inline.append(Run(samples: samples))
    }
    // Where the time goes: taking the 20 snapshots alone, and building the message from taken ones alone.
    var takeOnly: [Run] = []
    var messageOnly: [Run] = []
    var taken: [PluginState] = []
    for name in names {
        if case .success(let state)? = registry.stateOnCurrentThread(plugin: name) { taken.append(state) }
    }
    for _ in 0..<max(1, options.runs) {
        var takeSamples: [Double] = []
        var messageSamples: [Double] = []
        for _ in 0..<2000 {
            var start = now()
            for name in names { _ = registry.stateOnCurrentThread(plugin: name) }
            takeSamples.append(Double(now() - start))
            start = now()
            _ = StateSnapshots.message(taken, budget: 2000)
            messageSamples.append(Double(now() - start))
        }
        takeOnly.append(Run(samples: takeSamples))
        messageOnly.append(Run(samples: messageSamples))
    }
    print("State snapshots per model request: 20 in-process plugins, \(runs.count) runs × 2,000 requests")
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    print(Row(name: "take 20 snapshots (one thread hop) + trimmed message", runs: runs).line)
    print(Row(name: "the thread hop alone (no plugins)", runs: hopOnly).line)
    print(Row(name: "20 snapshots + message on the calling thread (no hop)", runs: inline).line)
    print(Row(name: "  of which: taking the 20 snapshots", runs: takeOnly).line)
    print(Row(name: "  of which: the trimmed message from them", runs: messageOnly).line)
    registry.shutdown()
}
