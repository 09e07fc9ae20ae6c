import Dispatch
import Foundation
import SkillHost
import Synchronization

// Process isolation: the round trip of a trivial call in process mode against the floor (a raw pipe round trip of
// a line of the same size between two processes), against in-process calls, and how long a worker takes to start.

/// Waits without blocking until `descriptor` is readable (`poll` with no timeout, again and again).
func pollUntilReadable(_ descriptor: Int32) {
    var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
    while poll(&request, 1, 0) == 0 {}
}

/// The echo side of the pipe floor: `skillhost-bench --pipe-echo` writes back every byte it reads;
/// `--pipe-echo-polling` polls for them instead of blocking in `read`.
func pipeEcho(polling: Bool) -> Never {
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        if polling { pollUntilReadable(0) }
        let count = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
        if count <= 0 { exit(0) }
        var offset = 0
        while offset < count {
            let written = buffer.withUnsafeBytes { write(1, $0.baseAddress.map { $0 + offset }, count - offset) }
            if written <= 0 { exit(1) }
            offset += written
        }
    }
}

/// One line out, the same line back, through pipes to a child process: what any process boundary costs at least.
/// `polling`: both sides poll for the line instead of blocking in `read` (as the direct lane does).
func pipeFloorRuns(_ options: Options, line: String, polling: Bool = false) throws -> [Run] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = [polling ? "--pipe-echo-polling" : "--pipe-echo"]
    let toChild = Pipe()
    let fromChild = Pipe()
    process.standardInput = toChild
    process.standardOutput = fromChild
    try process.run()
    let output = toChild.fileHandleForWriting.fileDescriptor
    let input = fromChild.fileHandleForReading.fileDescriptor
    let bytes = Array((line + "\n").utf8)
    var buffer = [UInt8](repeating: 0, count: 65536)
    let runs = measure(options) {
        _ = bytes.withUnsafeBytes { write(output, $0.baseAddress, $0.count) }
        var received = 0
        while received < bytes.count {
            if polling { pollUntilReadable(input) }
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count <= 0 { fatalError("the echo process went away") }
            received += count
        }
    }
    try toChild.fileHandleForWriting.close()
    process.waitUntilExit()
    return runs
}

/// Isolation settings for `skillhost` with every plugin in `mode`; `--swift-worker` measures the Swift worker
/// (`skillhost worker`, forked from its template) instead of the C worker beside the binary.
func benchIsolation(_ skillhost: String, _ mode: IsolationMode) -> IsolationSettings {
    var isolation = IsolationSettings(executable: skillhost) { _, _ in mode }
    if CommandLine.arguments.contains("--swift-worker") { isolation.nativeWorker = nil }
    return isolation
}

