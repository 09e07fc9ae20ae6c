import CFFI
import Dispatch
import Foundation
import SkillHost
import SkillJSON

// skillhost-bench — per-call latency of skills through the registry, with the raw libffi call as the floor, and
// how precisely a stuck call's caller resumes at its deadline.
//
//   swift build -c release && .build/release/skillhost-bench [--calls N] [--runs R]
//   [--sync-only | --reload-only | --agent-only | --isolation-only | --starts-only | --worker-memory | --snapshots-only
//    | --composite-only | --native-worker
//    | --hooks-only
//    | --record-only | --skill-folders-only
//    | --mcp-compare <mcp-server-time>
//    | --http-compare [--fastmcp <python with fastmcp>]]
//   [--swift-worker]   process mode in `skillhost worker` (the Swift worker) instead of `skillhost-worker`
//   [--against <skillhost-worker>]   with --starts-only: another build of the C worker, alternately
//
// Each figure is measured in R runs of N calls; a run reports its median, p10 and p90 per call, and the table
// shows the median of those across runs plus the range of the run medians (the spread).

let benchSource = """
    #include "skill_sdk.h"
    #include <time.h>
    SKILL_EXPORT double bench_add(double a, double b) { return a + b; }
    static int block(void *s, const skill_call_api *api, skill_call *call, const char *args) {
        struct timespec t = { 1, 0 };
        (void)s; (void)args;
        nanosleep(&t, NULL);
        api->set_result(call, "0", 1);
        return SKILL_OK;
    }
    static const skill_descriptor skills[] = {
        SKILL_TYPED("bench_add", "Add", "Adds two numbers.", "double bench_add(double a, double b)", bench_add),
        SKILL_JSON("bench_block", "Block", "Blocks for a second.", "{\\"type\\":\\"object\\"}", 0, 0, block),
    };
    SKILL_PLUGIN("bench", "1.0.0", "benchmark fixture", skills)
    """

let reloadSource = """
    #include "skill_sdk.h"
    static int reload_version(void) { return VERSION; }
    static const skill_descriptor skills[] = {
        SKILL_TYPED("reload_version", "Version", "The build's version.", "int32 reload_version()", reload_version),
    };
    SKILL_PLUGIN("reload", "1.0.0", "reload benchmark fixture", skills)
    """

struct Options {
    var calls = 100_000
    var runs = 5
    /// Skip the asynchronous and deadline measurements (for profiling the call path).
    var syncOnly = false
    /// Only the hot reload measurements.
    var reloadOnly = false
    /// Only the agent measurements.
    var agentOnly = false
    /// Only the process isolation measurements.
    var isolationOnly = false
    /// Only the `await invoke` and deadline-overshoot measurements.
    var awaitOnly = false

    init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let value = index + 1 < arguments.count ? Int(arguments[index + 1]) : nil
            switch arguments[index] {
            case "--calls": calls = value ?? calls
            case "--runs": runs = value ?? runs
            case "--sync-only":
                syncOnly = true
                index -= 1
            case "--reload-only":
                reloadOnly = true
                index -= 1
            case "--agent-only":
                agentOnly = true
                index -= 1
            case "--isolation-only":
                isolationOnly = true
                index -= 1
            case "--await-only":
                awaitOnly = true
                index -= 1
            case "--process-only", "--starts-only":
                isolationOnly = true
                index -= 1
            case "--http-compare", "--worker-memory", "--native-worker", "--snapshots-only", "--composite-only",
                "--swift-worker",
                "--typed-only",
                "--hooks-only",
                "--record-only", "--skill-folders-only":
                index -= 1
            default: break
            }
            index += 2
        }
    }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Per-call nanoseconds of one run.
struct Run {
    let samples: [Double]
    func percentile(_ p: Double) -> Double {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }
}

struct Row {
    let name: String
    let runs: [Run]

