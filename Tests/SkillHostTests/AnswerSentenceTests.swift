import Foundation
import TestSupport
import Testing

/// Issue #64: the offline router answers in sentences made from what a skill declares — its template (ABI 1.3),
/// else its title and its result schema's titles — for any plugin, in process and in a worker, with the raw result
/// still on the trace.
struct AnswerSentenceTests {
    @Test(arguments: ["in-process", "process"])
    func aThirdPartyPluginsResultsReadAsSentences(isolation: String) throws {
        let home = Paths.temporaryDirectory("answer-sentences")
        try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
        try #"{"isolation": {"default": "\#(isolation)", "start_timeout_ms": 120000}}"#.write(
            toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
        let plugins = Paths.temporaryDirectory("answer-sentences-plugins")
        _ = try Fixture.compileFile("sentences.c", into: plugins)
        for (request, answer, raw) in [
            ("rect area width 3 height 4", "A 3 by 4 rectangle has an area of 12.", "✓ rect_area → 12 · "),
            // Rounding as asked is the result's; the arguments are said as given.
            (
                "rect area width 2.5 height 4.4, rounded", "A 2.5 by 4.4 rectangle has an area of 11.",
                "✓ rect_area → 11"
            ),
            ("pair mean of a 3 and b 4", "The mean of 3 and 4 is 3.5.", #"✓ pair_mean → {"count":2,"mean":3.5} · "#),
            // No template: the title, and the members as the result schema names them.
            ("pair stats a 3 b 4", "Pair statistics: Count 2, Mean 3.5", #"✓ pair_stats → {"count":2,"mean":3.5}"#),
        ] {
            let run = try runProcess(
                Paths.skillhost, ["ask", request, "--plugins", plugins], environment: cliEnvironment(home: home))
            #expect(run.stdout == "[offline router] \(answer)\n", "\(request): \(run.stdout)\(run.stderr)")
            #expect(run.stderr.contains(raw), "\(request): \(run.stderr)")
        }
    }

    @Test func theBundledClockSaysTheTimeAsAPersonWould() throws {
        let run = try runProcess(
            Paths.skillhost, ["ask", "what time is it in Tokyo"],
            environment: cliEnvironment(home: Paths.temporaryDirectory("answer-clock")))
        // Issue #64: "clock_now: date: … iso8601: … time: … time_zone: Asia/Tokyo utc_offset: +09:00 weekday: …".
        let sentence =
            #/\[offline router\] It's \d\d:\d\d on [A-Z][a-z]+day \d{1,2} [A-Z][a-z]+ \d{4} in Tokyo \(UTC\+9\)\.\n/#
        #expect(run.stdout.wholeMatch(of: sentence) != nil, "\(run.stdout)")
        #expect(run.stderr.contains(#""time_zone":"Asia/Tokyo""#), "the raw result is on the trace: \(run.stderr)")
    }

    /// A template a stranger wrote wrongly is refused at load, in one sentence naming the skill and the slot.
    @Test func aTemplateThatCannotBeUsedIsRefusedByCheck() throws {
        let source = try String(contentsOfFile: Paths.fixtures + "/sentences.c", encoding: .utf8)
            .replacingOccurrences(of: "{args.width} by", with: "{args.width|money} by")
        let plugin = try Fixture.compile(source, name: "sentences", into: Paths.temporaryDirectory("answer-bad"))
        let run = try runProcess(
            Paths.skillhost, ["check", plugin],
            environment: cliEnvironment(home: Paths.temporaryDirectory("answer-bad-home")))
        #expect(run.status == 1)
        #expect(
            run.stdout.contains(
                "  - skill \"rect_area\": answer template slot “{args.width|money}” names the unknown filter “money”; "
                    + "use one of time, date, place, offset, count, plural:WORD\n"), "\(run.stdout)\(run.stderr)")
    }
}
