import Foundation
import Testing

@testable import SkillJSON

/// The official JSON-Schema-Test-Suite (draft 2020-12) cases for the keywords skills use.
///
/// Strict mode must pass every case except the groups listed in `unsupported` (they need documents from the
/// network or keywords outside the subset). Lenient mode may differ from strict mode only where a string holds a
/// number or boolean that the schema wants as such — the coercion models need.
struct ConformanceTests {
    struct Case {
        let file: String
        let group: String
        let test: String
        let schema: JSONValue
        let data: JSONValue
        let valid: Bool
    }

    /// Groups that need remote documents or keywords outside the supported subset.
    static let unsupported: Set<String> = [
        "remote ref, containing refs itself",  // fetches the draft 2020-12 metaschema
        "validate definition against metaschema",  // idem
        "ref creates new scope when adjacent to keywords",  // unevaluatedProperties
        "collect annotations inside a 'not', even if collection is disabled",  // unevaluatedProperties
    ]

    static func loadCases() throws -> [Case] {
        let folder = try #require(Bundle.module.url(forResource: "Conformance/draft2020-12", withExtension: nil))
        var cases: [Case] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        where file.hasSuffix(".json") {
            let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            for group in try #require(try JSONValue(parsing: text).arrayValue) {
                let groupName = try #require(group["description"]?.stringValue)
                for test in try #require(group["tests"]?.arrayValue) {
                    cases.append(
                        Case(
                            file: file, group: groupName, test: try #require(test["description"]?.stringValue),
                            schema: try #require(group["schema"]), data: try #require(test["data"]),
                            valid: test["valid"] == .bool(true)))
                }
            }
        }
        return cases
    }

    @Test func strictModePassesTheSuite() throws {
        let cases = try Self.loadCases()
        #expect(cases.count > 500)
        var failures: [String] = []
        var ran = 0
        for testCase in cases where !Self.unsupported.contains(testCase.group) {
            ran += 1
            do {
                let schema = try JSONSchema(testCase.schema)
                let result = schema.validate(testCase.data, options: .strict)
                if result.isValid != testCase.valid {
                    failures.append(
                        "\(testCase.file) / \(testCase.group) / \(testCase.test): expected \(testCase.valid)")
                }
            } catch {
                failures.append("\(testCase.file) / \(testCase.group): schema rejected: \(error)")
            }
        }
        #expect(failures == [], "\(failures.count) of \(ran) cases failed")
        #expect(ran >= cases.count - 10)
    }

    @Test func lenientModeDiffersOnlyByCoercion() throws {
        for testCase in try Self.loadCases() where !Self.unsupported.contains(testCase.group) {
            let schema = try JSONSchema(testCase.schema)
            let strict = schema.validate(testCase.data, options: .strict).isValid
            let lenient = schema.validate(testCase.data, options: .lenient).isValid
            guard strict != lenient else { continue }
            // The only permitted differences: lenient accepts a numeric or boolean string somewhere in the data, or
            // a null member of an object (an optional property given as null counts as absent).
            #expect(
                !strict && lenient
                    && (Self.containsCoercibleString(testCase.data) || Self.containsNullMember(testCase.data)),
                "\(testCase.file) / \(testCase.group) / \(testCase.test)")
        }
    }

    static func containsNullMember(_ value: JSONValue) -> Bool {
        switch value {
        case .array(let elements): return elements.contains(where: containsNullMember)
        case .object(let object): return object.members.contains { $0.value == .null || containsNullMember($0.value) }
        default: return false
        }
    }

    static func containsCoercibleString(_ value: JSONValue) -> Bool {
        switch value {
        case .string(let s):
            return ["true", "false"].contains(s.lowercased()) || (try? JSONValue(parsing: s))?.doubleValue != nil
        case .array(let elements): return elements.contains(where: containsCoercibleString)
        case .object(let object): return object.members.contains { containsCoercibleString($0.value) }
        default: return false
        }
    }
}
