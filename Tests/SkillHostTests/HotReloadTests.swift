import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Hot reload with real files in a temporary folder, real inotify and plugins compiled during the test. Every wait
/// is for an event (a version answering, a change announced), capped generously for a busy machine; the debounce's
/// timing itself is unit-tested with a driven clock (TimeLogicTests).
@Suite(.serialized)
struct HotReloadTests {
    /// Versions of the fixture, compiled once into a staging folder outside any watched folder.
    static let versions: [Int: String] = {
        let folder = Paths.temporaryDirectory("hot-staging")
        let source = (try? String(contentsOfFile: Paths.fixtures + "/hot.c", encoding: .utf8)) ?? ""
        var built: [Int: String] = [:]
        for version in [1, 2, 3] + Array(10...29) {
            let path = try? Fixture.compile(
                source, name: "hot-v\(version)", into: folder, flags: ["-shared", "-fPIC", "-DVERSION=\(version)"])
            built[version] = path
        }
        return built
    }()

    let folder: String
    let registry: SkillRegistry
    let watch: PluginWatch
    let events = EventLog()
    let listener: Task<Void, Never>

    /// A generous drain: a call that started on the old version finishes on it however busy the machine (300 ms
    /// cancelled a 150 ms call beside other suites). The test of the drain's end makes its own, short.
    init() throws { try self.init(drain: .seconds(60)) }

    init(drain: Duration) throws {
        folder = Paths.temporaryDirectory("hot")
        registry = try makeRegistry("hot-data") { configuration in
            configuration.drainTimeout = drain
            // Long enough that a burst of writes from one loop is one burst even when the machine is busy.
            configuration.reloadDebounce = .milliseconds(200)
        }
        let stream = registry.changes()
        let events = self.events
        listener = Task { for await change in stream { events.withLock { $0.append(change) } } }
        watch = registry.watch([(path: folder, include: { @Sendable _ in true })])
    }

    func version(_ n: Int) throws -> String { try #require(Self.versions[n]) }

    /// Copies a file into place the way an author's `install`/`mv` does: written elsewhere, renamed in.
    func install(_ source: String, as name: String = "hot.so") throws {
        let temporary = folder + "/.\(name).partial"
        try? FileManager.default.removeItem(atPath: temporary)
        try FileManager.default.copyItem(atPath: source, toPath: temporary)
        guard rename(temporary, folder + "/" + name) == 0 else { throw POSIXError(.EIO) }
    }

    func currentVersion() async -> JSONValue? { await registry.invoke("hot_version", arguments: "{}").result }

    /// Waits until `condition` holds (fails the test after a generous cap; a loaded machine can be slow).
    func eventually(_ what: String, _ condition: () async -> Bool) async {
        if !(await TestSupport.eventually(condition)) { Issue.record("timed out waiting until \(what)") }
    }

    func stop() {
        watch.stop()
        listener.cancel()
    }

    @Test func dropInAndRenameIn() async throws {
        defer { stop() }
        try FileManager.default.copyItem(atPath: try version(1), toPath: folder + "/hot.so")  // written in place
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        try install(try version(1), as: "renamed.so")  // same plugin name from another file: rejected
        await eventually("the duplicate is reported") { registry.failures.count == 1 }
        #expect(
            registry.failures.first?.description.hasPrefix("renamed.so: plugin name \"hot\" is already used by") == true
        )
        #expect(events.withLock { $0.first } == .loaded(try #require(registry.plugins.first)))
    }

