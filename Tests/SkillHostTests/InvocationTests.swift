import Foundation
import Synchronization
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Typed skills through libffi and JSON skills through `invoke`, via the registry.
struct TypedSkillTests {
    let registry: SkillRegistry

    init() throws {
        registry = try makeRegistry()
        let file = try Fixture.compileFile("typed.c")
        _ = try registry.load(file: file).get()
    }

    func call(_ id: String, _ arguments: String) async -> SkillOutcome {
        await registry.invoke(id, arguments: arguments)
    }

    /// The quick check that lets a typed call skip the validator agrees with it: whatever it accepts, lenient
    /// validation against the generated schema accepts unchanged.
    @Test func theQuickSignatureCheckNeverAcceptsWhatTheValidatorWouldChangeOrRefuse() throws {
        let values: [JSONValue] = try [
            "{}", #"{"a":1.5,"b":2}"#, #"{"a":1,"b":2}"#, #"{"a":"1.5","b":2}"#, #"{"a":1.5}"#, #"{"a":1,"b":2,"c":3}"#,
            #"{"x":2147483647}"#, #"{"x":2147483648}"#, #"{"x":-2147483648}"#, #"{"x":2.0}"#, #"{"x":2.5}"#,
            #"{"x":"7"}"#, #"{"b":true}"#, #"{"b":"true"}"#, #"{"b":1}"#, #"{"s":"héllo"}"#, #"{"s":null}"#,
            #"{"a":1,"b":0.5,"c":10,"d":true,"e":"abc"}"#, #"{"a":1,"b":0.5,"c":10,"d":true,"e":7}"#, "[]", "3",
        ].map { try JSONValue(parsing: $0) }
        var accepted = 0
        for entry in registry.catalog.ids.compactMap({ registry.catalog.entry($0) }) {
            guard case .plugin(let skill) = entry, case .typed(let function) = skill.implementation,
                skill.info.schemaIsGenerated
            else { continue }
            for value in values where function.acceptsAsGiven(value) {
                accepted += 1
                guard case .success(nil) = skill.schema.check(value, options: .lenient) else {
                    Issue.record("\(skill.info.id) accepted \(value.jsonText) quickly, but the validator does not")
                    continue
                }
            }
        }
        #expect(accepted >= 8, "the quick check takes the common calls")
        // What it does not take still gets the validator's coercions and messages.
        let coerced = try JSONValue(parsing: #"{"x":"7"}"#)
        guard case .plugin(let negate)? = registry.catalog.entry("negate32"),
            case .typed(let function) = negate.implementation
        else {
            Issue.record("negate32 is not a typed skill")
            return
        }
        #expect(!function.acceptsAsGiven(coerced))
    }

    @Test func callsEveryTypeExactly() async {
        #expect(await call("add", #"{"a":1.5,"b":2}"#).result == .double(3.5))
        #expect(await call("negate32", #"{"x":-2147483647}"#).result == .int(2_147_483_647))
        #expect(await call("twice64", #"{"x":4611686018427387903}"#).result == .int(9_223_372_036_854_775_806))
        #expect(await call("invert", #"{"b":false}"#).result == .bool(true))
        #expect(await call("nothing", "").result == .null)
        #expect(await call("mixed", #"{"a":1,"b":0.5,"c":10,"d":true,"e":"abc"}"#).result == .double(1014.5))
    }

    @Test func copiesStringResultsAndReleasesThem() async {
        let before = await call("free_count", "{}").result
        #expect(await call("upper", #"{"s":"héllo"}"#).result == .string("HéLLO"))
        let after = await call("free_count", "{}").result
        #expect(after?.doubleValue == (before?.doubleValue ?? -1) + 1)
    }

    @Test func rejectsInexactArgumentsNamingThem() async {
        let fraction = await call("twice64", #"{"x":2.5}"#)
        #expect(fraction.status == .invalidArgs)
        #expect(fraction.error == "$.x: expected integer, got number")
        let range = await call("negate32", #"{"x":2147483648}"#)
        #expect(range.error == "$.x: must be <= 2147483647, got 2147483648")
        let type = await call("invert", #"{"b":"maybe"}"#)
        #expect(type.error == "$.b: expected boolean, got string")
        let extra = await call("add", #"{"a":1,"b":2,"c":3}"#)
        #expect(extra.error == #"$: unknown property "c" (allowed: "a", "b")"#)
        #expect(await call("add", #"{"a":"1.5","b":"2"}"#).result == .double(3.5))  // lenient coercion
    }

    @Test func conversionChecksEvenWhenTheSchemaIsLoose() {
        var slot: UInt64 = 0
        withUnsafeMutableBytes(of: &slot) { buffer in
            let pointer = buffer.baseAddress!
            #expect(
                TypedFunction.store(.double(2.5), as: .int64, into: pointer)
                    == .failure(ArgumentReason("expected an integer, got 2.5")))
            #expect(
                TypedFunction.store(.double(1e19), as: .int64, into: pointer)
                    == .failure(
                        ArgumentReason("must be between -9223372036854775808 and 9223372036854775807, got 1e+19")))
            #expect(
                TypedFunction.store(.int(1 << 40), as: .int32, into: pointer)
                    == .failure(ArgumentReason("must be between -2147483648 and 2147483647, got 1099511627776")))
            #expect(TypedFunction.store(.double(3.0), as: .int32, into: pointer) == .success(nil))
        }
        #expect(slot == 3)
    }

    @Test func nonFiniteResultsAreErrors() async {
        let outcome = await call("not_a_number", "{}")
        #expect(outcome.status == .error)
        #expect(outcome.error == "result is not a finite number (nan)")
    }

    @Test func generatesSchemasFromSignatures() throws {
        let info = try #require(registry.skill("mixed"))
        #expect(info.schemaIsGenerated)
        #expect(info.kind == .typed(signature: "double mixed(int32 a, double b, int64 c, bool d, string e)"))
        #expect(
            info.inputSchema.jsonText
                == #"{"type":"object","properties":{"a":{"type":"integer","minimum":-2147483648,"maximum":2147483647},"#
                + #""b":{"type":"number"},"c":{"type":"integer"},"d":{"type":"boolean"},"e":{"type":"string"}},"#
                + #""required":["a","b","c","d","e"],"additionalProperties":false}"#)
        #expect(info.argumentSummary == "a: integer, b: number, c: integer, d: boolean, e: string")
    }
}

struct SignatureTests {
    @Test func parsesSignatures() throws {
        let signature = try TypedSignature.parse("  double  f ( double a ,int64 b_2 ) ")
        #expect(
            signature
                == TypedSignature(
                    returnType: .double, name: "f",
                    parameters: [.init(name: "a", type: .double), .init(name: "b_2", type: .int64)]))
        #expect(try TypedSignature.parse("void g(void)").parameters.isEmpty)
        #expect(try TypedSignature.parse("string h()").returnType == .string)
    }

    @Test(arguments: [
        (
            "float f(double x)",
            #"unknown type "float" (use bool, int32, int64, double or string; void only as a return type; error only as the last parameter)"#
        ),
        ("double f(double)", "expected a parameter name after double, found ')' at 16"),
        ("double f(double x", "expected ')', found the end"),
        ("double (double x)", "expected the function name, found '(' at 8"),
        ("double f(double x, double x)", #"parameter name "x" appears twice"#),
        ("double f(void x)", "a parameter cannot be void"),
        ("double f(double x) extra", #"unexpected text after ')': "extra""#),
    ])
    func explainsBadSignatures(text: String, message: String) {
        #expect(throws: SignatureError.self) { try TypedSignature.parse(text) }
        do { _ = try TypedSignature.parse(text) } catch { #expect(error.description == message) }
    }
}

struct JSONSkillTests {
    let registry: SkillRegistry

    init() throws {
        registry = try makeRegistry(timeout: .seconds(5))
        _ = try registry.load(file: try Fixture.compileFile("behaviours.c")).get()
    }

    @Test func passesValidatedArgumentsAndReadsJSONResults() async {
        let outcome = await registry.invoke("echo", arguments: #"{"n": "5", "s": [1, {"x": null}]}"#)
        #expect(outcome.status == .ok)
        #expect(outcome.result == ["n": "5", "s": [1, ["x": .null]]])
        #expect(
            outcome.envelope.jsonText.hasPrefix(#"{"status":"ok","result":{"n":"5","s":[1,{"x":null}]},"duration_ms":"#)
        )
    }

    @Test func plainTextResultsBecomeStrings() async {
        #expect(await registry.invoke("plain_text", arguments: "{}").result == .string("hello, world"))
    }

    @Test func passesStateAndSkillID() async {
        #expect(await registry.invoke("whoami", arguments: "{}").result == .string("whoami:state-ok"))
    }

    @Test func reportsErrorsWithTheirWords() async {
        let failed = await registry.invoke("fail", arguments: "{}")
        #expect(failed.status == .error)
        #expect(failed.error == "the disk is full")
        #expect(failed.envelope.jsonText.hasPrefix(#"{"status":"error","error":"the disk is full","duration_ms":"#))
        let silent = await registry.invoke("fail_silently", arguments: "{}")
        #expect(silent.error == "the skill is unavailable (no message given)")
        let rejected = await registry.invoke("reject", arguments: "{}")
        #expect(rejected.status == .invalidArgs)
        #expect(rejected.error == "$.n: must be even")
        let garbage = await registry.invoke("bad_utf8", arguments: "{}")
        #expect(
            garbage.error == "bad_utf8 returned a result that is not valid UTF-8; results must be UTF-8 text or JSON")
    }

    @Test func recordsUndo() async {
        let outcome = await registry.invoke("undoable", arguments: "{}")
        #expect(outcome.undo == UndoAction(skillID: "echo", arguments: ["restore": 1]))
        #expect(outcome.envelope["undo"] == ["skill": "echo", "arguments": ["restore": 1]])
    }

    @Test func forwardsProgress() async {
        let seen = Mutex<[SkillProgress]>([])
        let outcome = await registry.invoke("progress", arguments: "{}") { progress in
            seen.withLock { $0.append(progress) }
        }
        #expect(outcome.result == .int(3))
        #expect(seen.withLock { $0 } == (1...3).map { SkillProgress(done: Double($0), total: 3, message: "step") })
    }

    @Test func rejectsBadArgumentsBeforeAnyPluginCode() async {
        let notJSON = await registry.invoke("echo", arguments: "{nope")
        #expect(notJSON.status == .invalidArgs)
        #expect(
            notJSON.error
                == "arguments are not valid JSON: invalid JSON at byte 1: expected a member name in double quotes")
        let array = await registry.invoke("echo", arguments: "[1]")
        #expect(array.error == "$: expected object, got array")
        let unknown = await registry.invoke("ecko", arguments: "{}")
        #expect(unknown.status == .error)
        #expect(unknown.error == #"unknown skill "ecko" (did you mean "echo"?)"#)
    }
}

/// Skills from another program (an MCP server) with hostile schemas.
struct ExternalSchemaTests {
    static func info(_ id: String, _ schema: String) throws -> SkillInfo {
        SkillInfo(
            id: id, title: id, description: id, plugin: "mcp:x", pluginVersion: "1", file: "mcp server x",
            risk: .readOnly, flags: [], timeout: nil, inputSchema: try JSONValue(parsing: schema),
            schemaIsGenerated: false, kind: .external)
    }

    /// A tool whose schema would recurse forever is skipped with a sentence (it used to crash the host on the first
    /// call); a tool whose schema merely uses something unsupported is kept, its arguments unchecked.
    @Test func aToolWithACyclicSchemaIsSkipped() async throws {
        let registry = try makeRegistry()
        let skipped = registry.registerExternal(
            source: "mcp:x", version: "1", description: "", location: "mcp server x",
            skills: [
                ExternalSkill(info: try Self.info("loops", ##"{"type":"object","$ref":"#"}"##)) { _ in
                    .success(.null)
                },
                ExternalSkill(info: try Self.info("remote", #"{"$ref":"https://example.com/s.json"}"#)) { _ in
                    SkillOutcome.success("ran")
                },
            ])
        #expect(
            skipped == [
                "loops: its input schema cannot be used: subschemas refer to each other in a cycle that never moves "
                    + "into the value (# → #); a schema may refer back to itself only below \"properties\", \"items\" "
                    + "or another keyword that moves into the value"
            ])
        #expect(registry.skill("loops") == nil)
        #expect(await registry.invoke("remote", arguments: #"{"a":1}"#).result == "ran")
    }
}
