import CFFI
import Dispatch
import Foundation
import SkillHost
import SkillJSON

// skillhost-bench — per-call latency of skills through the registry, with the raw libffi call as the floor, and
// how precisely a stuck call's caller resumes at its deadline.
//
//   swift build -c release && .build/release/skillhost-bench [--calls N] [--runs R]
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

struct Options {
    var calls = 100_000
    var runs = 5
    /// Skip the asynchronous and deadline measurements (for profiling the call path).
    var syncOnly = false

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

func compileFixture() throws -> String {
    let folder = NSTemporaryDirectory() + "skillhost-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    try benchSource.write(toFile: folder + "/bench.c", atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
    process.arguments = [
        "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-I", root.path + "/SkillSDK/include", folder + "/bench.c",
        "-o", folder + "/bench.so",
    ]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
    return folder + "/bench.so"
}

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

@MainActor
func main() async throws {
    let options = Options(Array(CommandLine.arguments.dropFirst()))
    let fixture = try compileFixture()
    var configuration = SkillRegistry.Configuration(
        dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data"))
    configuration.unhealthyAfterStuckCalls = 1000
    let registry = try SkillRegistry(configuration: configuration)
    _ = try registry.load(file: fixture).get()
    _ = try registry.load(file: bundledPluginFolder() + "/libskill-calculator.so").get()

    print(
        "skillhost-bench: \(options.runs) runs × \(options.calls) calls each; per call: median, p10, p90 (medians across runs); spread = range of run medians"
    )
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")

    print(
        Row(name: "raw ffi_call of double f(double, double) (floor)", runs: rawFFIRuns(options, fixture: fixture)).line)

    var resultBytes = 0
    func call(_ id: String, _ arguments: String) {
        let outcome = registry.invokeOnCurrentThread(id, arguments: arguments)
        resultBytes &+= (outcome.result ?? .null).jsonText.utf8.count  // JSON out
    }
    print(
        Row(
            name: "typed skill bench_add via registry, JSON in → JSON out",
            runs: measure(options) {
                call("bench_add", #"{"a":1.5,"b":2.25}"#)
            }
        ).line)
    print(
        Row(
            name: "calculator \"(23+7)*2\" via registry, JSON in → JSON out",
            runs: measure(options) {
                call("calculator", #"{"expression":"(23+7)*2"}"#)
            }
        ).line)

    if options.syncOnly { exit(resultBytes == 0 ? 1 : 0) }

    // The full asynchronous path: the caller's task hands the call to a pool thread and is resumed by it.
    let asyncOptions = Options(["--calls", String(min(options.calls, 20_000)), "--runs", String(options.runs)])
    var asyncRuns: [Run] = []
    for _ in 0..<asyncOptions.runs + 1 {
        var samples = [Double](repeating: 0, count: asyncOptions.calls)
        for index in 0..<asyncOptions.calls {
            let start = now()
            let outcome = await registry.invoke("bench_add", arguments: #"{"a":1.5,"b":2.25}"#)
            resultBytes &+= (outcome.result ?? .null).jsonText.utf8.count
            samples[index] = Double(now() - start)
        }
        asyncRuns.append(Run(samples: samples))
    }
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
    if resultBytes == 0 { print("") }
    exit(0)  // the stuck bench_block calls are abandoned, not awaited
}

try await main()
