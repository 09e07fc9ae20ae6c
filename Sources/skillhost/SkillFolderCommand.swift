import Foundation
import SkillFolders
import SkillJSON

/// `skillhost check FOLDER`: a skill folder's verdict by the Agent Skills specification.
enum SkillFolderCommand {
    /// With `grants`, also what its scripts may do (`its scripts: …`) and how to grant more.
    static func check(_ folder: String, json: Bool, grants: SkillGrants = SkillGrants()) -> Int32 {
        let inspection = SkillFolderCheck.inspect(folder)
        let valid = inspection.problems.isEmpty
        if json {
            var object = JSONObject([
                (key: "folder", value: .string(folder)), (key: "valid", value: .bool(valid)),
                (key: "problems", value: .array(inspection.problems.map { .string($0) })),
                (key: "warnings", value: .array(inspection.warnings.map { .string($0) })),
            ])
            if case .success(let skill) = inspection.skill {
                object["name"] = .string(skill.name)
                object["description"] = .string(skill.description)
                object["scripts"] = .string(grants.summary(for: skill))
            }
            writeOut(JSONValue.object(object).jsonText + "\n")
        } else {
            var out = ""
            if valid, case .success(let skill) = inspection.skill {
                out += "✓ \(skill.name): a valid skill folder (\(skill.file))\n"
            } else {
                out += "✗ \(folder): \(inspection.problems.count) problem\(inspection.problems.count == 1 ? "" : "s")\n"
                for problem in inspection.problems { out += "  \(problem)\n" }
            }
            // What loading forgave that a problem already says is not said again.
            let forgiven = inspection.warnings.filter { warning in
                !inspection.problems.contains { warning.hasPrefix($0) }
            }
            for warning in forgiven { out += "  warning: \(warning)\n" }
            if !valid, case .success = inspection.skill {
                out += "  (skillhost loads it anyway: its name and description are usable)\n"
            }
            if case .success(let skill) = inspection.skill {
                let key = grants.key(for: skill)
                out +=
                    "  its scripts: \(grants.summary(for: skill)) — grant more in config.json: "
                    + "\"skills\": {\"grant\": {\"\(key)\": [\"read:~/Documents\", \"write:~/out\", \"network\"]}}\n"
            }
            writeText(out)
        }
        return valid ? ExitCode.ok.rawValue : ExitCode.error.rawValue
    }
}