func isolationBenchmarks(_ options: Options, inProcess: SkillRegistry) async throws {
    let folder = bundledPluginFolder()
    let skillhost = folder + "/skillhost"
    guard FileManager.default.isExecutableFile(atPath: skillhost) else {
        print("isolation: \(skillhost) not found; build it first (swift build -c release)")
        return
    }
    func processRegistry(confines: Bool = true, worker: String? = nil) throws -> SkillRegistry {
        var configuration = SkillRegistry.Configuration(
            dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data"))
        var isolation = benchIsolation(skillhost, .process)
        if let worker { isolation.nativeWorker = worker }
        isolation.confines = confines
        isolation.maximumCrashes = 1000  // the deadline measurement kills the worker on purpose, again and again
        configuration.isolation = isolation
        return try SkillRegistry(configuration: configuration)
    }
    // For profiling a worker's start alone (perf record … --starts-only): 200 confined starts, nothing else — of a
    // plugin built with cc (no Swift runtime anywhere in the worker) and of the calculator (SwiftPM links the Swift
    // runtime into it, so its worker and its peek load that too).
    if CommandLine.arguments.contains("--starts-only") {
        // `--against <skillhost-worker>`: another build of the C worker, started alternately with this one, start by
        // start, so a busy or noisy machine weighs on both alike.
        let against = CommandLine.arguments.firstIndex(of: "--against").flatMap {
            CommandLine.arguments.indices.contains($0 + 1) ? CommandLine.arguments[$0 + 1] : nil
        }
        let workers: [(label: String, path: String?)] = [("", nil)] + (against.map { [(" [\($0)]", $0)] } ?? [])
        for (label, plugin) in [
            ("C plugin (cc)", try compileFixture()), ("calculator", folder + "/libskill-calculator.so"),
        ] {
            var starts = [[Double]](repeating: [], count: workers.count)
            let spares = WorkerSpares.taken
            for _ in 0..<200 {
                for (index, worker) in workers.enumerated() {
                    let fresh = try processRegistry(worker: worker.path)
                    // A start as it comes (a plugin dropped into the folder, a reload, a restart): to a host that
                    // was waiting, not one that has just spent 2.5 ms of CPU making a registry.
                    usleep(10_000)
                    let start = now()
                    _ = try fresh.load(file: plugin).get()
                    starts[index].append(Double(now() - start))
                    fresh.shutdown()
                }
            }
            for (index, worker) in workers.enumerated() {
                let run = Run(samples: starts[index])
                print(
                    String(
                        format: "worker start, %@%@ (200 loads, 10 ms apart, %d of %d took a spare): median %.2f ms, "
                            + "p10 %.2f ms, p90 %.2f ms", label, worker.label, WorkerSpares.taken - spares,
                        200 * workers.count, run.percentile(0.5) / 1e6, run.percentile(0.1) / 1e6,
                        run.percentile(0.9) / 1e6))
            }
        }
        return
    }
    let registry = try processRegistry()
    _ = try registry.load(file: folder + "/libskill-calculator.so").get()
    let arguments = #"{"expression":"(23+7)*2"}"#
    let first = registry.invokeOnCurrentThread("calculator", arguments: arguments)
    guard first.result == .int(60) else {
        print("isolation: calculator in process mode failed: \(first)")
        return
    }
    let calls = Options(["--calls", String(min(options.calls, 20_000)), "--runs", String(options.runs)])
    let request =
        #"{"jsonrpc":"2.0","id":12345,"method":"invoke","params":{"skill":"calculator","arguments":{"expression":"(23+7)*2"}}}"#

    print("")
    print("Process isolation: calculator \"(23+7)*2\", \(calls.runs) runs × \(calls.calls) calls")
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    print(
        Row(
            name: "raw pipe round trip of a \(request.utf8.count)-byte line (floor)",
            runs: try pipeFloorRuns(calls, line: request)
        ).line)
    print(
        Row(
            name: "the same, both sides polling instead of blocking (floor of a polling reader)",
            runs: try pipeFloorRuns(calls, line: request, polling: true)
        ).line)
    // Confined and unconfined workers measured run by run, alternately, so a busy machine weighs on both alike.
    let unconfined = try processRegistry(confines: false)
    _ = try unconfined.load(file: folder + "/libskill-calculator.so").get()
    var confinedRuns: [Run] = []
    var unconfinedRuns: [Run] = []
    let one = Options(["--calls", String(calls.calls), "--runs", "1"])
    for _ in 0..<calls.runs {
        confinedRuns += measure(one) { _ = registry.invokeOnCurrentThread("calculator", arguments: arguments) }
        unconfinedRuns += measure(one) { _ = unconfined.invokeOnCurrentThread("calculator", arguments: arguments) }
    }
    unconfined.shutdown()
    print(Row(name: "process mode, calling thread waits (invokeOnCurrentThread)", runs: confinedRuns).line)
    if CommandLine.arguments.contains("--process-only") { exit(0) }
    print(Row(name: "the same without confinement (alternate runs)", runs: unconfinedRuns).line)
    print(
        Row(
            name: "in-process, calling thread (invokeOnCurrentThread)",
            runs: measure(calls) { _ = inProcess.invokeOnCurrentThread("calculator", arguments: arguments) }
        ).line)
    for (name, target) in [("process mode", registry), ("in-process", inProcess)] {
        var runs: [Run] = []
        for _ in 0..<calls.runs + 1 {
            var samples = [Double](repeating: 0, count: calls.calls / 4)
            for index in samples.indices {
                let start = now()
                _ = await target.invoke("calculator", arguments: arguments)
                samples[index] = Double(now() - start)
            }
            runs.append(Run(samples: samples))
        }
        print(Row(name: "\(name), `await invoke` (\(calls.calls / 4) calls/run)", runs: Array(runs.dropFirst())).line)
    }
    // Deadline in process mode: a call stuck in the worker (sleeps 1 s, never polls is_cancelled); how late is the
    // timeout delivered (measured where the host delivers it), and how long until the killed worker is replaced.
    _ = try registry.load(file: try compileFixture()).get()
    var lateness: [Double] = []
    var recoveries: [Double] = []
    for _ in 0..<20 {
        let start = now()
        let delivered = DispatchSemaphore(value: 0)
        let at = Atomic<UInt64>(0)
        registry.start(SkillInvocation(skill: "bench_block", timeout: .milliseconds(50))) { outcome in
            if outcome.status != .timeout { print("unexpected: \(outcome)") }
            at.store(now(), ordering: .relaxed)
            delivered.signal()
        }
        delivered.wait()
        lateness.append(Double(at.load(ordering: .relaxed) - start) - 50_000_000)
        usleep(150_000)  // the grace period passes; the worker is killed
        let restart = now()
        let next = registry.invokeOnCurrentThread("bench_add", arguments: #"{"a":1,"b":2}"#)
        recoveries.append(Double(now() - restart))
        if next.status != .ok { print("unexpected: \(next)") }
    }
    registry.shutdown()
    let late = Run(samples: lateness)
    let recovery = Run(samples: recoveries)
    print("")
    print(
        String(
            format:
                "process mode, stuck call with a 50 ms timeout (20 calls): timeout delivered %.2f ms late (median), "
                + "%.2f ms max; the plugin's next call after the kill (worker restart included): median %.1f ms, max %.1f ms",
            late.percentile(0.5) / 1e6, (lateness.max() ?? 0) / 1e6, recovery.percentile(0.5) / 1e6,
            (recoveries.max() ?? 0) / 1e6))

    // Worker start: spawn → the plugin loaded and described (what every process-mode load and every probe costs).
    var starts: [Double] = []
    var probes: [Double] = []
    var plain: [Double] = []
    var confinementLine = ""
    var bareStarts: [Double] = []
    let loads = 40
    for _ in 0..<loads {
        let fresh = try processRegistry()
        var start = now()
        let summary = try fresh.load(file: folder + "/libskill-calculator.so").get()
        starts.append(Double(now() - start))
        fresh.shutdown()

        let bare = try processRegistry(confines: false)
        start = now()
        _ = try bare.load(file: folder + "/libskill-calculator.so").get()
        bareStarts.append(Double(now() - start))
        bare.shutdown()
        if starts.count == 1 { confinementLine = summary.placementText }
        if starts.count == 1, let report = summary.confinement {
            confinementLine += " (kernel \(report.kernel), Landlock ABI \(report.landlockABI))"
        }

        var configuration = SkillRegistry.Configuration(
            dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data"))
        configuration.isolation = benchIsolation(skillhost, .inProcess)
        let probed = try SkillRegistry(configuration: configuration)
        start = now()
        _ = try probed.load(file: folder + "/libskill-text.so").get()
        probes.append(Double(now() - start))
        probed.shutdown()

        let direct = try SkillRegistry(configuration: .init(dataDirectory: configuration.dataDirectory))
        start = now()
        _ = try direct.load(file: folder + "/libskill-text.so").get()
        plain.append(Double(now() - start))
        direct.shutdown()
    }
    func line(_ name: String, _ values: [Double]) -> String {
        let run = Run(samples: values)
        return String(
            format: "%@ (\(loads) loads): median %.1f ms, p10 %.1f ms, p90 %.1f ms", name, run.percentile(0.5) / 1e6,
            run.percentile(0.1) / 1e6, run.percentile(0.9) / 1e6)
    }
    print("")
    print("worker: \(confinementLine)")
    print(line("worker start, spawn → plugin loaded and described", starts))
    print(line("the same without confinement (interleaved)", bareStarts))
    print(line("in-process load with a probe in a child first", probes))
    print(line("in-process load without a probe", plain))
    try await reloadBenchmarks(isolation: benchIsolation(skillhost, .process))
}
