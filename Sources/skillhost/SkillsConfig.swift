import Foundation
import SkillFolders
import SkillHost
import SkillJSON

/// `"skills"` in config.json: where Agent Skills folders come from and what their scripts may do.
///
/// ```json
/// "skills": {"folders": ["~/team-skills"], "trusted_projects": ["~/src/app"],
///            "grant": {"pdf": ["network", "read:~/Documents", "write:~/out"]}, "timeout_s": 60}
/// ```
struct SkillsConfig: Sendable {
    var folders: [String] = []
    var trustedProjects: [String] = []
    var grants: [String: Sandbox] = [:]
    var timeout: Duration?

    static let example =
        #"{"folders": ["~/team-skills"], "trusted_projects": ["~/src/app"], "grant": {"pdf": ["network"]}}"#

    static func parse(_ value: JSONValue, fail: (String) -> CLIError) throws(CLIError) -> SkillsConfig {
        guard let object = value.objectValue else { throw fail("\"skills\" must be an object like \(example)") }
        var config = SkillsConfig()
        func paths(_ value: JSONValue, _ key: String) throws(CLIError) -> [String] {
            let folders = value.arrayValue?.compactMap(\.stringValue) ?? []
            guard folders.count == value.arrayValue?.count,
                folders.allSatisfy({ $0.hasPrefix("/") || $0.hasPrefix("~") })
            else { throw fail("skills.\(key) must be a list of folders that are absolute or start with ~") }
            return folders
        }
        for (key, item) in object.members {
            switch key {
            case "folders": config.folders = try paths(item, key)
            case "trusted_projects": config.trustedProjects = try paths(item, key)
            case "timeout_s":
                guard let seconds = item.doubleValue, seconds >= 0.1, seconds <= 3600 else {
                    throw fail("skills.timeout_s must be a number of seconds from 0.1 to 3600")
                }
                config.timeout = .milliseconds(Int64(seconds * 1000))
            case "grant":
                guard let grants = item.objectValue else {
                    throw fail(
                        #"skills.grant must map skill names (or folders) to grants, like {"pdf": ["network"]}"#)
                }
                for (name, given) in grants.members {
                    var sandbox = Sandbox()
                    guard let list = given.arrayValue else {
                        throw fail(#"skills.grant.\#(name) must be a list such as ["network", "read:~/docs"]"#)
                    }
                    for grant in list {
                        let text = grant.stringValue ?? ""
                        if text == "network" {
                            sandbox.network = true
                        } else if text.hasPrefix("read:"), text.count > 5 {
                            sandbox.read.append(String(text.dropFirst(5)))
                        } else if text.hasPrefix("write:"), text.count > 6 {
                            sandbox.write.append(String(text.dropFirst(6)))
                        } else {
                            throw fail(
                                "skills.grant.\(name) has \(grant.jsonText); a grant is \"network\", \"read:FOLDER\" "
                                    + "or \"write:FOLDER\"")
                        }
                    }
                    config.grants[name] = sandbox
                }
            default:
                throw fail(
                    "\"skills\" has \"\(key)\"; its settings are folders, trusted_projects, grant and timeout_s")
            }
        }
        return config
    }
}

/// Projects whose `.agents/skills` and `.claude/skills` are loaded: those in config.json and those trusted with
/// `skillhost trust .` (kept in `$XDG_DATA_HOME/skillhost/trusted-projects.json`, the user's alone).
enum TrustedProjects {
    static func file(_ environment: [String: String]) -> String {
        HostSetup.dataHome(environment) + "/trusted-projects.json"
    }

    static func stored(_ environment: [String: String]) -> [String] {
        guard case .success(.bytes(let bytes)) = BoundedFile.read(file(environment), limit: 1 << 20),
            let list = (try? JSONValue(parsing: bytes))?.arrayValue
        else { return [] }
        return list.compactMap(\.stringValue)
    }

    /// The trusted project the command runs in (the working folder, or a folder inside it): the folder trusted
    /// itself — never the working folder below it, whose own `.agents/skills` (a vendored dependency's) nobody
    /// trusted. The innermost when trusted projects nest.
    static func current(_ environment: [String: String], configured: [String]) -> String? {
        let home = environment["HOME"] ?? NSHomeDirectory()
        let trusted = (configured + stored(environment)).map { path in
            ((path.hasPrefix("~") ? home + path.dropFirst() : path) as NSString).resolvingSymlinksInPath
        }
        let here = (FileManager.default.currentDirectoryPath as NSString).resolvingSymlinksInPath
        return trusted.filter { here == $0 || here.hasPrefix($0 + "/") }.max { $0.count < $1.count }
    }

    /// `skillhost trust FOLDER`: adds the folder (resolved) to the stored list.
    static func trust(_ folder: String, environment: [String: String]) throws(CLIError) -> String {
        let resolved = (URL(fileURLWithPath: folder).standardizedFileURL.path as NSString).resolvingSymlinksInPath
        let home = ((environment["HOME"] ?? NSHomeDirectory()) as NSString).resolvingSymlinksInPath
        let here = (FileManager.default.currentDirectoryPath as NSString).resolvingSymlinksInPath
        // A project is a folder of its own: never the root, the home folder or one above it, nor a folder above
        // the one skillhost runs in (`trust ../..` would take in every project beside this one).
        if resolved == "/" || resolved == home || home.hasPrefix(resolved + "/") || here.hasPrefix(resolved + "/") {
            throw .failure(
                "not trusted: \(resolved) holds more than one project (it is the root, your home folder, or a folder "
                    + "above it or above the one you are in); trust the project's own folder, such as skillhost "
                    + "trust .")
        }
        var list = stored(environment)
        guard !list.contains(resolved) else { return "\(resolved) is already a trusted project\n" }
        list.append(resolved)
        let path = file(environment)
        do {
            _ = try PrivateFiles.directory((path as NSString).deletingLastPathComponent)
            try Data(JSONValue.array(list.map { .string($0) }).jsonText.utf8).write(to: URL(fileURLWithPath: path))
            chmod(path, 0o600)
        } catch {
            throw .failure("cannot record the trusted project in \(path): \(error.localizedDescription)")
        }
        return "trusted \(resolved): its .agents/skills and .claude/skills are loaded when skillhost runs there\n"
    }
}
