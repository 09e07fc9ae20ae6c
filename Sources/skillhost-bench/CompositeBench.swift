import Foundation
import SkillHost
import SkillJSON

// What a composite skill costs over calling its steps directly: eight in-process typed calls (bench_add) made
// one after another by `invoke`, against one composite whose eight steps make the same calls — with arguments
// from the input (checked before the first step runs) and chained through the previous step's result.
//
//   .build/release/skillhost-bench --composite-only [--runs R]

func compositeBenchmarks(_ options: Options, registry: SkillRegistry) async throws {
    let folder = NSTemporaryDirectory() + "skillhost-bench-composites-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let steps = 8
    let fromInput = (0..<steps).map { _ in #"{"call": "bench_add", "with": {"a": "${input.x}", "b": 2}}"# }
    let chained = (0..<steps).map { index in
        index == 0
            ? #"{"call": "bench_add", "with": {"a": "${input.x}", "b": 1}, "as": "s0"}"#
            : #"{"call": "bench_add", "with": {"a": "${s\#(index - 1)}", "b": 1}, "as": "s\#(index)"}"#
    }
    for (id, list) in [("bench_from_input", fromInput), ("bench_chained", chained)] {
        let json = """
            {"id": "\(id)", "description": "bench", "input_schema": {"type": "object",
             "properties": {"x": {"type": "number"}}, "required": ["x"]}, "steps": [\(list.joined(separator: ", "))]}
            """
        try json.write(toFile: folder + "/\(id).skill.json", atomically: true, encoding: .utf8)
        _ = try registry.load(file: folder + "/\(id).skill.json").get()
    }
    let calls = 2_000
    func measure(_ body: () async -> Void) async -> [Run] {
        for _ in 0..<calls { await body() }  // warm up
        var runs: [Run] = []
        for _ in 0..<max(1, options.runs) {
            var samples: [Double] = []
            samples.reserveCapacity(calls)
            for _ in 0..<calls {
                let start = now()
                await body()
                samples.append(Double(now() - start))
            }
            runs.append(Run(samples: samples))
        }
        return runs
    }
    let direct = await measure {
        var x = 1.0
        for _ in 0..<steps {
            let outcome = await registry.invoke(
                SkillInvocation(skill: "bench_add", arguments: ["a": .double(x), "b": 1]))
            x = outcome.result?.doubleValue ?? 0
        }
    }
    let input = await measure {
        _ = await registry.invoke(SkillInvocation(skill: "bench_from_input", arguments: ["x": 1]))
    }
    let chain = await measure {
        _ = await registry.invoke(SkillInvocation(skill: "bench_chained", arguments: ["x": 1]))
    }
    func perStep(_ composite: [Run]) -> String {
        let medians = zip(composite, direct).map { ($0.percentile(0.5) - $1.percentile(0.5)) / Double(steps) / 1000 }
        let sorted = medians.sorted()
        return String(
            format: "%.2f µs per step (runs %.2f – %.2f)", sorted[sorted.count / 2], sorted.first ?? 0,
            sorted.last ?? 0)
    }
    print("Composite skills: \(steps) in-process typed steps, \(options.runs) runs × \(calls) calls")
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    print(Row(name: "\(steps) direct invoke calls, one after another", runs: direct).line)
    print(Row(name: "one composite, arguments from the input", runs: input).line)
    print(Row(name: "one composite, each step chained to the previous result", runs: chain).line)
    print("")
    print("overhead, arguments from the input: " + perStep(input))
    print("overhead, chained: " + perStep(chain))
}
