import Foundation
import SkillJSON
import TestSupport
import Testing

@testable import SkillHost

/// ABI 1.2: a typed function whose signature ends with `error NAME` reports a failure through its `skill_error`
/// (`skill_fail`), the same in process, in the Swift worker and in the C worker.
struct TypedErrorTests {
    enum Mode: CaseIterable, Sendable {
        case inProcess, swiftWorker, nativeWorker
    }

    static func host(_ mode: Mode) throws -> IsolationTests.Host {
        try IsolationTests.Host(
            isolated: mode == .inProcess ? [] : ["typed_errors"], worker: mode == .nativeWorker ? .native : .swift)
    }

    @Test(arguments: Mode.allCases) func aTypedSkillFailsWithItsOwnSentence(mode: Mode) async throws {
        let host = try Self.host(mode)
        try await host.load("typed_errors.c")
        let plugin = try #require(host.registry.plugins.first { $0.name == "typed_errors" })
        #expect(plugin.isolation == (mode == .inProcess ? .inProcess : .process))
        let registry = host.registry

        let days = await registry.invoke("days_between", arguments: #"{"date1":"2026-01-01","date2":"2026-12-25"}"#)
        #expect(days.result == .int(358), "\(days)")
        let garbage = await registry.invoke("days_between", arguments: #"{"date1":"garbage","date2":"2026-12-25"}"#)
        #expect(garbage.status == .invalidArgs, "the caller's fault: exit 3, invalid_args")
        #expect(garbage.error == #"date1 "garbage" is not a date; write it as YYYY-MM-DD, such as 2026-12-25"#)
        // The general path (arguments to coerce) reports the same as the plain one.
        let coerced = await registry.invoke("days_between", arguments: #"{"date2":"2026-02-30","date1":"2026-01-01"}"#)
        #expect(coerced.error == #"date2 "2026-02-30" is not a date; write it as YYYY-MM-DD, such as 2026-12-25"#)

        let negative = await registry.invoke("describe", arguments: #"{"n": -1}"#)
        #expect(negative.status == .error && negative.error == "negative numbers have no description")
        #expect(negative.result == nil, "what a failed call returned is not its result")
        #expect(await registry.invoke("describe", arguments: #"{"n": 5}"#).result == .string("the number 5"))
        let junk = await registry.invoke("junk", arguments: "{}")
        #expect(junk.status == .error && junk.error == "junk returned", "a failed call's string is never read")
        #expect(
            await registry.invoke("free_count", arguments: "{}").result == .int(3),
            "the failed calls' strings were released too")

        let long = await registry.invoke("long_message", arguments: "{}")
        #expect(long.error == String(repeating: "x", count: 510), "cut within the record, before a split character")
        let bad = await registry.invoke("bad_message", arguments: "{}")
        #expect(bad.error == "the skill failed, and its message is not valid UTF-8")
        let none = await registry.invoke("no_message", arguments: "{}")
        #expect(none.status == .error && none.error == "the skill failed without a message")
        #expect(await registry.invoke("fine", arguments: #"{"x": 2}"#).result == .double(4))
        // Sixteen arguments and the record: seventeen C parameters, in a worker too.
        let sixteen = (UnicodeScalar("a").value...UnicodeScalar("p").value).compactMap(UnicodeScalar.init).map {
            "\"\($0)\": \($0.value - 96)"
        }
        let sum = await registry.invoke("sum16", arguments: "{" + sixteen.joined(separator: ", ") + "}")
        #expect(sum.result == .int(136), "\(sum)")

    }

    @Test func theErrorParameterIsNotAnArgumentAndComesLast() throws {
        let signature = try TypedSignature.parse("int64 days_between(string date1, string date2, error error)")
        #expect(signature.reportsErrors && signature.parameters.map(\.name) == ["date1", "date2"])
        #expect(signature.generatedSchema["required"] == ["date1", "date2"])
        #expect(try TypedSignature.parse("double f(error e)").parameters.isEmpty)
        #expect(throws: SignatureError.errorNotLast("e")) { try TypedSignature.parse("double f(error e, double x)") }
        #expect(
            SignatureError.errorNotLast("e").description
                == #"the error parameter "e" must be the last one (the function reports through it after reading its arguments)"#
        )
        #expect(!(try TypedSignature.parse("double f(double error)")).reportsErrors, "a parameter named error is one")
        #expect(throws: SignatureError.expected("')'", found: "the end")) {
            try TypedSignature.parse("double f(error e")
        }
        #expect(throws: SignatureError.duplicateParameter("x")) {
            try TypedSignature.parse("double f(double x, error x)")
        }
        #expect(throws: SignatureError.errorNotLast("e")) { try TypedSignature.parse("double f(error e, error g)") }
    }

    static func patientHome(_ name: String) throws -> String {
        let home = Paths.temporaryDirectory(name)
        try givePatientWorkerStarts(home: home)
        return home
    }

