import Foundation
import TestSupport
import Testing

@testable import SkillHost

/// Every way a plugin file can be rejected: one line naming the file and the reason, nothing else affected.
struct LoaderRejectionTests {
    static let prelude = """
        #include "skill_sdk.h"
        #include <stddef.h>
        #pragma GCC diagnostic ignored "-Wunused-function"
        static double add(double a, double b) { return a + b; }
        static int invoke(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            (void)s; (void)args; api->set_result(call, "1", 1); return SKILL_OK;
        }
        #define OBJ "{\\"type\\":\\"object\\"}"

        """

    /// A plugin whose descriptor fields can be overridden piece by piece.
    static func plugin(
        header: String = "sizeof(skill_plugin), SKILL_ABI_MAJOR, SKILL_ABI_MINOR", name: String = "\"fixture\"",
        version: String = "\"1.0\"", skills: String = "SKILL_JSON(\"ok_skill\", \"Ok\", \"Fine.\", OBJ, 0, 0, invoke)",
        count: String? = nil, lifecycle: String = "NULL, NULL, NULL", extra: String = ""
    ) -> String {
        prelude + extra + """
            static const skill_descriptor skills[] = { \(skills) };
            SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) {
                static const skill_plugin p = { \(header), \(name), \(version), "test", \(count ?? "SKILL_COUNT(skills)"),
                                                skills, \(lifecycle) };
                return &p;
            }
            """
    }

    let registry: SkillRegistry
    let folder: String

    init() throws {
        registry = try makeRegistry()
        folder = Paths.temporaryDirectory("loader")
    }

    /// Compiles `source`, loads it and returns the one-line error.
    func rejection(_ source: String, name: String = "bad") throws -> String {
        let file = try Fixture.compile(source, name: name, into: folder)
        switch registry.load(file: file) {
        case .success: return "loaded"
        case .failure(let error): return error.description
        }
    }