    var line: String {
        let medians = runs.map { $0.percentile(0.5) }
        let p10 = runs.map { $0.percentile(0.1) }
        let p90 = runs.map { $0.percentile(0.9) }
        func mid(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func format(_ ns: Double) -> String {
            ns >= 10_000 ? String(format: "%.1f µs", ns / 1000) : String(format: "%.2f µs", ns / 1000)
        }
        let spread = "\(format(medians.min() ?? 0)) – \(format(medians.max() ?? 0))"
        return "| \(name) | \(format(mid(medians))) | \(format(mid(p10))) | \(format(mid(p90))) | \(spread) |"
    }
}

func measure(_ options: Options, _ body: () -> Void) -> [Run] {
    for _ in 0..<min(10_000, options.calls) { body() }  // warm up
    return (0..<options.runs).map { _ in
        var samples = [Double](repeating: 0, count: options.calls)
        for index in 0..<options.calls {
            let start = now()
            body()
            samples[index] = Double(now() - start)
        }
        return Run(samples: samples)
    }
}

let workFolder = NSTemporaryDirectory() + "skillhost-bench-\(getpid())"

/// Compiles `source` into `<workFolder>/<name>.so` with cc -O2 and the SDK headers.
func compile(_ source: String, name: String, defines: [String] = []) throws -> String {
    try FileManager.default.createDirectory(atPath: workFolder, withIntermediateDirectories: true)
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    try source.write(toFile: workFolder + "/\(name).c", atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
    process.arguments =
        ["-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-I", root.path + "/SkillSDK/include"]
        + defines.map {
            "-D" + $0
        } + [workFolder + "/\(name).c", "-o", workFolder + "/\(name).so"]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    return workFolder + "/\(name).so"
}

func compileFixture() throws -> String { try compile(benchSource, name: "bench") }

func bundledPluginFolder() -> String {
    let executable =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    return (executable as NSString).deletingLastPathComponent
}

/// The floor: calling bench_add through a prepared cif, with no JSON at all.
func rawFFIRuns(_ options: Options, fixture: String) -> [Run] {
    guard let handle = dlopen(fixture, RTLD_NOW | RTLD_LOCAL), let symbol = dlsym(handle, "bench_add") else {
        fatalError("cannot open the bench fixture")
    }
    let function = unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)
    let cif = UnsafeMutablePointer<ffi_cif>.allocate(capacity: 1)
    let types = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: 2)
    types[0] = skillhost_ffi_type_double()
    types[1] = skillhost_ffi_type_double()
    guard ffi_prep_cif(cif, skillhost_ffi_default_abi(), 2, skillhost_ffi_type_double(), types) == FFI_OK else {
        fatalError("ffi_prep_cif failed")
    }
    var a = 1.5
    var b = 2.25
    var result = 0.0
    var sink = 0.0
    let runs = withUnsafeMutablePointer(to: &a) { pa in
        withUnsafeMutablePointer(to: &b) { pb in
            withUnsafeMutablePointer(to: &result) { pr in
                let values = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 2)
                values[0] = UnsafeMutableRawPointer(pa)
                values[1] = UnsafeMutableRawPointer(pb)
                return measure(options) {
                    ffi_call(cif, function, pr, values)
                    sink += pr.pointee
                }
            }
        }
    }
    if sink == 42 { print("") }
    return runs
}