    /// Through the real binary: the C worker (a plugin of the user folder) and in process, with exit codes.
    @Test func theCommandLineExitsAsForAnyInvalidArguments() async throws {
        let home = try Self.patientHome("typed-errors-cli")
        let plugins = home + "/plugins"
        try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true)
        _ = try Fixture.compileFile("typed_errors.c", into: plugins)
        for isolate in ["all", "none"] {
            let run = try await runProcessOffPool(
                Paths.skillhost,
                [
                    "call", "days_between", #"{"date1": "garbage", "date2": "2026-12-25"}"#, "--plugins", plugins,
                    "--isolate", isolate,
                ], environment: cliEnvironment(home: home))
            #expect(run.status == 3, "\(isolate): \(run.stderr)")
            #expect(
                run.stderr
                    == "invalid arguments: date1 \"garbage\" is not a date; write it as YYYY-MM-DD, such as 2026-12-25\n"
            )
        }
    }

    /// A typed function written in Swift reports through the same record (`skill_fail` is a C inline function the
    /// Swift compiler imports), built with plain swiftc against the SDK's header.
    @Test func aSwiftTypedFunctionFailsTheSameWay() async throws {
        let work = try Self.patientHome("typed-errors-swift")
        try "module SkillSDK {\n    header \"\(Paths.sdkInclude)/skill_sdk.h\"\n    export *\n}\n".write(
            toFile: work + "/module.modulemap", atomically: true, encoding: .utf8)
        try Self.swiftPlugin.write(toFile: work + "/halve.swift", atomically: true, encoding: .utf8)
        let build = try await runProcessOffPool(
            "/bin/sh",
            ["-c", "cd \"$0\" && swiftc -emit-library -parse-as-library -I . halve.swift -o halve.so", work],
            environment: cliEnvironment(home: work))
        #expect(build.status == 0, "\(build.stderr.suffix(2000))")
        for isolate in ["all", "none"] {
            func call(_ arguments: String) async throws -> ProcessResult {
                try await runProcessOffPool(
                    Paths.skillhost, ["call", "halve", arguments, "--plugins", work, "--isolate", isolate],
                    environment: cliEnvironment(home: work))
            }
            let even = try await call(#"{"n": 42}"#)
            #expect(even.status == 0 && even.stdout == "21\n", "\(isolate): \(even.stderr)")
            let odd = try await call(#"{"n": 7}"#)
            #expect(
                odd.status == 3 && odd.stderr == "invalid arguments: 7 is odd; give an even number\n", "\(odd.stderr)")
        }
    }

    static let swiftPlugin = #"""
        import Glibc
        import SkillSDK

        private let halve: @convention(c) (Int64, UnsafeMutablePointer<skill_error>?) -> Int64 = { n, error in
            guard n % 2 == 0 else {
                skill_fail(error, Int32(SKILL_ERR_INVALID_ARGS), "\(n) is odd; give an even number")
                return 0
            }
            return n / 2
        }

        private func text(_ string: String) -> UnsafePointer<CChar> { UnsafePointer(strdup(string)!) }

        private let descriptors: UnsafeMutablePointer<skill_descriptor> = {
            let pointer = UnsafeMutablePointer<skill_descriptor>.allocate(capacity: 1)
            pointer.initialize(
                to: skill_descriptor(
                    struct_size: UInt32(MemoryLayout<skill_descriptor>.size), id: text("halve"), title: text("Halve"),
                    description: text("Half of an even number."), input_schema: nil,
                    risk: UInt32(SKILL_RISK_READ_ONLY), flags: UInt32(SKILL_IDEMPOTENT), timeout_ms: 0, invoke: nil,
                    signature: text("int64 halve(int64 n, error error)"),
                    function: unsafeBitCast(halve, to: (@convention(c) () -> Void).self), output_schema: nil,
                    answer: nil, view: nil, audience: 0))
            return pointer
        }()

        private let plugin: UnsafeMutablePointer<skill_plugin> = {
            let pointer = UnsafeMutablePointer<skill_plugin>.allocate(capacity: 1)
            pointer.initialize(
                to: skill_plugin(
                    struct_size: UInt32(MemoryLayout<skill_plugin>.size), abi_major: UInt16(SKILL_ABI_MAJOR),
                    abi_minor: UInt16(SKILL_ABI_MINOR), name: text("halving"), version: text("1.0.0"),
                    description: text("A typed Swift skill that fails"), skill_count: 1,
                    skills: UnsafePointer(descriptors), init: nil, deinit: nil, free_string: nil, capabilities: 0,
                    read_paths: nil, snapshot: nil, view_count: 0, views: nil))
            return pointer
        }()

        @_cdecl("skill_plugin_entry")
        public func skillPluginEntry() -> UnsafePointer<skill_plugin>? { UnsafePointer(plugin) }
        """#
}
