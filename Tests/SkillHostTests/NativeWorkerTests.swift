import CProcess
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillJSON

/// The worker without the Swift runtime (`skillhost-worker`), driven as its host drives a worker: spawned with the
/// channels `skillhost_spawn_worker` gives it, one JSON-RPC line each way, calls on the shared-memory lane. It
/// reports the plugin's records and what each call did as they are; the host judges them.
@Suite(.serialized)
struct NativeWorkerTests {
    /// One running `skillhost-worker` and the host's ends of its channels.
    final class Worker {
        let pid: pid_t
        private let input: Int32
        private let output: Int32
        private let errors: Int32
        private let laneOutput: Int32
        /// How long a test waits for a line or for the worker's end, in milliseconds: a hang fails, never blocks.
        static let cap: Int32 = 60_000
        /// The lane's shared memory, as the host maps it.
        let lane: UnsafeMutableRawPointer
        /// Bytes read from the output and not yet split into lines.
        private let pending = Mutex<[UInt8]>([])

        /// The first line a spare is sent: its arguments, `launchSuffix` after them.
        private let launchLine: String

        /// `spare`: started as `skillhost-worker --spare` (and `spareArguments`), given its arguments (and
        /// `launchSuffix` after them) as the first line of its input, in the same write as `firstRequest` when there
        /// is one (`launches`: false, nothing is sent until `launch()`).
        init(
            plugin: String, resultLimit: Int = 1 << 20, spare: Bool = false, spareArguments: [String] = [],
            launchSuffix: String = "", firstRequest: String? = nil, launches: Bool = true
        ) throws {
            let data = Paths.temporaryDirectory("native-data")
            let launch = [
                "--file", "/plugins/" + (plugin as NSString).lastPathComponent, "--copy", plugin, "--data-dir", data,
                "--max-result-bytes", String(resultLimit),
            ]
            let arguments = [Paths.products + "/skillhost-worker"] + (spare ? ["--spare"] + spareArguments : launch)
            launchLine = JSONValue.array(launch.map { .string($0) }).jsonText.dropLast() + launchSuffix + "]\n"
            var pid: pid_t = 0
            var (input, output, errors, laneInput, laneOutput, supervision, memory):
                (
                    Int32, Int32, Int32, Int32, Int32, Int32, Int32
                ) = (-1, -1, -1, -1, -1, -1, -1)
            var argv = arguments.map { strdup($0) } + [nil]
            defer { argv.forEach { free($0) } }
            let result = skillhost_spawn_worker(
                arguments[0], &argv, nil, &pid, &input, &output, &errors, &laneInput, &laneOutput, &supervision,
                &memory)
            guard result == 0, let mapped = skillhost_lane_map(memory) else {
                throw FixtureError.compileFailed("cannot spawn skillhost-worker: \(result)")
            }
            close(memory)
            // Its metadata supervision, as the host runs it (a thread here that answers what `confine` hands over).
            _ = skillhost_metadata_supervise(supervision)
            close(laneInput)
            self.pid = pid
            self.input = input
            self.output = output
            self.errors = errors
            self.laneOutput = laneOutput
            lane = mapped
            if spare, launches { send(launchLine + (firstRequest ?? ""), newline: false) }
        }

        /// Sends a spare started with `launches: false` its launch.
        func launch() { send(launchLine, newline: false) }

        func send(_ line: String, newline: Bool = true) {
            let bytes = Array((line + (newline ? "\n" : "")).utf8)
            _ = bytes.withUnsafeBytes { skillhost_write_nosigpipe(input, $0.baseAddress, $0.count) }
        }

        /// The next line the worker wrote on its main channel; nil at its end.
        func line() -> String? {
            pending.withLock { buffer in
                while true {
                    if let newline = buffer.firstIndex(of: 10) {
                        let line = String(decoding: buffer[..<newline], as: UTF8.self)
                        buffer.removeSubrange(...newline)
                        return line
                    }
                    // A worker that hangs fails the test instead of blocking it: a generous cap per line.
                    var ready = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                    guard poll(&ready, 1, Self.cap) > 0 else {
                        Issue.record("worker \(pid) wrote no line within \(Self.cap / 1000) s")
                        return nil
                    }
                    var chunk = [UInt8](repeating: 0, count: 65536)
                    let count = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                    if count <= 0 { return nil }
                    buffer += chunk[..<count]
                }
            }
        }