/// Hot reload: latency from rename() to the first call answered by the new version, and call throughput on the
/// reloading skill during a reload storm compared with no reloads.
/// - Parameter isolation: when given, the plugin loads through a worker (process mode: probe and worker start
///   are part of every reload), and only the latency is measured.
func reloadBenchmarks(isolation: IsolationSettings? = nil) async throws {
    let versions = try (1...2).map { try compile(reloadSource, name: "reload-v\($0)", defines: ["VERSION=\($0)"]) }
    let folder = workFolder + (isolation == nil ? "/plugins" : "/plugins-isolated")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var configuration = SkillRegistry.Configuration(
        dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data"))
    configuration.drainTimeout = .seconds(1)
    configuration.isolation = isolation
    let registry = try SkillRegistry(configuration: configuration)
    let watch = registry.watch([(path: folder, include: { @Sendable _ in true })])
    defer { watch.stop() }

    /// Installs version `v` the safe way (copy beside, rename in); returns the rename instant.
    func install(_ v: Int) throws -> UInt64 {
        let staged = folder + "/.reload.so.partial"
        try? FileManager.default.removeItem(atPath: staged)
        try FileManager.default.copyItem(atPath: versions[v - 1], toPath: staged)
        let start = now()
        guard rename(staged, folder + "/reload.so") == 0 else { throw CocoaError(.fileWriteUnknown) }
        return start
    }
    func waitFor(_ v: Int) -> UInt64 {
        while registry.invokeOnCurrentThread("reload_version", arguments: "{}").result != .int(Int64(v)) {
            usleep(200)
        }
        return now()
    }

    _ = try install(1)
    _ = waitFor(1)
    var latencies: [Double] = []
    for index in 0..<40 {
        let v = index % 2 == 0 ? 2 : 1
        let start = try install(v)
        latencies.append(Double(waitFor(v) - start))
        usleep(60_000)  // past the 30 ms burst window: each rename is a file's first event, as when a person installs
    }
    let run = Run(samples: latencies)
    print("")
    print(
        String(
            format: "reload latency%@, rename() → first call answered by the new version (40 reloads): "
                + "median %.1f ms, p10 %.1f ms, p90 %.1f ms, max %.1f ms",
            isolation == nil ? "" : " in process mode", run.percentile(0.5) / 1e6,
            run.percentile(0.1) / 1e6, run.percentile(0.9) / 1e6, (latencies.max() ?? 0) / 1e6))
    if isolation != nil {
        registry.shutdown()
        return
    }

    // Throughput: 4 tasks call the skill for 2 s, without and then with a reload every 100 ms.
    func throughput(storm: Bool) async throws -> (perSecond: Double, failures: Int, reloads: Int) {
        let seconds = 2.0
        let end = now() + UInt64(seconds * 1e9)
        var reloads = 0
        async let counts: [(Int, Int)] = withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var ok = 0
                    var failed = 0
                    while now() < end {
                        let outcome = await registry.invoke("reload_version", arguments: "{}")
                        if outcome.status == .ok { ok += 1 } else { failed += 1 }
                    }
                    return (ok, failed)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        if storm {
            var v = 1
            while now() < end {
                v = v == 1 ? 2 : 1
                _ = try install(v)
                reloads += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let totals = await counts
        return (Double(totals.map(\.0).reduce(0, +)) / seconds, totals.map(\.1).reduce(0, +), reloads)
    }
    var quiet: [Double] = []
    var stormy: [Double] = []
    var failures = 0
    var reloads = 0
    for _ in 0..<3 {
        quiet.append(try await throughput(storm: false).perSecond)
        let result = try await throughput(storm: true)
        stormy.append(result.perSecond)
        failures += result.failures
        reloads += result.reloads
    }
    let quietMedian = quiet.sorted()[1]
    let stormMedian = stormy.sorted()[1]
    print(
        String(
            format: "calls/s on the reloading skill (4 callers, 3 × 2 s each): no reloads %.0f (range %.0f–%.0f), "
                + "reload every 100 ms %.0f (range %.0f–%.0f) = %.0f %%; %d reloads, %d failed calls",
            quietMedian, quiet.min() ?? 0, quiet.max() ?? 0, stormMedian, stormy.min() ?? 0, stormy.max() ?? 0,
            100 * stormMedian / quietMedian, reloads, failures))
}

/// `await invoke` of bench_add from a task off the main actor (as the agent and the MCP server call), one run more
/// than asked (the first warms up).
nonisolated func awaitRuns(_ options: Options, registry: SkillRegistry) async -> [Run] {
    var runs: [Run] = []
    var resultBytes = 0
    for _ in 0..<options.runs + 1 {
        var samples = [Double](repeating: 0, count: options.calls)
        for index in 0..<options.calls {
            let start = now()
            let outcome = await registry.invoke("bench_add", arguments: #"{"a":1.5,"b":2.25}"#)
            resultBytes &+= (outcome.result ?? .null).jsonText.utf8.count
            samples[index] = Double(now() - start)
        }
        runs.append(Run(samples: samples))
    }
    if resultBytes == 0 { print("") }
    return runs
}

@MainActor
func main() async throws {
    if CommandLine.arguments.dropFirst().first == "--pipe-echo" { pipeEcho(polling: false) }
    if CommandLine.arguments.dropFirst().first == "--pipe-echo-polling" { pipeEcho(polling: true) }
    let options = Options(Array(CommandLine.arguments.dropFirst()))
    if let index = CommandLine.arguments.firstIndex(of: "--mcp-compare"), index + 1 < CommandLine.arguments.count {
        try mcpCompare(options, serverTime: CommandLine.arguments[index + 1])
        exit(0)
    }
    if CommandLine.arguments.contains("--hooks-only") {
        try await hookBenchmarks(options)
        exit(0)
    }
    if CommandLine.arguments.contains("--snapshots-only") {
        try await snapshotBenchmarks(options)
        exit(0)
    }
    if CommandLine.arguments.contains("--native-worker") {
        try nativeWorkerBenchmarks(options)
        exit(0)
    }
    if CommandLine.arguments.contains("--worker-memory") {
        try workerMemoryBenchmarks(options)
        exit(0)
    }
    if CommandLine.arguments.contains("--http-compare") {
        let index = CommandLine.arguments.firstIndex(of: "--fastmcp")
        let python = index.flatMap { $0 + 1 < CommandLine.arguments.count ? CommandLine.arguments[$0 + 1] : nil }
        if let python, access(python, X_OK) != 0 {
            FileHandle.standardError.write(
                Data(
                    ("skillhost-bench: --fastmcp \(python) is not a program that can run; make one with "
                        + "`python3 -m venv .build/bench-venv && .build/bench-venv/bin/pip install fastmcp==4.2.3`\n")
                        .utf8))
            exit(2)
        }
        try httpCompare(options, fastMCPPython: python)
        exit(0)
    }
    if options.reloadOnly {
        try await reloadBenchmarks()
        exit(0)
    }
    let fixture = try compileFixture()
    var configuration = SkillRegistry.Configuration(
        dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data"))
    configuration.unhealthyAfterStuckCalls = 1000
    let registry = try SkillRegistry(configuration: configuration)
    _ = try registry.load(file: fixture).get()
    _ = try registry.load(file: bundledPluginFolder() + "/libskill-calculator.so").get()
    if CommandLine.arguments.contains("--composite-only") {
        try await compositeBenchmarks(options, registry: registry)
        exit(0)
    }
    if CommandLine.arguments.contains("--skill-folders-only") {
        try await skillFolderBenchmarks(options)
        exit(0)
    }
    if CommandLine.arguments.contains("--record-only") {
        try await recordBenchmarks(options, registry: registry)
        exit(0)
    }
    if options.isolationOnly {
        try await isolationBenchmarks(options, inProcess: registry)
        exit(0)
    }
    if options.agentOnly {
        registry.loadFolder(bundledPluginFolder()) { $0.hasPrefix("libskill-") }
        await agentBenchmarks(registry: registry)
        exit(0)
    }

    print(
        "skillhost-bench: \(options.runs) runs × \(options.calls) calls each; per call: median, p10, p90 (medians across runs); spread = range of run medians"
    )
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")

    var resultBytes = 0
    func call(_ id: String, _ arguments: String) {
        let outcome = registry.invokeOnCurrentThread(id, arguments: arguments)
        resultBytes &+= (outcome.result ?? .null).jsonText.utf8.count  // JSON out
    }
    if !options.awaitOnly {
        print(
            Row(name: "raw ffi_call of double f(double, double) (floor)", runs: rawFFIRuns(options, fixture: fixture))
                .line)
        print(
            Row(
                name: "typed skill bench_add via registry, JSON in → JSON out",
                runs: measure(options) {
                    call("bench_add", #"{"a":1.5,"b":2.25}"#)
                }
            ).line)
        // For profiling the typed path alone (perf record … --typed-only).
        if CommandLine.arguments.contains("--typed-only") { exit(resultBytes == 0 ? 1 : 0) }
        print(
            Row(
                name: "calculator \"(23+7)*2\" via registry, JSON in → JSON out",
                runs: measure(options) {
                    call("calculator", #"{"expression":"(23+7)*2"}"#)
                }
            ).line)
    }

    if options.syncOnly { exit(resultBytes == 0 ? 1 : 0) }

    // The full asynchronous path: the caller's task hands the call to a pool thread and is resumed by it.
    let asyncOptions = Options(["--calls", String(min(options.calls, 20_000)), "--runs", String(options.runs)])
    let asyncRuns = await awaitRuns(asyncOptions, registry: registry)
    print(
        Row(
            name: "typed skill bench_add via `await invoke` (pool thread hand-off, \(asyncOptions.calls) calls/run)",
            runs: Array(asyncRuns.dropFirst())
        ).line)

    // Deadline precision: a call that never returns in time; how late does its caller resume?
    var lateness: [Double] = []
    for _ in 0..<30 {
        let start = now()
        let outcome = await registry.invoke("bench_block", arguments: "{}", timeout: .milliseconds(50))
        precondition(outcome.status == .timeout, "bench_block must time out")
        lateness.append(Double(now() - start) - 50_000_000)
    }
    let late = Run(samples: lateness)
    print("")
    print(
        String(
            format:
                "deadline overshoot of a stuck call (50 ms timeout, 30 calls): median %.2f ms, p90 %.2f ms, max %.2f ms",
            late.percentile(0.5) / 1e6, late.percentile(0.9) / 1e6, (lateness.max() ?? 0) / 1e6))
    if options.awaitOnly { exit(0) }
    if resultBytes == 0 { print("") }
    registry.loadFolder(bundledPluginFolder()) { $0.hasPrefix("libskill-") }
    await agentBenchmarks(registry: registry)
    try await reloadBenchmarks()
    try await isolationBenchmarks(options, inProcess: registry)
    exit(0)  // the stuck bench_block calls are abandoned, not awaited
}

try await main()
