import Testing
@testable import SkillJSON

@Test func debugParse() throws {
    let v = try JSONValue(parsing: #"{"a":"x","b":2}"#)
    let s = try JSONSchema(try JSONValue(parsing: #"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#))
    print("DEBUG", s.validate(v))
}