        /// Sends request `id` and collects the lines up to its answer (notifications first, the answer last).
        func request(_ id: Int, _ method: String, _ params: String = "{}") -> [JSONValue] {
            send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":\#(params)}"#)
            var lines: [JSONValue] = []
            while let line = line(), let value = try? JSONValue(parsing: line) {
                lines.append(value)
                if value["id"] == .int(Int64(id)) { break }
            }
            return lines
        }

        /// Posts `message` on the lane and waits for the lane's answers up to one that is not a notification.
        func laneCall(_ message: String) -> [String] {
            let bytes = Array(message.utf8)
            bytes.withUnsafeBufferPointer { skillhost_lane_post_request(lane, $0.baseAddress, $0.count) }
            var answers: [String] = []
            var buffer = [UInt8](repeating: 0, count: Int(SKILLHOST_LANE_CAPACITY))
            while true {
                let count = buffer.withUnsafeMutableBufferPointer {
                    skillhost_lane_next_response(lane, $0.baseAddress, $0.count, 50_000)
                }
                guard count >= 0 else { return answers + ["lane: \(count)"] }
                let text = String(decoding: buffer[..<count], as: UTF8.self)
                answers.append(text)
                if !text.contains(#""method":"#) { return answers }
            }
        }

        /// Closes the protocol input and waits for the exit: the status and what the worker wrote to standard error.
        func finish() -> (status: Int32, errors: String) {
            close(input)
            var status: Int32 = 0
            // It ends once its input closed; one that does not within the cap is killed (and the test fails).
            let deadline = ContinuousClock.now + .milliseconds(Int(Self.cap))
            while waitpid(pid, &status, WNOHANG) == 0 {
                if ContinuousClock.now > deadline {
                    Issue.record("worker \(pid) did not end within \(Self.cap / 1000) s of its input closing")
                    kill(pid, SIGKILL)
                    waitpid(pid, &status, 0)
                    break
                }
                usleep(2_000)
            }
            var text: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
                if count <= 0 { break }
                text += chunk[..<count]
            }
            close(output)
            close(errors)
            close(laneOutput)
            return ((status >> 8) & 0xFF, String(decoding: text, as: UTF8.self))
        }
    }

    /// A worker of `plugin` that described it and ran its init (requests 1 and 2).
    static func initialisedWorker(_ plugin: String) throws -> Worker {
        let worker = try Worker(plugin: plugin)
        _ = worker.request(1, "describe")
        _ = worker.request(2, "init", initParams)
        return worker
    }

    static let initParams = #"{"data_dir":"\#(Paths.temporaryDirectory("native-plugin"))/behaviours"}"#

    /// The worker is linked without the Swift runtime, which it never calls (Scripts/link-without-swift-runtime):
    /// the dynamic loader maps only the C libraries it uses.
    @Test func theWorkerLoadsNoSwiftRuntime() async throws {
        let linked = try await runProcessOffPool("/usr/bin/ldd", [Paths.products + "/skillhost-worker"])
        #expect(linked.status == 0, "\(linked.stderr)")
        #expect(linked.stdout.contains("libffi"), "\(linked.stdout)")
        #expect(!linked.stdout.contains("libswift"), "\(linked.stdout)")
        #expect(!linked.stdout.contains("libstdc++"), "\(linked.stdout)")
    }