    @Test func acceptsTheBaseline() throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        #expect(try rejection(Self.plugin()) == "loaded")
        #expect(registry.skills.map(\.id) == ["ok_skill"])
        // Its data directory is the user's alone.
        let data = registry.configuration.dataDirectory.appendingPathComponent("fixture").path
        let mode = (try FileManager.default.attributesOfItem(atPath: data)[.posixPermissions]) as? Int
        #expect(mode == 0o700)
    }

    @Test func rejectsFilesThatAreNotLoadableLibraries() throws {
        let text = folder + "/notes.so"
        try "hello".write(toFile: text, atomically: true, encoding: .utf8)
        #expect(
            registry.load(file: text).failure
                == "notes.so: is not a shared library (no ELF header); build it with cc -shared -fPIC")

        let good = try Fixture.compile(Self.plugin(), name: "good", into: folder)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))

        var foreign = bytes
        foreign[18] = 183  // EM_AARCH64
        foreign[19] = 0
        let foreignPath = folder + "/foreign.so"
        try Data(foreign).write(to: URL(fileURLWithPath: foreignPath))
        #expect(
            registry.load(file: foreignPath).failure
                == "foreign.so: is built for aarch64, but this host runs on x86_64; rebuild it for this machine")

        let truncatedPath = folder + "/truncated.so"
        try Data(bytes.prefix(bytes.count / 2)).write(to: URL(fileURLWithPath: truncatedPath))
        let truncated = try #require(registry.load(file: truncatedPath).failure)
        #expect(truncated.hasPrefix("truncated.so: is truncated: its headers describe "))
        #expect(truncated.hasSuffix("bytes but the file has \(bytes.count / 2); rebuild it or copy it again"))

        bytes[4] = 1  // ELFCLASS32
        let classPath = folder + "/class32.so"
        try Data(bytes).write(to: URL(fileURLWithPath: classPath))
        #expect(
            registry.load(file: classPath).failure == "class32.so: is a 32-bit library; rebuild it as 64-bit for x86_64"
        )

        let executable = try Fixture.compile(
            "int main(void) { return 0; }", name: "program", into: folder, flags: ["-no-pie"])
        #expect(
            registry.load(file: executable).failure
                == "program.so: is an executable or object file, not a shared library; build it with cc -shared -fPIC")
        #expect(registry.failures.count == 5)
    }

    /// What is not a regular file, or is too big, is named as such before anything is read: a 2 GB sparse file of
    /// zeros costs one stat, a 200 MB one a 4-byte read.
    @Test func rejectsWhatIsNotAPluginFileBeforeReadingIt() throws {
        func failure(_ path: String) -> String? { registry.load(file: path).failure }
        try FileManager.default.createDirectory(atPath: folder + "/dir.so", withIntermediateDirectories: true)
        #expect(
            failure(folder + "/dir.so")
                == "dir.so: is a directory, not a plugin file; only shared library files are loaded")
        #expect(symlink(folder + "/loop-b.so", folder + "/loop-a.so") == 0)
        #expect(symlink(folder + "/loop-a.so", folder + "/loop-b.so") == 0)
        #expect(
            failure(folder + "/loop-a.so")
                == "loop-a.so: is a symbolic link that loops, not a plugin file; only shared library files are loaded")
        #expect(mkfifo(folder + "/pipe.so", 0o644) == 0)
        #expect(
            failure(folder + "/pipe.so")
                == "pipe.so: is a named pipe (FIFO), not a plugin file; only shared library files are loaded")
        #expect(failure(folder + "/gone.so") == "gone.so: cannot be read: it no longer exists")
        for (name, size) in [("huge.so", 2 << 30), ("big.so", 200 << 20)] {
            let path = folder + "/" + name
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, off_t(size)) == 0)  // sparse: nothing is written
        }
        #expect(
            failure(folder + "/huge.so")
                == "huge.so: is 2048.0 MB, over the host's limit of 256.0 MB for plugin files; check it is the right "
                + "file (or raise max_plugin_mb in config.json)")
        #expect(
            failure(folder + "/big.so")
                == "big.so: is not a shared library (no ELF header); build it with cc -shared -fPIC")
    }

    @Test func rejectsBadEntryPoints() throws {
        #expect(
            try rejection(Self.prelude + "int unrelated(void) { return 1; }")
                == "bad.so: does not export skill_plugin_entry; define it with SKILL_PLUGIN(...) from skill_sdk.h (or mark it SKILL_EXPORT)"
        )
        #expect(
            try rejection(Self.prelude + "SKILL_EXPORT const skill_plugin *skill_plugin_entry(void) { return NULL; }")
                == "bad.so: skill_plugin_entry() returned NULL; it must return the plugin's descriptor")
        #expect(
            try rejection(Self.prelude + "void unresolved(void); SKILL_EXPORT int x(void) { unresolved(); return 0; }")
                .hasPrefix("bad.so: cannot be loaded: "))
        // The dynamic linker's own words are the problem's cause, not just part of its sentence.
        let file = try Fixture.compile(
            Self.prelude + "void unresolved(void); SKILL_EXPORT int x(void) { unresolved(); return 0; }", name: "bad",
            into: folder)
        guard case .failure(let error) = registry.load(file: file), let problem = error.problems.first else {
            Issue.record("an unresolved symbol was loaded")
            return
        }
        #expect(problem.code == .dlopenFailed)
        #expect(problem.cause?.contains("undefined symbol: unresolved") == true, "\(problem.cause ?? "no cause")")
        #expect(problem.description == "cannot be loaded: \(problem.cause ?? "")")
        #expect(PluginProblem.notELF.cause == nil)
    }

    @Test func rejectsVersionAndSizeMismatches() throws {
        #expect(
            try rejection(Self.plugin(header: "sizeof(skill_plugin), 2, 0"))
                == "bad.so: ABI major 2, host 1; rebuild the plugin against this host's skill_sdk.h")
        #expect(
            try rejection(Self.plugin(header: "sizeof(skill_plugin), 1, 5"))
                == "bad.so: ABI minor 5 is newer than the host's 4; update skillhost or rebuild the plugin against this host's skill_sdk.h"
        )
        #expect(
            try rejection(Self.plugin(header: "16, 1, 0"))
                == "bad.so: skill_plugin.struct_size is 16, smaller than the 72 bytes of ABI v1.0; set it to sizeof(skill_plugin)"
        )
        #expect(
            try rejection(Self.plugin(skills: "{ 8, \"x\", 0, 0, 0, 0, 0, 0, 0, 0, 0 }"))
                == "bad.so: skill_descriptor.struct_size is 8, smaller than the 80 bytes of ABI v1.0; set it to sizeof(skill_descriptor)"
        )
    }

    @Test func rejectsBadNames() throws {
        #expect(try rejection(Self.plugin(name: "NULL")) == "bad.so: plugin name is missing; set skill_plugin.name")
        #expect(
            try rejection(Self.plugin(name: "\"Bad Name\""))
                == "bad.so: plugin name \"Bad Name\" is invalid; use 1-48 characters of a-z, 0-9, _ and -")
        #expect(
            try rejection(Self.plugin(version: "\"\""))
                == "bad.so: plugin version is missing; set skill_plugin.version (e.g. \"1.0.0\")")
        #expect(
            try rejection(Self.plugin(count: "0")) == "bad.so: declares no skills; list at least one skill_descriptor")
        #expect(
            try rejection(Self.plugin(skills: "SKILL_JSON(\"Bad-Id\", \"T\", \"D.\", OBJ, 0, 0, invoke)"))
                == "bad.so: skill \"Bad-Id\": id is invalid; use a lowercase letter followed by up to 63 of a-z, 0-9 and _"
        )
        #expect(
            try rejection(
                Self.plugin(
                    skills:
                        "SKILL_JSON(\"dup\", \"T\", \"D.\", OBJ, 0, 0, invoke), SKILL_JSON(\"dup\", \"T\", \"D.\", OBJ, 0, 0, invoke)"
                ))
                == "bad.so: skill id \"dup\" is declared twice in this plugin")
    }

    @Test func rejectsIdsTakenByLoadedPlugins() async throws {
        #expect(try rejection(Self.plugin(), name: "first") == "loaded")
        #expect(
            try rejection(Self.plugin(name: "\"other\""), name: "second")
                == "second.so: skill id \"ok_skill\" is already provided by plugin \"fixture\"; rename one of them")
        let sameName = try rejection(
            Self.plugin(skills: "SKILL_JSON(\"another\", \"T\", \"D.\", OBJ, 0, 0, invoke)"), name: "third")
        #expect(sameName.hasPrefix("third.so: plugin name \"fixture\" is already used by "))
        #expect(registry.skills.map(\.id) == ["ok_skill"])
        #expect(await registry.invoke("ok_skill", arguments: "{}").result == .int(1))
    }

    @Test func rejectsBadSchemasAndSignatures() throws {
        func skill(_ descriptor: String) throws -> String { try rejection(Self.plugin(skills: descriptor)) }
        #expect(
            try skill("SKILL_JSON(\"s\", \"T\", \"D.\", \"{nope\", 0, 0, invoke)")
                == "bad.so: skill \"s\": input schema is not valid JSON: invalid JSON at byte 1: expected a member name in double quotes"
        )
        #expect(
            try skill("SKILL_JSON(\"s\", \"T\", \"D.\", \"{\\\"type\\\":\\\"string\\\"}\", 0, 0, invoke)")
                == "bad.so: skill \"s\": input schema must be an object schema (\"type\": \"object\")")
        #expect(
            try skill(
                "SKILL_JSON(\"s\", \"T\", \"D.\", \"{\\\"type\\\":\\\"object\\\",\\\"minimum\\\":\\\"x\\\"}\", 0, 0, invoke)"
            )
                == "bad.so: skill \"s\": input schema is invalid: \"minimum\" must be a number, got string")
        #expect(
            try skill("SKILL_JSON(\"s\", \"T\", \"D.\", OBJ, 0, 0, NULL)")
                == "bad.so: skill \"s\": JSON skill without invoke: set invoke, or make it a typed skill with signature and function"
        )
        #expect(
            try skill("SKILL_JSON(\"s\", \"T\", \"D.\", NULL, 0, 0, invoke)")
                == "bad.so: skill \"s\": JSON skill has no input_schema; describe its arguments as a JSON Schema object"
        )
        #expect(
            try skill("SKILL_TYPED(\"s\", \"T\", \"D.\", \"double add(double a, double\", add)")
                == "bad.so: skill \"s\": signature \"double add(double a, double\" is invalid: expected a parameter name after double, found the end"
        )
        #expect(
            try skill("SKILL_TYPED(\"s\", \"T\", \"D.\", \"float add(double a, double b)\", add)")
                == "bad.so: skill \"s\": signature \"float add(double a, double b)\" is invalid: unknown type \"float\" (use bool, int32, int64, double or string; void only as a return type; error only as the last parameter)"
        )
        #expect(
            try skill(
                "SKILL_TYPED_SCHEMA(\"s\", \"T\", \"D.\", \"{\\\"type\\\":\\\"object\\\",\\\"properties\\\":{\\\"a\\\":{\\\"type\\\":\\\"string\\\"},\\\"b\\\":{\\\"type\\\":\\\"number\\\"}},\\\"required\\\":[\\\"a\\\",\\\"b\\\"]}\", \"double add(double a, double b)\", add)"
            )
                == "bad.so: skill \"s\": declared input schema disagrees with the signature: property \"a\" has type \"string\" but the parameter is double"
        )
        #expect(
            try skill("{ sizeof(skill_descriptor), \"s\", \"T\", \"\", OBJ, 7, 64, 0, invoke, NULL, NULL }")
                == "bad.so: skill \"s\": description is missing; the model needs it to decide when to call the skill (and 2 more problems; run skillhost check \(folder)/bad.so)"
        )
    }

    @Test func collectsEveryProblemForCheck() throws {
        let file = try Fixture.compile(
            Self.plugin(
                header: "sizeof(skill_plugin), 1, 9", name: "\"Bad Name\"",
                skills:
                    "SKILL_JSON(\"x\", \"T\", \"\", OBJ, 5, 0, invoke), SKILL_TYPED(\"y\", \"T\", \"D.\", \"int8 f()\", add)"
            ),
            name: "many", into: folder)
        let error = try #require(registry.check(file: file).failureValue)
        #expect(
            error.problems.map(\.description) == [
                "ABI minor 9 is newer than the host's 4; update skillhost or rebuild the plugin against this host's skill_sdk.h",
                "plugin name \"Bad Name\" is invalid; use 1-48 characters of a-z, 0-9, _ and -",
                "skill \"x\": description is missing; the model needs it to decide when to call the skill",
                "skill \"x\": risk 5 is unknown; use SKILL_RISK_READ_ONLY, _MUTATING or _DESTRUCTIVE",
                "skill \"y\": signature \"int8 f()\" is invalid: unknown type \"int8\" (use bool, int32, int64, double or string; void only as a return type; error only as the last parameter)",
            ])
        #expect(registry.skills.isEmpty)
    }

    @Test func showsTheTextOfAFailingInit() throws {
        let extra = """
            #include <stdio.h>
            static int init(const skill_host *h, void **s, char *error, size_t cap) {
                (void)h; (void)s; snprintf(error, cap, "cannot open %s: permission denied", "notes.db"); return 7;
            }

            """
        #expect(
            try rejection(Self.plugin(lifecycle: "init, NULL, NULL", extra: extra))
                == "bad.so: init failed (code 7): cannot open notes.db: permission denied")
        #expect(registry.skills.isEmpty)
    }

    @Test func checkValidatesWithoutRegistering() throws {
        let file = try Fixture.compileFile("typed.c", into: folder)
        let (plugin, skills) = try #require(registry.check(file: file).successValue)
        #expect(plugin.name == "typed")
        #expect(skills.count == 9)
        #expect(registry.skills.isEmpty)
        #expect(try registry.load(file: file).get().name == "typed")  // the check left nothing behind
    }
}

