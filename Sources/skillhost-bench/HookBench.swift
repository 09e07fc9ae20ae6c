import Foundation
import SkillHost
import SkillJSON

// What a `before_call` hook that answers at once adds to a call: the bundled-style `bench_add` through `invoke`
// without hooks, with a compiled C hook (reads its input, answers {"decision":"allow"}), and with the same hook
// as a /bin/sh script.
//
//   .build/release/skillhost-bench --hooks-only [--runs R]

func hookBenchmarks(_ options: Options) async throws {
    let hookSource = """
        #include <stdio.h>
        int main(void) {
            char buffer[4096];
            while (fread(buffer, 1, sizeof buffer, stdin) > 0) {}
            fputs("{\\"decision\\":\\"allow\\"}\\n", stdout);
            return 0;
        }
        """
    try FileManager.default.createDirectory(atPath: workFolder, withIntermediateDirectories: true)
    try hookSource.write(toFile: workFolder + "/hook.c", atomically: true, encoding: .utf8)
    let cc = Process()
    cc.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
    cc.arguments = ["-O2", workFolder + "/hook.c", "-o", workFolder + "/hook"]
    try cc.run()
    cc.waitUntilExit()
    let script = workFolder + "/hook.sh"
    try "#!/bin/sh\ncat > /dev/null\necho '{\"decision\":\"allow\"}'\n".write(
        toFile: script, atomically: true, encoding: .utf8)
    chmod(script, 0o755)
    let plugin = try compileFixture()
    func registry(_ hook: String?) throws -> SkillRegistry {
        var configuration = SkillRegistry.Configuration(
            dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-hooks"))
        if let hook { configuration.hooks = Hooks([.beforeCall: [Hook(command: [hook])]]) }
        let registry = try SkillRegistry(configuration: configuration)
        _ = try registry.load(file: plugin).get()
        return registry
    }
    let calls = 300
    func measure(_ registry: SkillRegistry) async -> [Run] {
        var runs: [Run] = []
        for _ in 0..<max(1, options.runs) {
            var samples: [Double] = []
            for _ in 0..<calls {
                let start = now()
                let outcome = await registry.invoke("bench_add", arguments: #"{"a":1,"b":2}"#)
                precondition(outcome.status == .ok, "\(outcome)")
                samples.append(Double(now() - start))
            }
            runs.append(Run(samples: samples))
        }
        return runs
    }
    let plain = await measure(try registry(nil))
    let compiled = await measure(try registry(workFolder + "/hook"))
    let shell = await measure(try registry(script))
    print("A before_call hook that answers at once: bench_add via await invoke, \(plain.count) runs × \(calls) calls")
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    print(Row(name: "no hook", runs: plain).line)
    print(Row(name: "a compiled C hook", runs: compiled).line)
    print(Row(name: "a /bin/sh script hook", runs: shell).line)

    // The pinned-definition check every call takes (an unchanged skill: a lookup and comparisons).
    let pins = DefinitionPins(file: workFolder + "/pins.json")
    let plainRegistry = try registry(nil)
    guard let info = plainRegistry.skill("bench_add") else { return }
    _ = pins.change(info)
    var pinRuns: [Run] = []
    for _ in 0..<max(1, options.runs) {
        var samples: [Double] = []
        for _ in 0..<1000 {
            let start = now()
            for _ in 0..<100 { _ = pins.change(info) }
            samples.append(Double(now() - start) / 100)
        }
        pinRuns.append(Run(samples: samples))
    }
    print(Row(name: "pinned-definition check, unchanged skill (per call)", runs: pinRuns).line)
}
