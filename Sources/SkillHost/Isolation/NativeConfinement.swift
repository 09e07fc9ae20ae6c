import Foundation
import SkillJSON

/// How the host confines a C worker (`skillhost-worker`, which applies what it is sent and decides nothing): the
/// lists `skillhost_confine` takes, computed here from the user's rules and the plugin's declaration. When the host
/// knows the declaration (a restart of the same private copy) the worker confines itself at its start with the
/// final lists (`--confinement`); otherwise it starts a peek (`--peek`), the host asks for what the peek learnt
/// (`declaration`) and sends the lists (`confine`) before the plugin is opened.
struct NativeConfinement {
    let launch: WorkerLaunch
    let base: WorkerConfinement.Paths
    /// The worker's private temporary folder (its `TMPDIR`), made here.
    let temporary: String?
    let home: String
    /// When the declaration is known (a confined restart): what the plugin may do and the lists the worker confines
    /// itself with at its start, computed once.
    private(set) var known: (confinement: Confinement, specification: JSONValue)?

    /// `warn` hears a data folder that cannot be made.
    init(launch: WorkerLaunch, warn: (String) -> Void) {
        self.launch = launch
        base = WorkerConfinement.basePaths(copy: launch.copy, prepared: launch.prepared)
        temporary = WorkerConfinement.makeTemporaryDirectory(in: (launch.copy as NSString).deletingLastPathComponent)
        home = WorkerConfinement.home
        if launch.confines, let declared = launch.declared { known = lists(for: declared, warn: warn) }
    }

    /// The worker's arguments for its confinement (none when it is not confined), after the library it preloads:
    /// the lists, and the host's compiled filter for a plugin that declares nothing (else the worker compiles it).
    var arguments: [String] {
        let preload = launch.preload.map { ["--preload", $0] } ?? []
        guard launch.confines else { return preload }
        let filter = launch.prepared.map { ["--filter", $0.filterHex] } ?? []
        if let known { return preload + filter + ["--confinement", known.specification.jsonText] }
        let peek = Self.peekSpecification(
            execute: base.execute, read: base.read, maximumABI: launch.maximumLandlockABI ?? -1)
        return preload + filter + ["--peek", peek.jsonText]
    }

    /// A peek's lists: what a plugin that declares nothing may reach, for the child that reads its declaration.
    static func peekSpecification(execute: [String], read: [String], maximumABI: Int) -> JSONValue {
        specification(Confinement(), execute: execute, read: read, write: ["/dev/null"], maximumABI: maximumABI)
    }

    /// The lists a spare's standby child builds Landlock's rules for ahead of its launch (`--prepare`): every
    /// peek's of this host, all but the plugin's copy (`WorkerConfinement.basePaths` adds it to the prepared
    /// paths). Nil when the launch does not confine or the host prepared nothing.
    static func standbyLists(for launch: WorkerLaunch) -> StandbyLists? {
        guard launch.confines, let prepared = launch.prepared else { return nil }
        let text = peekSpecification(
            execute: prepared.paths.execute, read: prepared.paths.read, maximumABI: launch.maximumLandlockABI ?? -1
        ).jsonText
        return StandbyLists(text: text, paths: prepared.paths.execute + prepared.paths.read + ["/dev/null"])
    }

    /// What a plugin that declared `declared` (nil: its peek failed; it is confined as declaring nothing) may do,
    /// and the lists that say so. Creates its data folder (it becomes writable); `warn` hears when it cannot.
    func lists(for declared: PluginDeclaration?, warn: (String) -> Void)
        -> (confinement: Confinement, specification: JSONValue)
    {
        let (confinement, writable) = WorkerConfinement.allowed(
            declared, rules: launch.rules, dataDirectory: launch.dataDirectory, taken: launch.takenNames,
            temporary: temporary, home: home,
            warn: warn)
        return (
            confinement,
            Self.specification(
                confinement, execute: base.execute, read: base.read + confinement.readPaths, write: writable,
                maximumABI: launch.maximumLandlockABI ?? -1)
        )
    }

    /// `skillhost_confinement` as the worker reads it.
    static func specification(
        _ confinement: Confinement, execute: [String], read: [String], write: [String], maximumABI: Int
    ) -> JSONValue {
        let capabilities = confinement.capabilities
        func flag(_ capability: PluginCapabilities) -> JSONValue { .int(capabilities.contains(capability) ? 1 : 0) }
        return [
            "network": flag(.network), "exec": flag(.runPrograms), "read_anywhere": flag(.readFiles),
            "write_anywhere": flag(.writeFiles), "execute": .array(execute.map { .string($0) }),
            "read": .array(read.map { .string($0) }), "write": .array(write.map { .string($0) }),
            "maximum_abi": .int(Int64(maximumABI)),
        ]
    }
}