    @Test func replacementUnderLoadSwitchesOnceAndNeverBack() async throws {
        defer { stop() }
        try install(try version(1))
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        let stopCalling = Flag()
        defer { stopCalling.set() }  // also when an expectation below throws
        let calls = Counter()
        // Each caller calls until told to stop *and* it has seen v2 (or a generous cap passed), so every sequence
        // covers the switch however the four tasks were scheduled.
        let callers = (0..<4).map { _ in
            Task { () -> (failures: Int, sequence: [Int64]) in
                var failures = 0
                var sequence: [Int64] = []
                let cap = ContinuousClock.now + .seconds(120)
                while !(stopCalling.isSet && sequence.last == 2), ContinuousClock.now < cap {
                    let outcome = await registry.invoke("hot_version", arguments: "{}")
                    if case .int(let v)? = outcome.result { sequence.append(v) } else { failures += 1 }
                    calls.increment()
                    await Task.yield()  // an unknown skill answers without suspending; let other tasks run
                }
                return (failures, sequence)
            }
        }
        await eventually("the callers are calling") { calls.value >= 8 }
        // Overwrite in place while calls run: the host runs private copies, so this must not crash.
        try Data(contentsOf: URL(fileURLWithPath: try version(2))).write(to: URL(fileURLWithPath: folder + "/hot.so"))
        await eventually("v2 answers") { await currentVersion() == .int(2) }
        stopCalling.set()
        for caller in callers {
            let (failures, sequence) = await caller.value
            #expect(failures == 0)
            #expect(sequence.first == 1)
            #expect(sequence.last == 2)
            #expect(sequence == sequence.sorted(), "a caller saw v2, then v1 again")
        }
        await eventually("v1 is retired") { registry.pendingRetirements == 0 }
        #expect(registry.keptImages.count == 0, "a plain C plugin is closed after draining")
    }

    /// Many replacements while calls hammer the skill: a call that looked the skill up just before a switch must
    /// still find its image mapped (retiring waits for such calls), and no call may fail.
    @Test func rapidReplacementsUnderLoadLoseNoCall() async throws {
        defer { stop() }
        try install(try version(1))
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        let stopCalling = Flag()
        defer { stopCalling.set() }
        let callers = (0..<4).map { _ in
            Task { () -> (ok: Int, failed: Int) in
                var counts = (ok: 0, failed: 0)
                while !stopCalling.isSet {
                    let outcome = await registry.invoke("hot_version", arguments: "{}")
                    if outcome.status == .ok { counts.ok += 1 } else { counts.failed += 1 }
                    await Task.yield()
                }
                return counts
            }
        }
        for round in 0..<16 {
            try install(try version(round % 2 == 0 ? 2 : 1))
            try await Task.sleep(for: .milliseconds(60))
        }
        await eventually("every old version is retired") { registry.pendingRetirements == 0 }
        stopCalling.set()
        for caller in callers {
            let counts = await caller.value
            #expect(counts.failed == 0)
            #expect(counts.ok > 0)
        }
    }

