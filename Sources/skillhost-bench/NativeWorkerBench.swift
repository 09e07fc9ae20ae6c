import CProcess
import Foundation

// The worker without the Swift runtime (`skillhost-worker`), measured on its own: from `posix_spawn` in this
// (multi-threaded) process to the answer of `init` — the worker opened the plugin, described it and ran its init,
// so it could take a call — and the memory of 20 such workers once each answered a call. Unconfined, and without the
// host's copy, validation and data folder: what the worker itself costs, for the plugin the bench compiles with cc
// (C) and for the bundled calculator (which SwiftPM links to the Swift runtime).

/// One started worker: its pid and the host's ends of its channels.
private struct NativeWorker {
    let pid: pid_t
    let input: Int32
    let output: Int32
    let others: [Int32]

    /// Spawns `skillhost-worker` for `plugin` and waits until it answered `describe` and `init`; nil when it did not.
    static func start(_ executable: String, plugin: String, data: String) -> NativeWorker? {
        let arguments = [
            executable, "--file", plugin, "--copy", plugin, "--data-dir", data, "--max-result-bytes", "16777216",
        ]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        var ends = [Int32](repeating: -1, count: 7)
        let spawned = ends.withUnsafeMutableBufferPointer { e in
            skillhost_spawn_worker(
                executable, &argv, nil, &pid, &e[0], &e[1], &e[2], &e[3], &e[4], &e[5], &e[6])
        }
        guard spawned == 0 else { return nil }
        let worker = NativeWorker(pid: pid, input: ends[0], output: ends[1], others: Array(ends[2...]))
        let requests =
            #"{"jsonrpc":"2.0","id":1,"method":"describe"}"# + "\n"
            + #"{"jsonrpc":"2.0","id":2,"method":"init","params":{"data_dir":"\#(data)/plugin"}}"# + "\n"
        _ = Array(requests.utf8).withUnsafeBytes { skillhost_write_nosigpipe(worker.input, $0.baseAddress, $0.count) }
        guard worker.readUntil(#""id":2,"#) else {
            worker.stop()
            return nil
        }
        return worker
    }

    /// Reads the worker's output until a line containing `marker` arrived; false at its end.
    func readUntil(_ marker: String) -> Bool {
        var seen: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
            if count <= 0 { return false }
            seen += chunk[..<count]
            if String(decoding: seen, as: UTF8.self).contains(marker) { return true }
        }
    }

    /// Closes its input (it exits) and reaps it.
    func stop() {
        close(input)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(output)
        for end in others where end >= 0 { close(end) }
    }
}

func nativeWorkerBenchmarks(_ options: Options) throws {
    let folder = bundledPluginFolder()
    let executable = folder + "/skillhost-worker"
    let data = NSTemporaryDirectory() + "skillhost-bench-native-\(getpid())"
    try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
    let plugins = [("C plugin (cc)", try compileFixture()), ("calculator", folder + "/libskill-calculator.so")]
    let startsPerRun = 40
    print("skillhost-worker: \(options.runs) runs × \(startsPerRun) starts (spawn → describe and init answered)")
    print("")
    print("| plugin | start median | p10 | p90 | spread of medians | `ps` resident (20 workers, median) | private |")
    print("|---|---|---|---|---|---|---|")
    for (name, plugin) in plugins {
        var runs: [Run] = []
        for _ in 0..<options.runs {
            var samples: [Double] = []
            for _ in 0..<startsPerRun {
                let start = now()
                guard let worker = NativeWorker.start(executable, plugin: plugin, data: data) else {
                    print("skillhost-worker did not start for \(plugin)")
                    return
                }
                samples.append(Double(now() - start))
                worker.stop()
            }
            runs.append(Run(samples: samples))
        }
        let workers = (0..<20).compactMap { _ in NativeWorker.start(executable, plugin: plugin, data: data) }
        let call =
            #"{"jsonrpc":"2.0","id":3,"method":"invoke","params":{"skill":"calculator","arguments":{"expression":"1+1"}}}"#
        for worker in workers where plugin.hasSuffix("calculator.so") {
            _ = Array((call + "\n").utf8).withUnsafeBytes {
                skillhost_write_nosigpipe(worker.input, $0.baseAddress, $0.count)
            }
            _ = worker.readUntil(#""id":3,"#)
        }
        let memory = workers.compactMap { ProcessMemory(pid: $0.pid) }
        workers.forEach { $0.stop() }
        func median(_ values: [Int]) -> Double { Double(values.sorted()[values.count / 2]) / 1024 }
        let medians = runs.map { $0.percentile(0.5) / 1e6 }
        func mid(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        print(
            String(
                format: "| %@ | %.2f ms | %.2f ms | %.2f ms | %.2f – %.2f ms | %.1f MB | %.1f MB |", name,
                mid(medians), mid(runs.map { $0.percentile(0.1) / 1e6 }), mid(runs.map { $0.percentile(0.9) / 1e6 }),
                medians.min() ?? 0, medians.max() ?? 0, median(memory.map(\.resident)),
                median(memory.map(\.privatePages))))
    }
}
