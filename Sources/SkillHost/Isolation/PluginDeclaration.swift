import CProcess
import SkillJSON

/// What a plugin declares about itself that its confinement depends on: its name (its data folder), its
/// capabilities and the folders it reads. A confined worker learns it before it confines itself — from a peek
/// (a confined child that loads the plugin and reports, `WorkerConfinement.begin`), or, when a worker of the same
/// private copy already learnt it, from the host (`WorkerLaunch.declared`), which saves the peek's process on a
/// restart. Both come from the plugin's own code, so neither is trusted beyond what a peek would report: the
/// same checks apply to either.
struct PluginDeclaration: Sendable, Equatable {
    let name: String
    let capabilities: PluginCapabilities
    let readPaths: [String]

    /// A declaration as reported; nil when the name is not a valid plugin name (it becomes a folder name, so
    /// never "../x"). Unknown capability bits are dropped, and read paths that are neither absolute nor under `~`,
    /// past the peek's count or longer than its length.
    init?(name: String, capabilities bits: UInt32, readPaths: [String]) {
        guard DescriptorValidator.isValidPluginName(name) else { return nil }
        self.name = name
        capabilities = PluginCapabilities(rawValue: bits).intersection(.known)
        self.readPaths = Array(
            readPaths.filter { ($0.hasPrefix("/") || $0.hasPrefix("~")) && $0.utf8.count <= 4095 }
                .prefix(Int(SKILLHOST_PEEK_MAX_PATHS)))
    }

    var json: JSONValue {
        [
            "name": .string(name), "capabilities": .int(Int64(capabilities.rawValue)),
            "read_paths": .array(readPaths.map { .string($0) }),
        ]
    }

    init?(json: JSONValue?) {
        guard let json, let name = json["name"]?.stringValue, case .int(let bits)? = json["capabilities"],
            let bits = UInt32(exactly: bits), let paths = json["read_paths"]?.arrayValue
        else { return nil }
        self.init(name: name, capabilities: bits, readPaths: paths.compactMap(\.stringValue))
    }

    /// Why a plugin that declared this to its peek and `name`, `capabilities`, `readPaths` when loaded is refused;
    /// nil when the two are one declaration. Confinement follows the peek; the name clash and the pin what the
    /// loaded plugin says: a constructor can tell the two apart.
    func mismatch(name: String, capabilities: PluginCapabilities, readPaths: [String]) -> String? {
        let loaded = PluginDeclaration(name: name, capabilities: capabilities.rawValue, readPaths: readPaths)
        guard loaded != self else { return nil }
        func described(_ capabilities: PluginCapabilities, _ readPaths: [String]) -> String {
            let parts = PluginCapabilities.declared(capabilities, readPaths: readPaths)
            return parts.isEmpty ? "nothing" : parts.joined(separator: ", ")
        }
        return
            "it declared one thing to its peek (plugin \"\(self.name)\", \(described(self.capabilities, self.readPaths))) "
            + "and another when loaded (plugin \"\(name)\", \(described(capabilities, readPaths))); a plugin must "
            + "declare the same every time"
    }
}
