import Foundation
import TestSupport
import Testing

@testable import SkillFolders

/// How skill folders are found: by precedence of scope (a project's skill overrides the user's of the same name,
/// said once), a shadowed one within a scope said, a folder that cannot be loaded said and the others kept.
struct SkillFolderScanTests {
    let root = Paths.temporaryDirectory("skill-scan")

    func write(_ folder: String, name: String, description: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try "---\nname: \(name)\ndescription: \(description)\n---\n# \(name)\n".write(
            toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
    }

    @Test func aProjectsSkillOverridesTheUsersAndABrokenFolderIsSaid() throws {
        try write(root + "/user/pdf", name: "pdf", description: "The user's PDF skill.")
        try write(root + "/user/notes", name: "notes", description: "Notes.")
        try write(root + "/project/pdf", name: "pdf", description: "The project's PDF skill.")
        try FileManager.default.createDirectory(atPath: root + "/user/broken", withIntermediateDirectories: true)
        try "no front matter here".write(toFile: root + "/user/broken/SKILL.md", atomically: true, encoding: .utf8)
        let scan = SkillFolderScan.scan([
            SkillFolderRoot(root + "/user", scope: .user), SkillFolderRoot(root + "/project", scope: .project),
        ])
        #expect(scan.skills.map(\.name).sorted() == ["notes", "pdf"])
        #expect(scan.skill("pdf")?.description == "The project's PDF skill.")
        #expect(scan.skill("pdf")?.scope == .project)
        #expect(
            scan.notices.contains { $0.hasPrefix("skill folder \(root)/user/broken not loaded: ") }, "\(scan.notices)")
        #expect(scan.notices.contains { $0.contains("pdf") }, "the override is said: \(scan.notices)")
    }

    @Test func theStandardRootsGoByPrecedence() {
        let roots = SkillFolderRoot.standard(dataHome: "/d", home: "/h", project: "/p", configured: ["/c"])
        #expect(
            roots.map(\.path) == [
                "/c", "/d/skills", "/h/.agents/skills", "/h/.claude/skills", "/p/.agents/skills", "/p/.claude/skills",
            ])
        #expect(roots.map(\.scope) == [.configured, .user, .user, .user, .project, .project])
        #expect(SkillFolderRoot.standard(dataHome: "/d", home: "/h", project: nil, configured: []).count == 3)
    }
}