    @Test func runningCallsFinishOnTheOldVersion() async throws {
        defer { stop() }
        try install(try version(1))
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        let slow = StartedCall(registry, "hot_slow", #"{"ms": 150}"#)  // looked up (v1) before the replacement
        try install(try version(2))
        await eventually("v2 answers") { await currentVersion() == .int(2) }
        await eventually("the slow call finished") { slow.outcome != nil }
        #expect(slow.outcome?.result == .int(1))
    }

    @Test func aDrainTimeoutCancelsWhatIsLeft() async throws {
        let short = try HotReloadTests(drain: .milliseconds(300))
        defer { short.stop() }
        try short.install(try short.version(1))
        await short.eventually("v1 is loaded") { await short.currentVersion() == .int(1) }
        let slow = StartedCall(short.registry, "hot_slow", #"{"ms": 600000}"#)
        try short.install(try short.version(2))
        await short.eventually("the slow call ended") { slow.outcome != nil }
        #expect(slow.outcome?.status == .cancelled)
        #expect(slow.outcome?.error == "hot_slow was cancelled: plugin \"hot\" 1.1 was replaced or removed")
        await short.eventually("v1 is retired") { short.registry.pendingRetirements == 0 }
    }

    @Test func aBrokenReplacementKeepsTheWorkingVersion() async throws {
        defer { stop() }
        try install(try version(1))
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        let broken = Paths.temporaryDirectory("hot-broken") + "/broken.so"
        try Data(contentsOf: URL(fileURLWithPath: try version(2))).prefix(3000).write(to: URL(fileURLWithPath: broken))
        try install(broken)
        await eventually("the failure is reported") { registry.failures.count == 1 }
        try install(broken)  // the same content again: not reported again
        // A marker plugin installed afterwards is handled after the second event: once it is announced, the
        // second broken install has been dealt with.
        try install(try Fixture.compileFile("typed.c", into: Paths.temporaryDirectory("hot-marker")), as: "marker.so")
        await eventually("the marker is announced") {
            events.withLock { $0.contains { $0.line.hasPrefix("+ typed") } }
        }
        #expect(await currentVersion() == .int(1))
        let failures = events.withLock { $0.filter { if case .failed = $0 { return true } else { return false } } }
        #expect(failures.count == 1)
        #expect(failures.first?.line.hasPrefix("! hot.so: is truncated: its headers describe") == true)
        try install(try version(2))  // a good build afterwards replaces v1 and clears the failure
        await eventually("v2 answers") { await currentVersion() == .int(2) }
        #expect(registry.failures.isEmpty)
    }

    @Test func replacementsAddDropAndUpdateSkillsExactly() async throws {
        defer { stop() }
        try install(try version(2))
        await eventually("v2 is loaded") { await currentVersion() == .int(2) }
        #expect(registry.skills.map(\.id) == ["hot_old", "hot_slow", "hot_version"])
        try install(try version(3))
        await eventually("v3 answers") { await currentVersion() == .int(3) }
        #expect(registry.skills.map(\.id) == ["hot_extra", "hot_slow", "hot_version"])
        await eventually("the replacement is announced") {
            events.withLock { $0.last?.line } == "~ hot 1.2 → 1.3: 1 added (hot_extra), 1 removed (hot_old), 2 updated"
        }
    }

    @Test func deleteAndRenameOutUnregister() async throws {
        defer { stop() }
        try install(try version(1))
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        try FileManager.default.removeItem(atPath: folder + "/hot.so")
        await eventually("deleting unloads") { registry.skills.isEmpty }
        // The event reaches the listener task a moment after the registry changed.
        await eventually("the unload is announced") {
            events.withLock { $0.last?.line } == "- hot 1.1: 3 skills removed (hot_version, hot_slow, hot_old)"
        }
        try install(try version(2))
        await eventually("v2 is loaded") { await currentVersion() == .int(2) }
        let outside = Paths.temporaryDirectory("hot-outside") + "/moved.so"
        guard rename(folder + "/hot.so", outside) == 0 else { throw POSIXError(.EIO) }
        await eventually("moving out unloads") { registry.skills.isEmpty }
        #expect(await registry.invoke("hot_version", arguments: "{}").status == .error)
    }

    @Test func aBurstOfRewritesLoadsTheFinalVersion() async throws {
        defer { stop() }
        for version in 10...29 {
            try Data(contentsOf: URL(fileURLWithPath: try self.version(version)))
                .write(to: URL(fileURLWithPath: folder + "/hot.so"))
        }
        await eventually("v29 answers") { await currentVersion() == .int(29) }
        let loads = events.withLock { $0.filter { if case .failed = $0 { return false } else { return true } } }
        #expect(loads.count <= 3, "\(loads.count) loads for one burst")
        #expect(await currentVersion() == .int(29))
    }

    @Test func theFolderCanBeDeletedAndRecreated() async throws {
        defer { stop() }
        try install(try version(1))
        await eventually("v1 is loaded") { await currentVersion() == .int(1) }
        try FileManager.default.removeItem(atPath: folder)
        await eventually("the folder's plugins are unloaded") { registry.skills.isEmpty }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try version(2), toPath: folder + "/hot.so")
        await eventually("v2 is loaded from the recreated folder") { await currentVersion() == .int(2) }
    }

    /// A plugins folder reached through a symbolic link that is replaced by a real folder: the old folder's
    /// plugins go, the new folder's come.
    @Test func aSymlinkedFolderReplacedByARealOneIsFollowed() async throws {
        defer { stop() }
        let base = Paths.temporaryDirectory("hot-link")
        let target = base + "/target"
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try version(1), toPath: target + "/hot.so")
        let link = base + "/plugins"
        #expect(symlink(target, link) == 0)
        let linked = registry.watch([(path: link, include: { @Sendable _ in true })])
        defer { linked.stop() }
        registry.rescan(folder: link)
        await eventually("v1 is loaded through the link") { await currentVersion() == .int(1) }
        try FileManager.default.removeItem(atPath: link)
        try FileManager.default.createDirectory(atPath: link, withIntermediateDirectories: true)
        _ = try Fixture.compileFile("typed.c", into: link)
        await eventually("the new folder's plugin is loaded") { registry.skill("twice64") != nil }
        await eventually("the old folder's plugin is gone") { registry.skill("hot_version") == nil }
    }

