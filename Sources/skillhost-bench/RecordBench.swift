import Agent
import Foundation
import SkillHost
import SkillJSON

// What recording costs a turn (`ask --record`): the offline router's turn over the bundled-style calculator,
// plain and recorded (every request, response and call written as JSON Lines), alternating.
//
//   .build/release/skillhost-bench --record-only [--runs R]

func recordBenchmarks(_ options: Options, registry: SkillRegistry) async throws {
    let file = workFolder + "/bench.skillrec"
    func turn(recorded: Bool) async throws -> Double {
        let slot = RecordSlot()
        if recorded {
            unlink(file)  // a new file each time, as a new record is (not one truncated again and again)
            let made = try SessionRecorder(
                path: file, model: "offline", configuration: AgentConfiguration(), secrets: [])
            slot.recorder = made
        }
        let session = AgentSession(skills: registry, provider: OfflineRouter(), recording: slot)
        let start = now()
        for await _ in session.send("what is 1.5+2.25") {}
        let took = Double(now() - start)
        slot.recorder?.close()
        return took
    }
    var plain: [Run] = []
    var recorded: [Run] = []
    for _ in 0..<max(1, options.runs) {
        var plainSamples: [Double] = []
        var recordedSamples: [Double] = []
        for _ in 0..<300 {
            plainSamples.append(try await turn(recorded: false))
            recordedSamples.append(try await turn(recorded: true))
        }
        plain.append(Run(samples: plainSamples))
        recorded.append(Run(samples: recordedSamples))
    }
    print("A turn of the offline router (2 steps, 1 call), \(plain.count) runs × 300 turns, alternating")
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    print(Row(name: "not recorded", runs: plain).line)
    print(Row(name: "recorded (ask --record)", runs: recorded).line)
}
