import Foundation
import Testing

@testable import SkillJSON

/// Schemas written by strangers: what would recurse forever or blow up is refused when compiled, and what is
/// legal but costly is stopped by the validation budget or the caller's deadline.
struct SchemaHazardTests {
    func compileError(_ text: String) throws -> SchemaError? {
        let document = try JSONValue(parsing: text)
        do throws(SchemaError) {
            _ = try JSONSchema(document)
            return nil
        } catch {
            return error
        }
    }

    @Test func cyclesThatNeverReachTheValueAreRefusedWithTheirPath() throws {
        let selfReference = try #require(try compileError(##"{"type":"object","$ref":"#"}"##))
        #expect(
            selfReference.description
                == "subschemas refer to each other in a cycle that never moves into the value (# → #); a schema may "
                + "refer back to itself only below \"properties\", \"items\" or another keyword that moves into the value"
        )
        #expect(selfReference.isHazard)
        let pair = try #require(
            try compileError(
                ##"{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}}}"##))
        #expect(pair.reason.contains("(#/$defs/a → #/$defs/b → #/$defs/b/anyOf/0 → #/$defs/a)"), "\(pair)")
        #expect(pair.pointer == "/$defs/a")
    }

    @Test func recursionThroughPropertiesIsBoundedByTheValue() async throws {
        let schema = try JSONSchema(
            try JSONValue(
                parsing: ##"{"type":"object","properties":{"child":{"$ref":"#"}},"additionalProperties":false}"##))
        // 500 levels (the parser's limit is 512), validated on a task of the cooperative pool (small stacks).
        let deep = String(repeating: #"{"child":"#, count: 500) + "{}" + String(repeating: "}", count: 500)
        let value = try JSONValue(parsing: deep)
        let valid = await Task { schema.validate(value).isValid }.value
        #expect(valid)
        let wrong = String(repeating: #"{"child":"#, count: 300) + "7" + String(repeating: "}", count: 300)
        guard case .invalid(let issues) = schema.validate(try JSONValue(parsing: wrong)) else {
            Issue.record("a number where an object belongs passed")
            return
        }
        #expect(issues.first?.message == "expected object, got integer")
    }

    @Test func aSchemaThatBranchesExponentiallyIsRefused() throws {
        // 26 definitions, each an anyOf of two references to the next: 2^26 checks of one value.
        var definitions: [String] = []
        for index in 0..<26 {
            definitions.append(
                ##""d\##(index)":{"anyOf":[{"$ref":"#/$defs/d\##(index + 1)"},{"$ref":"#/$defs/d\##(index + 1)"}]}"##)
        }
        definitions.append(#""d26":{"type":"string"}"#)
        let text = ##"{"$ref":"#/$defs/d0","$defs":{"## + definitions.joined(separator: ",") + "}}"
        let error = try #require(try compileError(text))
        #expect(error.isHazard)
        #expect(
            error.reason
                == "checking one value here would apply over 100000 subschemas ($ref, anyOf, allOf and oneOf branches "
                + "multiply); simplify the schema")
    }

    @Test func catastrophicPatternsAreStoppedByTheBudget() throws {
        let schema = try JSONSchema(try JSONValue(parsing: #"{"type":"string","pattern":"(a*)*b"}"#))
        let subject = JSONValue.string(String(repeating: "a", count: 40))
        var options = ValidationOptions.lenient
        options.stepLimit = 20_000
        guard case .failure(let stopped) = schema.check(subject, options: options) else {
            Issue.record("the pattern matched")
            return
        }
        #expect(stopped.stop == .stepLimit(20_000))
        #expect(
            stopped.issues.summary
                == "$: checking this value against the schema took over 20000 steps; simplify the schema or the value")
        // The caller's deadline stops it as well.
        var deadlined = ValidationOptions.lenient
        deadlined.deadline = .now - .seconds(1)
        guard case .failure(let late) = schema.check(subject, options: deadlined) else {
            Issue.record("the pattern matched")
            return
        }
        #expect(late.stop == .deadline)
        // Ordinary patterns are unaffected.
        let ordinary = try JSONSchema(try JSONValue(parsing: #"{"type":"string","pattern":"^[a-z]+@[a-z]+$"}"#))
        #expect(ordinary.validate("me@example").isValid)
        #expect(!ordinary.validate("me at example").isValid)
    }

    @Test func manyPropertiesCompileAndValidateLinearly() throws {
        let count = 13_000
        let properties = (0..<count).map { #""p\#($0)":{"type":"integer"}"# }.joined(separator: ",")
        let start = ContinuousClock.now
        let schema = try JSONSchema(try JSONValue(parsing: #"{"type":"object","properties":{"# + properties + "}}"))
        let value = "{" + (0..<count).map { #""p\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        #expect(schema.validate(try JSONValue(parsing: value)).isValid)
        #expect(ContinuousClock.now - start < .seconds(30), "a generous cap: quadratic work would take minutes")
    }
}