    /// What a linked folder names is noted when the watch is made, before the watcher's thread runs: on a busy
    /// machine the link was replaced before the thread started, which then took the new folder for the watched one
    /// and never saw its files (`aSymlinkedFolderReplacedByARealOneIsFollowed` failed so, beside two busy loops).
    @Test func aLinkedFolderIsNotedWhenItsWatchIsMade() throws {
        let base = Paths.temporaryDirectory("hot-link-setup")
        try FileManager.default.createDirectory(atPath: base + "/target", withIntermediateDirectories: true)
        #expect(symlink(base + "/target", base + "/plugins") == 0)
        let setup = FolderWatcher.setUp([base + "/plugins", base + "/target"])
        defer { close(setup.fd) }
        #expect(setup.linked.keys.sorted() == [base + "/plugins"], "only the path through the link")
        #expect(setup.linked[base + "/plugins"] == FolderWatcher.identity(base + "/target"))
    }

    @Test func swiftImagesStayMappedAfterReplacement() async throws {
        defer { stop() }
        let clock = Paths.products + "/libskill-clock.so"
        try install(clock, as: "clock.so")
        await eventually("clock is loaded") { registry.skill("clock_now") != nil }
        var changed = try Data(contentsOf: URL(fileURLWithPath: clock))
        changed.append(0)  // trailing bytes: same code, different content
        let copy = Paths.temporaryDirectory("hot-clock") + "/clock.so"
        try changed.write(to: URL(fileURLWithPath: copy))
        try install(copy, as: "clock.so")
        await eventually("the old image is retired") {
            registry.keptImages.count == 1 && registry.pendingRetirements == 0
        }
        #expect(registry.keptImages.bytes > 100_000)
        #expect(await registry.invoke("clock_weekday", arguments: #"{"date":"2026-11-30"}"#).result == "Monday")
    }
}

/// The rescan path, without a watcher: what hot reload does after a queue overflow.
struct RescanTests {
    @Test func rescanBringsTheRegistryInLineWithTheFolder() async throws {
        let folder = Paths.temporaryDirectory("rescan")
        let registry = try makeRegistry()
        let versions = HotReloadTests.versions
        try FileManager.default.copyItem(atPath: try #require(versions[1]), toPath: folder + "/hot.so")
        _ = try Fixture.compileFile("typed.c", into: folder)
        try FileManager.default.removeItem(atPath: folder + "/typed.c")
        registry.rescan(folder: folder)
        #expect(registry.plugins.map(\.name) == ["hot", "typed"])

        try FileManager.default.removeItem(atPath: folder + "/typed.so")
        try FileManager.default.removeItem(atPath: folder + "/hot.so")
        try FileManager.default.copyItem(atPath: try #require(versions[2]), toPath: folder + "/hot.so")
        try "junk".write(toFile: folder + "/.hidden.so", atomically: true, encoding: .utf8)
        try "notes".write(toFile: folder + "/README.txt", atomically: true, encoding: .utf8)
        registry.rescan(folder: folder)
        #expect(registry.plugins.map(\.name) == ["hot"])
        #expect(registry.plugins.first?.version == "1.2")
        #expect(registry.failures.isEmpty)
        #expect(await registry.invoke("hot_version", arguments: "{}").result == .int(2))

        let before = registry.plugins
        registry.rescan(folder: folder)  // nothing changed: nothing reloads
        #expect(registry.plugins == before)
    }
}

/// Registry changes collected by a listener task.
final class EventLog: Sendable {
    private let changes = Mutex<[RegistryChange]>([])

    func withLock<T>(_ body: (inout [RegistryChange]) -> T) -> T { changes.withLock { body(&$0) } }
}

/// A count several tasks add to.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    var value: Int { count.load(ordering: .relaxed) }
    func increment() { count.add(1, ordering: .relaxed) }
}

/// A flag one task sets and others read.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