    /// A spare (`--spare`, started before it is needed) takes its arguments from the first line of its input and
    /// then works as a worker started with them, including what the host sent right behind that line (its TMPDIR,
    /// which comes with them, is checked where a plugin reports it: WorkerSpareTests). A launch that is not a list
    /// of strings, or longer than a megabyte, is refused; a spare whose input closes first ends.
    @Test func aSpareTakesItsArgumentsFromItsFirstLine() async throws {
        let plugin = try Fixture.compileFile("behaviours.c")
        try await offPool {
            let temporary = Paths.temporaryDirectory("native-spare-tmp")
            let request = #"{"jsonrpc":"2.0","id":1,"method":"describe","params":{}}"# + "\n"
            let worker = try Worker(
                plugin: plugin, spare: true, launchSuffix: #","--tmpdir","\#(temporary)""#, firstRequest: request)
            let described = try #require(worker.line().flatMap { try? JSONValue(parsing: $0) })
            #expect(described["id"] == .int(1))
            #expect(described["result"]?["plugin"]?["name"] == "behaviours")
            #expect(worker.request(2, "init", Self.initParams).last?["result"] == .object(JSONObject()))
            let echo = worker.request(3, "invoke", #"{"skill":"echo","arguments":{"a":1}}"#)
            #expect(echo.last?["result"]?["raw"] == ["code": 0, "result": #"{"a":1}"#])
            #expect(worker.finish().status == 0)

            // With a peek: its child peeks, then it confines itself as the host says.
            let spec = """
                {"network":0,"exec":0,"read_anywhere":0,"write_anywhere":0,"maximum_abi":-1,\
                "execute":["/usr","/lib","/lib64","/opt/swift/usr/lib/swift/linux","\(plugin)"],\
                "read":["/etc/ld.so.cache"],"write":["/dev/null"]}
                """
            let peeking = try Worker(
                plugin: plugin, spare: true,
                launchSuffix: ",\(JSONValue.string("--peek").jsonText),"
                    + JSONValue.string(spec).jsonText)
            #expect(peeking.request(1, "declaration").last?["result"]?["name"] == "behaviours")
            let records = try #require(peeking.request(2, "confine", spec).last?["result"])
            #expect(records["plugin"]?["name"] == "behaviours" && records["applied"] != nil, "\(records)")
            #expect(peeking.finish().status == 0)

            let broken = try Worker(plugin: plugin, spare: true, launchSuffix: ",3")
            let refused = broken.finish()
            #expect(refused.status == 70)
            #expect(refused.errors == "skillhost worker: the launch is not a list of strings\n")

            // A launch is at most a megabyte: a longer line is not read to its end.
            let long = try Worker(
                plugin: plugin, spare: true, launchSuffix: ",\"" + String(repeating: "x", count: 1 << 20) + "\"")
            let cut = long.finish()
            #expect(cut.status == 70)
            #expect(cut.errors == "skillhost worker: the launch is too long\n")

            let unused = try Worker(plugin: plugin, spare: true, launches: false)
            let ended = unused.finish()
            #expect(ended.status == 0 && ended.errors.isEmpty, "\(ended)")
        }
    }

    @Test func describeReportsThePluginsRecordsAsTheyAre() async throws {
        let plugin = try Fixture.compileFile("behaviours.c")
        try await offPool {
            let worker = try Worker(plugin: plugin)
            let lines = worker.request(1, "describe")
            // Its answer is all it sends: the host knows the step of loading from the request it waits for.
            #expect(lines.count == 1)
            let answer = try #require(lines.last?["result"])
            #expect(answer["plugin"]?["name"] == "behaviours")
            #expect(answer["plugin"]?["abi_major"] == .int(1))
            #expect(answer["plugin"]?["init"] == .bool(true))
            let descriptors = try #require(answer["descriptors"]?.arrayValue)
            #expect(.int(Int64(descriptors.count)) == answer["plugin"]?["skill_count"])
            let echo = try #require(descriptors.first { $0["id"] == "echo" })
            #expect(echo["invoke"] == .bool(true))
            #expect(echo["function"] == .bool(false))
            #expect(echo["signature"] == .null)
            #expect(echo["flags"] == .int(1))
            #expect(worker.finish().status == 0)
        }
    }

    @Test func callsReportTheirResultProgressLogUndoAndErrorAsTheyAre() async throws {
        let plugin = try Fixture.compileFile("behaviours.c")
        try await offPool {
            let worker = try Worker(plugin: plugin)
            _ = worker.request(1, "describe")
            #expect(worker.request(2, "init", Self.initParams).last?["result"] == .object(JSONObject()))
            let echo = worker.request(3, "invoke", #"{"skill":"echo","arguments":{"a":["é\n"]},"context":"{}"}"#)
            #expect(echo.last?["result"]?["raw"] == ["code": 0, "result": #"{"a":["é\n"]}"#])
            let progress = worker.request(4, "invoke", #"{"skill":"progress","arguments":{}}"#)
            #expect(progress.compactMap { $0["params"]?["done"]?.doubleValue } == [1, 2, 3])
            #expect(progress.contains { $0["params"]?["message"] == "progress: progress done" })
            let undo = worker.request(5, "invoke", #"{"skill":"undoable","arguments":{}}"#)
            #expect(undo.last?["result"]?["raw"]?["undo"] == ["skill": "echo", "arguments": #"{"restore":1}"#])
            let failed = worker.request(6, "invoke", #"{"skill":"fail","arguments":{}}"#)
            #expect(failed.last?["result"]?["raw"] == ["code": 2, "error": "the disk is full"])
            // Bytes that are not UTF-8 travel as they are, for the host to refuse with its own words.
            let broken = worker.request(7, "invoke", #"{"skill":"bad_utf8","arguments":{}}"#)
            #expect(broken.last?["result"]?["raw"] == ["code": 0, "result_hex": "c328"])
            #expect(worker.request(8, "snapshot").last?["result"] == .null)
            #expect(worker.finish().status == 0)
        }
    }

    @Test func aCancelReachesItsCallWhetherItCameBeforeOrDuringIt() async throws {
        let plugin = try Fixture.compileFile("behaviours.c")
        try await offPool {
            let worker = try Self.initialisedWorker(plugin)
            // Before: the call on the lane, its cancel on the main channel first.
            worker.send(#"{"jsonrpc":"2.0","method":"cancel","params":{"id":3}}"#)
            _ = worker.request(9, "snapshot")  // the cancel was read
            let early = worker.laneCall("C3\tcooperative\t0\t{\"ms\":60000}")
            #expect(early.last.flatMap { try? JSONValue(parsing: $0) }?["result"]?["raw"]?["code"] == .int(3))
            // During: the call runs on its own thread while the main channel reads the cancel.
            worker.send(
                #"{"jsonrpc":"2.0","id":4,"method":"invoke","params":"#
                    + #"{"skill":"cooperative","arguments":{"ms":60000}}}"#)
            worker.send(#"{"jsonrpc":"2.0","method":"cancel","params":{"id":4}}"#)
            var answer: JSONValue?
            while let line = worker.line(), let value = try? JSONValue(parsing: line) {
                if value["id"] == .int(4) {
                    answer = value
                    break
                }
            }
            #expect(answer?["result"]?["raw"]?["code"] == .int(3))
            #expect(worker.finish().status == 0)
        }
    }

    @Test func theLaneAnswersAPlainSuccessInItsShortForm() async throws {
        let plugin = try Fixture.compileFile("behaviours.c")
        try await offPool {
            let worker = try Self.initialisedWorker(plugin)
            let context = #"{"client":"test"}"#
            #expect(worker.laneCall("C5\techo\t\(context.utf8.count)\t\(context){\"x\":1}") == ["R5\t" + #"{"x":1}"#])
            // Blank arguments are an empty object; the thread is the lane's own.
            #expect(worker.laneCall("C6\techo\t0\t ") == ["R6\t{}"])
            #expect(worker.laneCall("C7\tthread_name\t0\t{}") == ["R7\t" + #""skillhost.lane""#])
            // Anything but a plain success goes as a JSON-RPC answer, on the lane too.
            let undo = worker.laneCall("C8\tundoable\t0\t{}")
            #expect(undo.last.flatMap { try? JSONValue(parsing: $0) }?["result"]?["raw"]?["undo"]?["skill"] == "echo")
            #expect(worker.laneCall("C9 broken").last?.contains("a broken call on the lane") == true)
            #expect(worker.finish().status == 0)
        }
    }

    @Test func aPluginThatDoesNotOpenIsNamedByTheUsersFileAndNothingRuns() async throws {
        let folder = Paths.temporaryDirectory("native-broken")
        let copy = folder + "/17-missing.so"
        _ = try Fixture.compile(
            """
            #include "skill_sdk.h"
            extern int skillhost_test_no_such_symbol(void);
            int touch(void);
            int touch(void) { return skillhost_test_no_such_symbol(); }
            """, name: "17-missing", into: folder)
        try await offPool {
            let worker = try Worker(plugin: copy)
            let answer = try #require(worker.request(1, "describe").last?["result"])
            let message = try #require(answer["dlopen_failed"]?.stringValue)
            #expect(message.hasPrefix("17-missing.so: undefined symbol: skillhost_test_no_such_symbol"))
            #expect(!message.contains(folder))
            let refused = worker.request(2, "invoke", #"{"skill":"echo","arguments":{}}"#)
            #expect(refused.last?["error"]?["code"] == .int(-32001))
            #expect(worker.request(3, "nonsense").last?["error"]?["message"] == "unknown method nonsense")
            worker.send("not json")
            #expect(
                worker.line()
                    == #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"not a JSON-RPC message"}}"#)
            #expect(worker.finish().status == 0)
        }
    }
}
