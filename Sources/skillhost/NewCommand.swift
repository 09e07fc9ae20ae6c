import Foundation
import SkillFolders
import SkillHost

/// `skillhost new NAME [--lang c|cpp|swift] [--dir DIR] [--sdk PATH]`: a plugin project outside the repository —
/// source with one typed and one JSON skill, a Makefile (C, C++) or Package.swift (Swift) that builds against the
/// installed SDK, and a README with the build, check and install lines.
enum NewCommand {
    /// Where the SDK is: the C headers, and the Swift helper package (installed by `make install`).
    struct SDK {
        let include: String
        let swiftPackage: String?
    }

    static func run(_ plugin: NewPlugin, environment: [String: String]) throws(CLIError) -> String {
        if plugin.skillFolder { return try skillFolder(plugin) }
        let name = plugin.name
        // A plugin name, starting with a letter: it also prefixes the skill ids, which must.
        guard SkillRegistry.isValidPluginName(name), name.utf8.first.map({ (0x61...0x7A).contains($0) }) == true
        else {
            throw .usage(
                UsageError(
                    "\"\(name)\" is not a plugin name",
                    hint: "use 1-48 characters of a-z, 0-9, _ and -, starting with a letter (e.g. my-tools)"))
        }
        let sdk = try locate(plugin.sdk)
        let directory = plugin.directory ?? (FileManager.default.currentDirectoryPath + "/" + name)
        if FileManager.default.fileExists(atPath: directory),
            let contents = try? FileManager.default.contentsOfDirectory(atPath: directory), !contents.isEmpty
        {
            throw .failure("\(directory) already exists and is not empty; choose another --dir")
        }
        let files: [(String, String)]
        switch plugin.language {
        case "swift":
            guard let package = sdk.swiftPackage else {
                throw .failure(
                    "the Swift helper package is not installed beside \(sdk.include); install skillhost with make "
                        + "install and pass its prefix (--sdk ~/.local)")
            }
            files = NewTemplates.swift(name: name, package: package, view: plugin.withView)
        case "cpp": files = NewTemplates.c(name: name, include: sdk.include, cpp: true, view: plugin.withView)
        default: files = NewTemplates.c(name: name, include: sdk.include, cpp: false, view: plugin.withView)
        }
        try write(files, into: directory)
        let build = plugin.language == "swift" ? "swift build -c release" : "make"
        return "created \(directory) (\(files.map(\.0).joined(separator: ", ")))\n"
            + "next: cd \(directory) && \(build), then see its README.md for check and install\n"
    }

    /// `new NAME --kind skill`: an Agent Skills folder — SKILL.md (front matter and instructions that point to the
    /// script) and scripts/NAME.py — that `skillhost check` finds valid.
    static func skillFolder(_ plugin: NewPlugin) throws(CLIError) -> String {
        let name = plugin.name
        guard SkillFolderCheck.nameProblems(name, file: "").isEmpty, !name.isEmpty else {
            throw .usage(
                UsageError(
                    "\"\(name)\" is not a skill name",
                    hint: "use 1-64 lowercase letters, digits and single hyphens, not at either end (e.g. pdf-tools)"))
        }
        let directory = plugin.directory ?? (FileManager.default.currentDirectoryPath + "/" + name)
        guard ((directory as NSString).standardizingPath as NSString).lastPathComponent == name else {
            throw .usage(
                UsageError(
                    "a skill's folder is named as the skill: \(directory) is not", hint: "--dir path/to/\(name)"))
        }
        if let contents = try? FileManager.default.contentsOfDirectory(atPath: directory), !contents.isEmpty {
            throw .failure("\(directory) already exists and is not empty; choose another --dir")
        }
        let files = NewTemplates.skillFolder(name: name)
        try write(files, into: directory)
        chmod(directory + "/scripts/\(name).py", 0o755)
        return "created \(directory) (\(files.map(\.0).joined(separator: ", ")))\n"
            + "next: edit SKILL.md's description and instructions, skillhost check \(directory), then skillhost plugin "
            + "install \(directory)\n"
    }

    /// Writes `files` (path relative to `directory`, text) with the folders they need.
    static func write(_ files: [(String, String)], into directory: String) throws(CLIError) {
        do {
            for (path, text) in files {
                let full = directory + "/" + path
                try FileManager.default.createDirectory(
                    atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try text.write(toFile: full, atomically: true, encoding: .utf8)
            }
        } catch {
            throw .failure("cannot write \(directory): \(error.localizedDescription)")
        }
    }

    /// `--sdk` (a prefix, or a folder holding skill_sdk.h), else the install beside this executable
    /// (`<prefix>/bin/skillhost` → `<prefix>/include/skillhost`), else the source tree it was built in.
    static func locate(_ given: String?) throws(CLIError) -> SDK {
        let manager = FileManager.default
        func prefix(_ root: String) -> SDK? {
            let include = root + "/include/skillhost"
            guard manager.fileExists(atPath: include + "/skill_sdk.h") else { return nil }
            let package = root + "/share/skillhost/swift/SkillSDK"
            return SDK(
                include: include, swiftPackage: manager.fileExists(atPath: package + "/Package.swift") ? package : nil)
        }
        if let given {
            let path = URL(fileURLWithPath: given).standardizedFileURL.path
            if let found = prefix(path) { return found }
            if manager.fileExists(atPath: path + "/skill_sdk.h") { return SDK(include: path, swiftPackage: nil) }
            throw .failure("--sdk \(given): no skill_sdk.h there (nor in \(given)/include/skillhost)")
        }
        if let executable = HostSetup.executableFolder() {
            if let installed = prefix((executable as NSString).deletingLastPathComponent) { return installed }
            var folder = executable
            for _ in 0..<5 {
                let include = folder + "/SkillSDK/include"
                if manager.fileExists(atPath: include + "/skill_sdk.h") {
                    return SDK(include: include, swiftPackage: nil)
                }
                folder = (folder as NSString).deletingLastPathComponent
            }
        }
        throw .failure(
            "cannot find the SDK headers: install skillhost (make install PREFIX=~/.local) or pass --sdk <prefix>")
    }
}