extension Result {
    var failure: String? {
        if case .failure(let error) = self { return "\(error)" }
        return nil
    }
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
    var successValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

struct ELFInspectionTests {
    @Test func tellsSwiftImagesFromPlainC() throws {
        let plain = try Fixture.compileFile("typed.c")
        let plainBytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: plain)))
        #expect(ELFInspector.inspect(plainBytes) == .success(ELFSummary(containsSwift: false)))
        let swift = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Paths.products + "/libskill-clock.so")))
        #expect(ELFInspector.inspect(swift) == .success(ELFSummary(containsSwift: true)))
    }

    /// What `check` reads from a file that loads — Swift code, extra exports — survives section headers that
    /// point anywhere: offsets and sizes near the top of the integer range are refused, never added up.
    @Test func hostileSectionHeadersAreRefusedNotOverflowed() throws {
        let source = #"""
            #include "skill_sdk.h"
            __attribute__((visibility("default"))) int extra(int x) { return x; }
            static double one(void) { return 1; }
            static const skill_descriptor skills[] = { SKILL_TYPED("one", "One", "One.", "double one()", one) };
            SKILL_PLUGIN("hostile", "1.0.0", "x", skills)
            """#
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try Fixture.compile(source, name: "hostile"))))
        #expect(ELFInspector.extraExports(bytes) == ["extra"])
        #expect(!ELFInspector.hasSwiftCode(bytes))
        let shoff = Int(ELFInspector.read64(bytes, 40))
        let count = Int(ELFInspector.read16(bytes, 60))
        for index in 0..<count {
            for field in [24, 32] {  // sh_offset, sh_size
                let at = shoff + index * 64 + field
                for byte in 0..<8 { bytes[at + byte] = byte == 7 ? 0x7F : 0xFF }
            }
        }
        #expect(ELFInspector.extraExports(bytes) == [])
        #expect(!ELFInspector.hasSwiftCode(bytes))
    }

    @Test func plainCPluginsAreNotKeptMapped() throws {
        let registry = try makeRegistry()
        let summary = try registry.load(file: try Fixture.compileFile("typed.c")).get()
        #expect(!summary.keepsMapped)
        let swift = try registry.load(file: Paths.products + "/libskill-clock.so").get()
        #expect(swift.keepsMapped)
        registry.shutdown()
        #expect(registry.skills.isEmpty)
    }
}

/// The content fingerprint that tells unchanged bytes from changed ones on a reload: one byte changed anywhere — in a
/// word or in the tail after the last whole word — or a length that differs only by zeros changes it.
struct FingerprintTests {
    @Test func oneByteChangedAnywhereChangesIt() {
        let bytes = (0..<1003).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let original = fingerprint(bytes)
        #expect(fingerprint(bytes) == original)
        for index in [0, 7, 8, 500, 999, 1000, 1002] {
            var changed = bytes
            changed[index] ^= 0x80
            #expect(fingerprint(changed) != original, "byte \(index)")
        }
        #expect(fingerprint([0]) != fingerprint([0, 0]))
        #expect(fingerprint([]) != fingerprint([0]))
    }
}
