import Foundation
import Testing

@testable import SkillJSON

struct JSONParsingTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONValue(
            parsing: #" {"a": [1, -2.5, 1e3, true, false, null], "b": {"c": "d\n\u00e9\ud83d\ude00"}} "#)
        #expect(value["a"] == [1, -2.5, 1000, true, false, .null])
        #expect(value["b"]?["c"] == .string("d\né😀"))
    }

    @Test func keepsIntegerPrecision() throws {
        #expect(try JSONValue(parsing: "9007199254740993") == .int(9_007_199_254_740_993))
        #expect(try JSONValue(parsing: "-9223372036854775808") == .int(Int64.min))
        #expect(try JSONValue(parsing: "9223372036854775808") == .double(9_223_372_036_854_775_808))
        #expect(try JSONValue(parsing: "1.0") == .int(1))  // equal by value
    }

    @Test func aScalarsTextIsTheSameAloneAndInsideAnArray() {
        let scalars: [JSONValue] = [
            .null, true, false, .int(0), .int(Int64.min), .int(Int64.max), .double(3.75), .double(-0.1),
            .double(1e300), .double(60), .double(.infinity), .double(.nan),
        ]
        for scalar in scalars {
            #expect(JSONValue.array([scalar]).jsonText == "[\(scalar.jsonText)]", "\(scalar)")
        }
        #expect(JSONValue.double(.infinity).jsonText == "null")
    }

    @Test func aMemberIsFoundWhereverItIsWhenItIsNotWhereExpected() throws {
        guard case .object(let object) = try JSONValue(parsing: #"{"b":2,"a":1}"#) else {
            Issue.record("not an object")
            return
        }
        #expect(object.value("b", expectedAt: 0) == 2)
        #expect(object.value("a", expectedAt: 0) == 1)
        #expect(object.value("a", expectedAt: 7) == 1)
        #expect(object.value("c", expectedAt: 1) == nil)
    }

    @Test func serialisesCompactlyAndPrettily() throws {
        let value: JSONValue = ["b": 1, "a": ["x", 2.5, .null], "s": "q\"\\\n\u{1}"]
        #expect(value.jsonText == #"{"b":1,"a":["x",2.5,null],"s":"q\"\\\n\u0001"}"#)
        #expect(JSONValue.object(JSONObject()).prettyJSONText == "{}")
        #expect((["k": [1]] as JSONValue).prettyJSONText == "{\n  \"k\": [\n    1\n  ]\n}")
        #expect(JSONValue.double(60).jsonText == "60")
        #expect(JSONValue.double(0.1).jsonText == "0.1")
        #expect(try JSONValue(parsing: value.jsonText) == value)
    }

    /// Strings are copied in runs between the bytes that need escaping: every control byte, quote and backslash
    /// anywhere (first, last, back to back, between multi-byte characters) is escaped and nothing else changes.
    @Test func stringsEscapeEveryByteThatNeedsItWhereverItIs() throws {
        let cases: [(String, String)] = [
            ("", #""""#), ("plain", #""plain""#), ("\"", #""\"""#), ("\\\\", #""\\\\""#),
            ("\ta\u{7}é\n", #""\ta\u0007é\n""#), ("日本\r語\u{1F}", #""日本\r語\u001f""#),
            ("end\"", #""end\"""#), ("\u{0}x", #""\u0000x""#),
        ]
        for (string, text) in cases {
            #expect(JSONValue.string(string).jsonText == text, "\(string.debugDescription)")
            #expect(try JSONValue(parsing: text) == .string(string))
        }
    }

    /// JSON Pointer tokens of the schema compiler: "~" and "/" escaped (RFC 6901), everything else as it is.
    @Test func pointerTokensEscapeTildeAndSlashOnly() {
        let cases = [("plain", "plain"), ("a/b~c", "a~1b~0c"), ("~/", "~0~1"), ("é/日", "é~1日"), ("", "")]
        for (token, escaped) in cases { #expect(SchemaCompiler.escapePointerToken(token) == escaped) }
    }

    @Test(arguments: [
        ("", "invalid JSON at byte 0: unexpected end of input, expected a value"),
        ("{\"a\" 1}", "invalid JSON at byte 5: expected ':' after member name \"a\""),
        ("[1,]", "invalid JSON at byte 3: unexpected character ']', expected a value"),
        ("{\"a\":1 \"b\":2}", "invalid JSON at byte 7: expected ',' or '}' after an object member"),
        ("\"abc", "invalid JSON at byte 4: unterminated string"),
        ("01", "invalid JSON at byte 1: leading zero in number"),
        ("1 2", "invalid JSON at byte 2: unexpected content after the JSON value"),
        ("tru", "invalid JSON at byte 0: invalid literal, expected 'true'"),
        ("\"\\x\"", "invalid JSON at byte 2: invalid escape '\\x' in string"),
        ("\"\\ud800\"", "invalid JSON at byte 7: lone surrogate \\ud800 in string"),
        (#"{"expression":"6*7","expression":"1+1"}"#, #"invalid JSON at byte 20: duplicate member name "expression""#),
    ])
    func rejectsMalformedText(text: String, message: String) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: text) }
        do {
            _ = try JSONValue(parsing: text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func rejectsInvalidUTF8AndDeepNesting() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: JSONParseError(reason: "nesting deeper than 512 levels", offset: 512)) {
            try JSONValue(parsing: deep)
        }
    }

    @Test func comparesNumbersExactly() throws {
        let min = JSONValue.int(.min)
        #expect(JSONValue.compareNumbers(min, .int(.min + 1)) == -1, "-2^63 is below -2^63 + 1")
        #expect(JSONValue.compareNumbers(min, .double(-9_223_372_036_854_775_808.0)) == 0)
        #expect(JSONValue.compareNumbers(.int(9_007_199_254_740_993), .double(9_007_199_254_740_992)) == 1)
        #expect(JSONValue.compareNumbers(.int(2), .double(2.5)) == -1)
        #expect(JSONValue.compareNumbers(.double(-2.5), .int(-2)) == -1)
        #expect(JSONValue.compareNumbers(.int(.max), .double(9_223_372_036_854_775_808.0)) == -1)
        #expect(JSONValue.compareNumbers(.double(.nan), .int(1)) == nil)
        let schema = try JSONSchema(try JSONValue(parsing: #"{"type":"integer","minimum":-9223372036854775807}"#))
        guard case .invalid(let issues) = schema.validate(min) else {
            Issue.record("-2^63 passed a minimum of -2^63 + 1")
            return
        }
        #expect(issues.summary == "$: must be >= -9223372036854775807, got -9223372036854775808")
    }

    @Test func comparesStringsByCodePoints() throws {
        #expect(JSONValue.string("\u{e9}") != JSONValue.string("e\u{301}"))
        #expect((["a": 1, "b": 2] as JSONValue) == (["b": 2, "a": 1] as JSONValue))
        // Member names too: two spellings of "é" are two members, in small and in indexed objects.
        let names = ["\u{e9}", "e\u{301}"] + (0..<20).map { "k\($0)" }
        for count in [2, names.count] {
            let text = "{" + names.prefix(count).map { #""\#($0)":1"# }.joined(separator: ",") + "}"
            #expect(try JSONValue(parsing: text).objectValue?.count == count)
        }
    }

    /// Objects stay linear in their size: 100,000 members are parsed (duplicates checked), read, compared and
    /// rebuilt member by member. Quadratic work would take minutes; the cap is generous for a busy machine, and the
    /// benchmark measures the real figure.
    @Test func largeObjectsAreLinear() throws {
        let count = 100_000
        let text = "{" + (0..<count).map { #""key\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        let start = ContinuousClock.now
        let value = try JSONValue(parsing: text)
        #expect(value["key99999"] == .int(99_999))
        var rebuilt = JSONObject()
        for member in value.objectValue?.members.reversed() ?? [] { rebuilt[member.key] = member.value }
        #expect(JSONValue.object(rebuilt) == value)
        rebuilt["key5"] = nil
        #expect(rebuilt["key5"] == nil && rebuilt["key6"] == .int(6) && rebuilt.count == count - 1)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: String(text.dropLast()) + #","key7":0}"#) }
        #expect(ContinuousClock.now - start < .seconds(30))
    }
}

struct ValidationMessageTests {
    let schema: JSONSchema

    init() throws {
        schema = try JSONSchema(
            try JSONValue(
                parsing: """
                    {"type":"object","properties":{
                      "expression":{"type":"string","minLength":1,"maxLength":5},
                      "count":{"type":"integer","minimum":1,"maximum":10},
                      "ratio":{"type":"number","exclusiveMinimum":0},
                      "unit":{"enum":["c","f","k"]},
                      "flag":{"type":"boolean"},
                      "tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"maxItems":2},
                      "maybe":{"type":["string","null"]},
                      "mode":{"type":"string","default":"fast"}
                    },"required":["expression"],"additionalProperties":false}
                    """))
    }

    func message(_ json: String) throws -> String {
        switch schema.validate(try JSONValue(parsing: json)) {
        case .valid(let value): return "valid \(value.jsonText)"
        case .invalid(let issues): return issues.summary
        }
    }

    @Test func namesThePathAndTheProblem() throws {
        #expect(try message(#"{"expression":5}"#) == "$.expression: expected string, got integer")
        #expect(try message(#"{"expression":"1","count":2.5}"#) == "$.count: expected integer, got number")
        #expect(try message(#"{}"#) == #"$: missing required property "expression""#)
        #expect(try message(#"{"expression":""}"#) == "$.expression: must be at least 1 character long, got 0")
        #expect(try message(#"{"expression":"123456"}"#) == "$.expression: must be at most 5 characters long, got 6")
        #expect(try message(#"{"expression":"1","count":11}"#) == "$.count: must be <= 10, got 11")
        #expect(try message(#"{"expression":"1","ratio":0}"#) == "$.ratio: must be > 0, got 0")
        #expect(try message(#"{"expression":"1","unit":"x"}"#) == #"$.unit: must be one of "c", "f", "k", got "x""#)
        #expect(try message(#"{"expression":"1","tags":["ok","NO"]}"#) == "$.tags[1]: must match the pattern ^[a-z]+$")
        #expect(try message(#"{"expression":"1","tags":["a","b","c"]}"#) == "$.tags: must have at most 2 items, got 3")
        #expect(try message(#"{"expression":"1","maybe":3}"#) == "$.maybe: expected string or null, got integer")
        #expect(
            try message(#"{"expresion":"1"}"#)
                == #"$: missing required property "expression"; $: unknown property "expresion" (did you mean "expression"?)"#
        )
        #expect(
            try message(#"{"expression":"1","zzz":1}"#).hasPrefix(
                #"$: unknown property "zzz" (allowed: "expression", "count""#))
        #expect(try message("[]") == "$: expected object, got array")
    }

    @Test func coercesWhatModelsGetWrongAndFillsDefaults() throws {
        #expect(
            try message(#"{"expression":"1","count":"3","flag":"true","ratio":" 0.5"}"#)
                == #"valid {"expression":"1","count":3,"flag":true,"ratio":0.5,"mode":"fast"}"#)
        #expect(try message(#"{"expression":"1","count":"3.5"}"#) == "$.count: expected integer, got string")
        // null for an optional property that does not allow null is as if absent (its default applies); where
        // null is allowed it stays, and a required property given as null is still an error.
        #expect(
            try message(#"{"expression":"1","mode":null,"count":null,"maybe":null}"#)
                == #"valid {"expression":"1","maybe":null,"mode":"fast"}"#)
        #expect(try message(#"{"expression":null}"#) == "$.expression: expected string, got null")
        let strictNull = schema.validate(try JSONValue(parsing: #"{"expression":"1","count":null}"#), options: .strict)
        #expect(strictNull == .invalid([ValidationIssue(path: "$.count", message: "expected integer, got null")]))
        let strict = schema.validate(try JSONValue(parsing: #"{"expression":"1","count":"3"}"#), options: .strict)
        #expect(strict == .invalid([ValidationIssue(path: "$.count", message: "expected integer, got string")]))
    }

    @Test func rejectsMalformedSchemasWithThePointer() throws {
        #expect(throws: SchemaError(pointer: "/properties/a", reason: "\"minimum\" must be a number, got string")) {
            try JSONSchema(try JSONValue(parsing: #"{"properties":{"a":{"minimum":"1"}}}"#))
        }
        #expect(throws: SchemaError.self) { try JSONSchema(try JSONValue(parsing: #"{"$ref":"http://elsewhere/x"}"#)) }
        #expect(throws: SchemaError.self) { try JSONSchema(try JSONValue(parsing: #"{"type":"text"}"#)) }
    }

    @Test func quotesUnusualKeysInPaths() throws {
        let schema = try JSONSchema(try JSONValue(parsing: #"{"properties":{"a b":{"type":"string"}}}"#))
        #expect(
            schema.validate(try JSONValue(parsing: #"{"a b":1}"#))
                == .invalid([ValidationIssue(path: #"$["a b"]"#, message: "expected string, got integer")]))
    }
}

/// The parser's fast path for common numbers reads exactly what `strtod` reads.
struct NumberParsingTests {
    static func strtodValue(_ text: String) -> Double { text.withCString { strtod($0, nil) } }

    @Test func theFastPathAgreesWithStrtodBitForBit() throws {
        var generator = SystemRandomNumberGenerator()
        var texts = [
            "1.5", "2.25", "-0.0", "0.1", "0.3", "123.456e2", "1e22", "1e-22", "9007199254740993.0", "0.000123",
            "-17.25E+3", "999999999999999.9", "1.000000000000000000", "4.35", "0.0000000000000000000001", "1e23",
        ]
        for _ in 0..<20_000 {
            let digits = Int.random(in: 1...17, using: &generator)
            let mantissa = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            let point = Int.random(in: 1...digits, using: &generator)
            let whole = String(mantissa.prefix(point).drop { $0 == "0" })  // JSON allows no leading zero
            var text = (whole.isEmpty ? "0" : whole) + "." + String(mantissa.dropFirst(point) + "0")
            if Bool.random(using: &generator) { text = "-" + text }
            if Int.random(in: 0...2, using: &generator) == 0 {
                text += "e\(Int.random(in: -30...30, using: &generator))"
            }
            texts.append(text)
        }
        var fast = 0
        for text in texts {
            let parsed = try JSONValue(parsing: text)
            let expected = Self.strtodValue(text)
            guard case .double(let value) = parsed else {
                Issue.record("\(text) did not parse as a double: \(parsed)")
                continue
            }
            #expect(value.bitPattern == expected.bitPattern, "\(text): \(value) against strtod's \(expected)")
            if text.utf8.withContiguousStorageIfAvailable({ JSONParser.exactDouble($0) }) != nil { fast += 1 }
        }
        #expect(fast > 5_000, "most of these take the fast path")
    }
}
