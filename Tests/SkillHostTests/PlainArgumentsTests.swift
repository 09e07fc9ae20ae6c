import Foundation
import TestSupport
import Testing

@testable import SkillHost
@testable import SkillJSON

/// Plain argument text goes straight into a typed skill's C slots; everything else takes the general way. The two
/// must never disagree: same result, same code, same sentence.
struct PlainArgumentsTests {
    let registry: SkillRegistry

    init() throws {
        registry = try makeRegistry()
        _ = try registry.load(file: try Fixture.compileFile("typed.c")).get()
    }

    func typedFunction(_ id: String) -> TypedFunction? {
        guard case .plugin(let skill)? = registry.catalog.entry(id), case .typed(let function) = skill.implementation
        else { return nil }
        return function
    }

    /// (skill, text, read plainly?)
    static let cases: [(String, String, Bool)] = [
        ("add", #"{"a":1.5,"b":2.25}"#, true),
        ("add", #"{"b":2,"a":1}"#, true),
        ("add", " \n{ \"a\" : 1e3 ,\t\"b\":-0.5 } \r\n", true),
        ("add", #"{"a":0.1,"b":123456789012345678901234567890}"#, true),
        ("add", #"{"a":-0,"b":9007199254740993}"#, true),
        ("add", #"{"a":1e400,"b":1}"#, true),
        ("add", "{\"a\":" + String(repeating: "9", count: 5000) + ",\"b\":1}", true),
        ("add", String(repeating: " ", count: 100_000) + #"{"a":1,"b":2}"#, true),
        ("add", String(repeating: "[", count: 10_000), false),
        ("add", #"{"a":"2","b":1}"#, false),
        ("add", #"{"a":1}"#, false),
        ("add", #"{"a":1,"b":2,"c":3}"#, false),
        ("add", #"{"a":1,"a":2,"b":3}"#, false),
        ("add", #"{"a":1,"b":2}x"#, false),
        ("add", #"{"a":1,"b":2,}"#, false),
        ("add", #"{"a":01,"b":2}"#, false),
        ("add", #"{"\u0061":1,"b":2}"#, false),
        ("add", "", false),
        ("add", "[1,2]", false),
        ("negate32", #"{"x":2147483647}"#, true),
        ("negate32", #"{"x":-2147483648}"#, true),
        ("negate32", #"{"x":2147483648}"#, false),
        ("negate32", #"{"x":3.0}"#, false),
        ("negate32", #"{"x":3.5}"#, false),
        ("negate32", #"{"x":"7"}"#, false),
        ("twice64", #"{"x":4611686018427387903}"#, true),
        ("twice64", #"{"x":9223372036854775808}"#, false),
        ("twice64", #"{"x":1e2}"#, false),
        ("invert", #"{"b":true}"#, true),
        ("invert", #"{"b":false}"#, true),
        ("invert", #"{"b":tru}"#, false),
        ("invert", #"{"b":truex}"#, false),
        ("invert", #"{"b":"true"}"#, false),
        ("invert", #"{"b":1}"#, false),
        ("upper", #"{"s":"héllo wörld"}"#, true),
        ("upper", #"{"s":""}"#, true),
        ("upper", #"{"s":"a\"b"}"#, false),
        ("upper", #"{"s":"a\u0000b"}"#, false),
        ("upper", "{\"s\":\"tab\there\"}", false),
        ("upper", #"{"s":"unterminated}"#, false),
        ("upper", #"{"s":null}"#, false),
        ("mixed", #"{"a":1,"b":0.5,"c":10,"d":true,"e":"abc"}"#, true),
        ("mixed", #"{"e":"abc","d":false,"c":-10,"b":2,"a":-1}"#, true),
        ("mixed", #"{"a":1,"b":0.5,"c":10,"d":true,"e":7}"#, false),
        // A string already copied when the text turns out not to be plain (it is freed with the slots).
        ("mixed", #"{"e":"abc","a":1,"b":0.5,"c":10,"d":"yes"}"#, false),
        ("nothing", "", true),
        ("nothing", " \t", true),
        ("nothing", "{}", true),
        ("nothing", "{ }", true),
        ("nothing", #"{"x":1}"#, false),
        ("not_a_number", "{}", true),
    ]

    @Test func theReaderTakesExactlyThePlainTexts() throws {
        for (id, text, plain) in Self.cases {
            let function = try #require(typedFunction(id), "\(id) is a typed skill of the fixture")
            #expect((function.call(plainText: text) != nil) == plain, "\(id) \(text)")
        }
    }

    /// A call with a listener on its start takes the general way (parse, validate, convert): the plain call's
    /// outcome must be the same in every part a caller sees.
    @Test func plainAndGeneralCallsAgreeOnEveryOutcome() async throws {
        let registry = registry
        for (id, text, _) in Self.cases {
            let (plain, general) = try await offPool {
                var seen = SkillInvocation(skill: id, argumentText: text)
                seen.onStart = { _ in }
                return (
                    registry.invokeOnCurrentThread(SkillInvocation(skill: id, argumentText: text)),
                    registry.invokeOnCurrentThread(seen)
                )
            }
            #expect(plain.status == general.status, "\(id) \(text)")
            #expect(plain.code == general.code, "\(id) \(text)")
            #expect(plain.result == general.result, "\(id) \(text)")
            #expect(plain.failure?.message == general.failure?.message, "\(id) \(text)")
        }
    }

    /// A declared schema may say more than the signature (a bound here): its skill is never read plainly.
    @Test func aDeclaredSchemaIsAlwaysChecked() async throws {
        let registry = try makeRegistry()
        let source = """
            #include "skill_sdk.h"
            static int half(int x) { return x / 2; }
            static const skill_descriptor skills[] = {
                SKILL_TYPED_SCHEMA("half", "Half", "Halves a non-negative number.",
                    "{\\"type\\":\\"object\\",\\"properties\\":{\\"x\\":{\\"type\\":\\"integer\\",\\"minimum\\":0}},"
                    "\\"required\\":[\\"x\\"]}", "int32 half(int32 x)", half),
            };
            SKILL_PLUGIN("bounded", "1.0.0", "a typed skill with a declared schema", skills)
            """
        _ = try registry.load(file: try Fixture.compile(source, name: "bounded")).get()
        let (below, fine) = try await offPool {
            (
                registry.invokeOnCurrentThread("half", arguments: #"{"x":-4}"#),
                registry.invokeOnCurrentThread("half", arguments: #"{"x":8}"#)
            )
        }
        #expect(below.code == .invalidArguments, "\(below)")
        #expect(fine.result == .int(4))
    }
}
