import Testing

@testable import SkillFolders

/// Front matter is read in time linear in its size (2,040 keys under one mapping cost 0.3 s each: the mapping was
/// copied for every key, and every key compared with all before it), with the same answers as before.
struct YAMLReaderTests {
    @Test func manyKeysAreReadWholeAndInOrder() throws {
        let keys = (0..<2040).map { "  k\($0): value \($0)\n" }.joined()
        let read = try YAMLReader.read("name: big\nmetadata:\n" + keys, strict: true).get()
        guard case .map(let top)? = read, case .map(let metadata)? = top.first(where: { $0.key == "metadata" })?.value
        else {
            Issue.record("not a mapping of a mapping: \(String(describing: read))")
            return
        }
        #expect(metadata.count == 2040)
        #expect(metadata.first?.key == "k0" && metadata.last?.key == "k2039")
        #expect(metadata.last?.value == .text("value 2039"))
    }

    @Test func aKeyTwiceIsStillRefusedWhereverItIs() {
        let nested = YAMLReader.read("metadata:\n  a: 1\n  b: 2\n  a: 3\n", strict: true)
        guard case .failure(let problem) = nested else {
            Issue.record("a duplicate key was accepted")
            return
        }
        #expect(problem.message == "has the key \"a\" twice")
        #expect(YAMLReader.read("list:\n  - a: 1\n    a: 2\n", strict: true).isFailure)
        #expect(!YAMLReader.read("one:\n  a: 1\ntwo:\n  a: 1\n", strict: true).isFailure, "one key per mapping")
    }
}

extension Result {
    var isFailure: Bool {
        if case .failure = self { return true }
        return false
    }
}

/// A name that breaks the specification's rules gets a suggestion that keeps all of them ("Bad_Skill" was told
/// "bad_skill", itself refused for its "_").
struct SkillNameSuggestionTests {
    @Test func theSuggestedNameKeepsEveryRule() {
        #expect(
            SkillFolderCheck.nameProblems("Bad_Skill", file: "SKILL.md") == [
                #"SKILL.md: the name "Bad_Skill" must be lowercase, such as "bad-skill""#,
                #"SKILL.md: the name "Bad_Skill" may hold only letters, digits and "-", such as "bad-skill""#,
            ])
        #expect(
            SkillFolderCheck.nameProblems("-pdf--tools-", file: "SKILL.md") == [
                #"SKILL.md: the name "-pdf--tools-" must not start or end with "-", such as "pdf-tools""#,
                #"SKILL.md: the name "-pdf--tools-" must not hold "--"; use single hyphens, such as "pdf-tools""#,
            ])
        for name in ["Bad_Skill", "-pdf--tools-", "A  B", "x.y.z"] {
            let suggested = SkillFolderCheck.validName(from: name) ?? ""
            #expect(SkillFolderCheck.nameProblems(suggested, file: "f").isEmpty, "\(name) → \(suggested)")
        }
    }
}
