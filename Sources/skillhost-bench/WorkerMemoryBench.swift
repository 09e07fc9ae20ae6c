import Foundation
import SkillHost

// What a confined worker costs the machine in memory: 20 workers (the calculator, one per registry, forked from the
// template after the first) are started, and the machine's free memory is read before and after (it includes the page
// cache of each worker's private copy of the plugin), next to each
// worker's own figures — `ps`'s resident set (which counts every page of the shared libraries a worker touched,
// though they are in memory once for all processes), its proportional share (PSS: each page divided among the
// processes that map it), its private pages and its page tables.

/// One process's memory figures in KiB, from /proc.
struct ProcessMemory {
    var resident = 0
    var proportional = 0
    var privatePages = 0
    var pageTables = 0

    init?(pid: Int32) {
        guard let rollup = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8),
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        else { return nil }
        let rollupValues = Self.fields(rollup)
        resident = rollupValues["Rss"] ?? 0
        proportional = rollupValues["Pss"] ?? 0
        privatePages = (rollupValues["Private_Clean"] ?? 0) + (rollupValues["Private_Dirty"] ?? 0)
        pageTables = Self.fields(status)["VmPTE"] ?? 0
    }

    /// "Name:   123 kB" lines (spaces or tabs) as name → number.
    static func fields(_ text: String) -> [String: Int] {
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(omittingEmptySubsequences: true) { $0 == " " || $0 == "\t" }
            guard parts.count >= 2, parts[0].hasSuffix(":"), let value = Int(parts[1]) else { continue }
            values[String(parts[0].dropLast())] = value
        }
        return values
    }
}

/// The worker processes this process started (its children running `skillhost worker`, not the template).
func ownWorkers() -> [Int32] {
    let me = getpid()
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry -> Int32? in
        guard let pid = Int32(entry),
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            ProcessMemory.fields(status)["PPid"] == Int(me),
            let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
            command.contains("worker"), !command.contains("--template")
        else { return nil }
        return pid
    }
}

func workerMemoryBenchmarks(_ options: Options) throws {
    let folder = bundledPluginFolder()
    let skillhost = folder + "/skillhost"
    let count = 20
    print(
        "Confined workers, \(count) at once (one per registry) of a plugin built with cc and of the calculator "
            + "(built by SwiftPM, which links the Swift runtime into it), \(options.runs) runs")
    print("")
    print("| run | plugin | `ps` resident | proportional (PSS) | private | page tables |")
    print("|---|---|---|---|---|---|")
    let plugins = [
        ("C plugin (cc)", try compileFixture(), "bench_add", #"{"a":1,"b":2}"#),
        ("calculator", folder + "/libskill-calculator.so", "calculator", #"{"expression":"1+1"}"#),
    ]
    for run in 1...options.runs {
        for (label, file, skill, arguments) in plugins {
            try measureWorkers(run: run, label: label, file: file, skill: skill, arguments: arguments)
        }
    }
    print("")
    print("each column: the median over the \(count) workers of that run")

    func measureWorkers(run: Int, label: String, file: String, skill: String, arguments: String) throws {
        func registry() throws -> SkillRegistry {
            var configuration = SkillRegistry.Configuration(
                dataDirectory: URL(fileURLWithPath: NSTemporaryDirectory() + "skillhost-bench-data"))
            configuration.isolation = benchIsolation(skillhost, .process)
            let registry = try SkillRegistry(configuration: configuration)
            _ = try registry.load(file: file).get()
            return registry
        }
        let registries = try (0..<count).map { _ in try registry() }
        // Each answers a call, so its memory is that of a worker in use.
        for registry in registries { _ = registry.invokeOnCurrentThread(skill, arguments: arguments) }
        let figures = ownWorkers().compactMap(ProcessMemory.init(pid:))
        func median(_ values: [Int]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : Double(sorted[sorted.count / 2]) / 1024
        }
        print(
            String(
                format: "| %d | %@ | %.1f MB | %.1f MB | %.1f MB | %.2f MB |", run, label,
                median(figures.map(\.resident)), median(figures.map(\.proportional)),
                median(figures.map(\.privatePages)), median(figures.map(\.pageTables))))
        for registry in registries { registry.shutdown() }
    }
}
