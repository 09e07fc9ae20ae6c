import Agent
import Foundation
import SessionUI
import SkillHost
import SkillJSON
import Support
import TestSupport

/// Agent overhead per step, SSE parsing throughput, and skill selection time and recall with 1,000 skills.
func agentBenchmarks(registry: SkillRegistry) async {
    // 1. A turn with the scripted provider: step 1 asks for bench_add, step 2 answers — run by the agent session
    //    alone, and through the conversation's owner as every front end runs it (forwarding, trace, turn state),
    //    alternately, so that both see the same machine.
    var turnSamples: [Double] = []
    var ownedSamples: [Double] = []
    var skillSamples: [Double] = []
    func script() -> ScriptedProvider {
        ScriptedProvider([.calls([("bench_add", #"{"a":1.5,"b":2.25}"#)]), .text("3.75")])
    }
    for iteration in 0..<5_000 {
        let session = AgentSession(skills: registry, provider: script())
        var start = now()
        var skillTime: Duration = .zero
        for await event in session.send("add 1.5 and 2.25") {
            if case .toolCall(let call) = event, case .finished(_, let duration) = call.phase { skillTime = duration }
        }
        let alone = Double(now() - start)
        let owner = ConversationOwner(
            nil,
            setup: ConversationSetup(
                skills: registry, provider: script(), configuration: AgentConfiguration(), person: false))
        start = now()
        if let stream = try? owner.send("add 1.5 and 2.25") { for await _ in stream {} }
        let owned = Double(now() - start)
        if iteration >= 500 {  // warm-up
            turnSamples.append(alone)
            ownedSamples.append(owned)
            skillSamples.append(Double(skillTime.components.attoseconds) / 1e9)
        }
    }
    let turns = Run(samples: turnSamples)
    let owned = Run(samples: ownedSamples)
    let skill = Run(samples: skillSamples)
    print("")
    print(
        String(
            format: "agent turn with the scripted provider (2 steps, 1 typed call), 4,500 turns: median %.1f µs, "
                + "p10 %.1f µs, p90 %.1f µs → %.1f µs per step; of which the skill call (await invoke) median %.1f µs",
            turns.percentile(0.5) / 1000, turns.percentile(0.1) / 1000, turns.percentile(0.9) / 1000,
            turns.percentile(0.5) / 2000, skill.percentile(0.5) / 1000))
    print(
        String(
            format: "the same turn through the conversation's owner (as every front end runs it): median %.1f µs, "
                + "p10 %.1f µs, p90 %.1f µs",
            owned.percentile(0.5) / 1000, owned.percentile(0.1) / 1000, owned.percentile(0.9) / 1000))

    // 2. SSE parsing: a 16 MB stream of chat-completion content deltas with CRLF line ends, fed in 16 KB pieces.
    let event =
        #"data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hello, this is a token "},"finish_reason":null}]}"#
        + "\r\n\r\n"
    let stream = Array(String(repeating: event, count: (16 << 20) / event.utf8.count).utf8)
    var framingRates: [Double] = []
    var decodingRates: [Double] = []
    for _ in 0..<5 {
        var parser = SSEParser()
        var events = 0
        var start = now()
        stream.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 16_384, bytes.count)
                events += parser.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])).count
                offset = end
            }
        }
        framingRates.append(Double(stream.count) / (Double(now() - start) / 1e9) / 1e6)
        var decoder = ChatStreamDecoder()
        var parser2 = SSEParser()
        var chunks = 0
        start = now()
        stream.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 16_384, bytes.count)
                for payload in parser2.feed(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) {
                    chunks += (try? decoder.decode(payload).count) ?? 0
                }
                offset = end
            }
        }
        decodingRates.append(Double(stream.count) / (Double(now() - start) / 1e9) / 1e6)
        precondition(events > 0 && chunks == events, "every event decodes to one text chunk")
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print(
        String(
            format: "SSE parsing of a 16 MB chat stream in 16 KB pieces (5 runs): framing %.0f MB/s (range %.0f–%.0f); "
                + "framing + JSON decoding of each chunk %.0f MB/s (range %.0f–%.0f)",
            median(framingRates), framingRates.min() ?? 0, framingRates.max() ?? 0, median(decodingRates),
            decodingRates.min() ?? 0, decodingRates.max() ?? 0))

    // 3. Skill selection among the bundled skills plus 1,000 synthetic ones.
    // The bundled skills as the agent indexes them (arguments included), beside synthetic ones.
    let bundled = registry.skills
    let synthetic = SyntheticSkills.make(1_000)
    let documents = bundled.map { ($0.id, $0.title, $0.description) } + synthetic
    let indexStart = now()
    let selector = SkillSelector(
        bundled, others: synthetic.map { (id: $0.0, text: "\($0.0) \($0.0) \($0.1) \($0.1) \($0.2)") })
    let indexTime = Double(now() - indexStart) / 1e6
    var selectSamples: [Double] = []
    var hitsAtK = 0
    var hitsAt5 = 0
    var misses: [String] = []
    for _ in 0..<20 {
        for (request, expected) in SyntheticSkills.labelled {
            let start = now()
            let chosen = selector.select(request, limit: 24, keep: [])
            selectSamples.append(Double(now() - start))
            if selectSamples.count <= SyntheticSkills.labelled.count {
                if chosen.contains(expected) { hitsAtK += 1 } else { misses.append("“\(request)” → \(expected)") }
                if chosen.prefix(5).contains(expected) { hitsAt5 += 1 }
            }
        }
    }
    let selection = Run(samples: selectSamples)
    let total = SyntheticSkills.labelled.count
    print(
        String(
            format: "skill selection among %d skills (K = 24): median %.2f ms, p90 %.2f ms per request (index built "
                + "once in %.1f ms); recall@24 %d/%d = %.0f %%, recall@5 %d/%d = %.0f %%",
            documents.count, selection.percentile(0.5) / 1e6, selection.percentile(0.9) / 1e6, indexTime, hitsAtK,
            total, 100 * Double(hitsAtK) / Double(total), hitsAt5, total, 100 * Double(hitsAt5) / Double(total)))
    if !misses.isEmpty { print("  not in the top 24: \(misses.joined(separator: "; "))") }

    // 4. The offline router: one request routed against every loaded skill (argument filling included).
    let requests = [
        "what's 15 times 23 plus 4", "convert 72 fahrenheit to celsius", "what time is it in Tokyo",
        "convert 9am from New York to London", "how many words are in: the quick brown fox", "show me my notes",
        "delete note 3", "what day of the week was 1969-07-20", "write me a poem about autumn",
        "how many pounds is 3 kg",
    ]
    let tools = registry.skills.map(ToolDefinition.init)
    let router = OfflineRouter()
    var runMedians: [Double] = []
    for _ in 0..<5 {
        var samples: [Double] = []
        for _ in 0..<30 {
            for request in requests {
                let start = now()
                _ = router.route(request, tools: tools)
                samples.append(Double(now() - start))
            }
        }
        runMedians.append(Run(samples: samples).percentile(0.5))
    }
    let routed = Run(samples: runMedians)
    print(
        String(
            format: "offline router, %d skills, 10 requests × 30 × 5 runs: median of run medians %.2f ms per request "
                + "(runs %.2f–%.2f ms)",
            tools.count, routed.percentile(0.5) / 1e6, (runMedians.min() ?? 0) / 1e6, (runMedians.max() ?? 0) / 1e6))
}
