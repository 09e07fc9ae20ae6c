import Foundation
import SkillHost
import SkillJSON

/// `skillhost plugin install|remove|list`: the user's plugins folder as a person manages it.
enum PluginCommand {
    static func run(
        _ action: String, _ argument: String?, line: ParsedCommandLine, environment: [String: String],
        log: @escaping @Sendable (LogRecord) -> Void
    ) async throws(CLIError) -> Int32 {
        if action == "list" {
            let host = try await Host.open(line, environment: environment, log: log, reportMCPFailures: false)
            defer { host.close() }
            writeText(list(host.setup))
            return ExitCode.ok.rawValue
        }
        var isFolder: ObjCBool = false
        if action == "install", let argument, FileManager.default.fileExists(atPath: argument, isDirectory: &isFolder),
            isFolder.boolValue
        {
            writeText(try SkillFolderInstall.install(argument, environment: environment))
            return ExitCode.ok.rawValue
        }
        // The folders a host would load, quietly: what is installed is compared with them.
        let setup = try HostSetup.assemble(
            extraFolders: line.pluginFolders, defaultFolders: true, environment: environment,
            config: try Config.load(environment), isolate: line.isolate, log: { _ in })
        defer { setup.registry.shutdown() }
        let file = argument ?? ""
        writeText(
            action == "install"
                ? try install(file, setup: setup, environment: environment)
                : try remove(file, setup: setup, environment: environment))
        return ExitCode.ok.rawValue
    }

    /// Checks `file` the way the host loads it, then installs it into the user folder atomically (copied under a
    /// hidden name, then renamed: a running host sees the whole file at once). A plugin of the same name already
    /// there is replaced; a bundled plugin's name, or skill ids another plugin has, are refused with the reasons.
    static func install(_ file: String, setup: HostSetup, environment: [String: String]) throws(CLIError) -> String {
        guard FileManager.default.fileExists(atPath: file) else { throw .failure("\(file): no such file") }
        let name = (file as NSString).lastPathComponent
        let composite = name.hasSuffix(".skill.json")
        guard composite || name.hasSuffix(".so") else {
            throw .failure("\(file): not a plugin (a .so file) or a composite skill (a .skill.json file)")
        }
        let registry = setup.registry
        // What it would register, and who else has those names.
        let plugin: String
        let version: String
        let skillIDs: [String]
        if composite {
            switch registry.checkComposite(file: file) {
            case .failure(let error): throw .failure(rejected(error, file: file))
            case .success(let check):
                (plugin, version, skillIDs) = (check.skill.id, check.skill.pluginVersion, [check.skill.id])
            }
        } else {
            switch registry.check(file: file) {
            case .failure(let error): throw .failure(rejected(error, file: file))
            case .success(let (summary, skills)):
                (plugin, version, skillIDs) = (summary.name, summary.version, skills.map(\.id))
            }
        }
        let folder = HostSetup.userPluginFolder(environment)
        let bundled = Set(setup.folders.filter(\.bundled).map(\.path))
        // Installed under its plugin's name, not the file's: two plugins built as "hello.so" are two files, and
        // `plugin remove <name>` finds what `plugin install` put there.
        guard !plugin.contains("/"), !plugin.hasPrefix(".") else {
            throw .failure("\(file): not installed: its plugin name \"\(plugin)\" cannot name a file")
        }
        var target = folder + "/" + plugin + (composite ? ".skill.json" : ".so")
        for loaded in registry.plugins where loaded.name == plugin {
            let loadedFolder = (loaded.file as NSString).deletingLastPathComponent
            if bundled.contains(loadedFolder) {
                throw .failure(
                    "\(file): \(plugin) is the name of a bundled plugin; give yours another name (skill_plugin.name)")
            }
            if loadedFolder == folder { target = loaded.file }  // an upgrade replaces the installed file
        }
        // A file of another plugin is never replaced behind its back.
        if let other = registry.plugins.first(where: { $0.file == target && $0.name != plugin }) {
            throw .failure(
                "\(file): not installed: \(target) holds plugin \"\(other.name)\"; remove it first (skillhost plugin "
                    + "remove \(other.name)) or give your plugin another name")
        }
        let replaced = Set(registry.plugins.first { $0.file == target }?.skillIDs ?? [])
        let taken = skillIDs.compactMap { id -> String? in
            guard !replaced.contains(id), let owner = registry.skill(id), owner.plugin != plugin else { return nil }
            return "skill id \"\(id)\" is already provided by plugin \"\(owner.plugin)\""
        }
        guard taken.isEmpty else {
            throw .failure("\(file): not installed: " + taken.joined(separator: "; ") + "; rename one of them")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let partial = folder + "/.\((target as NSString).lastPathComponent).partial"
            try? FileManager.default.removeItem(atPath: partial)
            try FileManager.default.copyItem(atPath: file, toPath: partial)
            guard rename(partial, target) == 0 else {
                let reason = String(cString: strerror(errno))
                try? FileManager.default.removeItem(atPath: partial)
                throw CLIError.failure("cannot install into \(folder): \(reason)")
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw .failure("cannot install into \(folder): \(error.localizedDescription)")
        }
        let count = skillIDs.count
        return "installed \(plugin) \(version) (\(count) skill\(count == 1 ? "" : "s"): "
            + "\(skillIDs.joined(separator: ", "))) as \(target); a running skillhost picks it up at once\n"
    }

    /// Removes the plugin (or composite) named `name` from the user folder.
    static func remove(_ name: String, setup: HostSetup, environment: [String: String]) throws(CLIError) -> String {
        let folder = HostSetup.userPluginFolder(environment)
        let plugins = setup.registry.plugins
        guard let plugin = plugins.first(where: { $0.name == name }) else {
            let installed = plugins.filter { ($0.file as NSString).deletingLastPathComponent == folder }.map(\.name)
            let hint = EditDistance.closest(to: name, among: installed).map { " (did you mean \($0)?)" } ?? ""
            throw .failure(
                "no plugin named \"\(name)\" is installed in \(folder)\(hint); skillhost plugin list shows them")
        }
        guard (plugin.file as NSString).deletingLastPathComponent == folder else {
            throw .failure(
                "\(name) is not in the user plugins folder (it comes from \(plugin.file)); only plugins installed there "
                    + "are removed — a bundled skill can be kept from the model with /disable or a \"deny\" rule")
        }
        do { try FileManager.default.removeItem(atPath: plugin.file) } catch {
            throw .failure("cannot remove \(plugin.file): \(error.localizedDescription)")
        }
        return "removed \(name) \(plugin.version) (\(plugin.file))\n"
    }

    /// The plugins part of `skillhost list`.
    static func list(_ setup: HostSetup) -> String {
        let plugins = setup.registry.plugins
        var out = "\(plugins.count) plugin\(plugins.count == 1 ? "" : "s")\n"
        if !plugins.isEmpty { out += "\n" + ListOutput.pluginTable(plugins) }
        let failures = setup.registry.failures
        if !failures.isEmpty {
            out += "\nFailed to load (\(failures.count)):\n"
            for failure in failures { out += "  \(failure.description)\n" }
        }
        return out
    }

    private static func rejected(_ error: PluginLoadError, file: String) -> String {
        "\(file): not installed, \(error.problems.count) problem\(error.problems.count == 1 ? "" : "s"):\n"
            + error.problems.map { "  - \($0)" }.joined(separator: "\n")
    }
}
