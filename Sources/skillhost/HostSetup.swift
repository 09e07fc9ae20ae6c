import Foundation
import SkillHost

/// The places on disk (XDG) and the assembled registry.
struct HostSetup {
    /// Folders plugins were loaded from, in order, with whether they are the bundled folder.
    let folders: [(path: String, bundled: Bool)]
    let registry: SkillRegistry

    /// The bundled folder holds other libraries too; only `libskill-*.so` there are plugins.
    static let bundledFilter: @Sendable (String) -> Bool = { $0.hasPrefix("libskill-") }

    /// The sentence `list` and `call` say when the bundled folder was searched and held no plugin (nil otherwise).
    var missingBundledNotice: String? {
        guard let bundled = folders.first(where: \.bundled)?.path else { return nil }
        let loaded =
            registry.plugins.contains { ($0.file as NSString).deletingLastPathComponent == bundled }
            || registry.failures.contains { ($0.file as NSString).deletingLastPathComponent == bundled }
        return loaded ? nil : Self.noBundledPlugins(bundled)
    }

    /// Starts hot reload on every folder plugins were loaded from.
    func watch() -> PluginWatch {
        let everything: @Sendable (String) -> Bool = { _ in true }
        return registry.watch(
            folders.map { folder -> (path: String, include: @Sendable (String) -> Bool) in
                (path: folder.path, include: folder.bundled ? Self.bundledFilter : everything)
            })
    }

    /// `$XDG_DATA_HOME/skillhost` (default `~/.local/share/skillhost`).
    static func dataHome(_ environment: [String: String]) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/skillhost" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/skillhost"
    }

    /// `$SKILLHOST_PLUGINS`, else `<data home>/plugins`.
    static func userPluginFolder(_ environment: [String: String]) -> String {
        if let folder = environment["SKILLHOST_PLUGINS"], !folder.isEmpty { return folder }
        return dataHome(environment) + "/plugins"
    }

    /// The running executable (workers are started from it).
    static func executablePath() -> String? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? Bundle.main.executablePath
    }

    /// The directory of the running executable (its resolved path: a symbolic link to it does not count).
    static func executableFolder() -> String? {
        executablePath().map { ($0 as NSString).deletingLastPathComponent }
    }

    /// Where the bundled `libskill-*.so` are: `<prefix>/lib/skillhost/plugins` for an installed
    /// `<prefix>/bin/skillhost`, else beside the executable (where `swift build` puts them).
    static func bundledFolder() -> String? {
        guard let folder = executableFolder() else { return nil }
        let installed = (folder as NSString).deletingLastPathComponent + "/lib/skillhost/plugins"
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: installed, isDirectory: &isDirectory), isDirectory.boolValue {
            return installed
        }
        return folder
    }

    /// The sentence for a host that found no bundled plugin where it looked.
    static func noBundledPlugins(_ folder: String) -> String {
        "no bundled plugins in \(folder) (libskill-*.so): install skillhost with make install, which puts them in "
            + "<prefix>/lib/skillhost/plugins beside <prefix>/bin/skillhost"
    }

    /// Creates the registry and loads the default folders (unless disabled) and `extraFolders`.
    static func assemble(
        extraFolders: [String], defaultFolders: Bool, environment: [String: String], config: Config,
        isolate: IsolateChoice?, client: String = "host", log: @escaping @Sendable (LogRecord) -> Void
    ) throws(CLIError) -> HostSetup {
        var configuration = SkillRegistry.Configuration(
            dataDirectory: URL(fileURLWithPath: dataHome(environment) + "/data", isDirectory: true))
        configuration.log = log
        configuration.client = client
        configuration.policy = Policy(rules: config.rules)
        configuration.hooks = config.hooks
        configuration.disabledSkills = config.disabledSkills
        configuration.hooks.launcher = executablePath()
        configuration.pinsFile = dataHome(environment) + "/pins.json"
        if let limit = config.resultLimit { configuration.resultLimit = limit }
        if let limit = config.pluginLimit { configuration.maximumPluginSize = limit }
        if let executable = executablePath() {
            configuration.isolation = config.isolation.settings(
                executable: executable, bundledFolder: bundledFolder(), choice: isolate)
        }
        let registry: SkillRegistry
        do { registry = try SkillRegistry(configuration: configuration) } catch {
            throw CLIError.failure(error.description)
        }
        var folders: [(String, Bool)] = []
        if defaultFolders {
            if let bundled = bundledFolder() {
                registry.loadFolder(bundled, include: bundledFilter)
                folders.append((bundled, true))
            }
            let user = userPluginFolder(environment)
            do {
                if let notice = try PrivateFiles.directory(dataHome(environment)) { log(LogRecord.warning(notice)) }
                if let notice = try PrivateFiles.directory(user) { log(LogRecord.warning(notice)) }
                registry.loadFolder(user)
                folders.append((user, false))
            } catch {
                log(LogRecord.warning("cannot create the plugins folder \(user): \(error.localizedDescription)"))
            }
        }
        for folder in extraFolders {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                throw CLIError.usage(
                    UsageError("--plugins \(folder): no such folder", hint: "create it or fix the path"))
            }
            registry.loadFolder(folder)
            folders.append((folder, false))
        }
        return HostSetup(folders: folders, registry: registry)
    }
}

extension LogRecord {
    static func warning(_ message: String) -> LogRecord { LogRecord(level: .warning, source: "host", message: message) }
}
