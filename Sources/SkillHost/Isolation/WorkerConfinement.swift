import CProcess
import Foundation
import SkillJSON
import Support

/// The worker's side of confinement, before any of the plugin's code runs in the worker itself: a confined child
/// learns what the plugin declares (`skillhost_peek_start`/`_finish`) while the worker sets up its registry, the
/// user's rules widen or narrow it, and the worker confines itself with the result for good (`skillhost_confine`).
enum WorkerConfinement {
    /// The system folders every worker may read and execute from (what the dynamic loader and the C library need).
    static let systemFolders = ["/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin"]
    /// The parts of /etc a program reads to run, resolve names and tell the time — not all of /etc (which holds
    /// host keys and, for root, password hashes and TLS private keys).
    static let systemFiles = [
        "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/timezone",
        // Certificates, not /etc/ssl/private: root (as CI runs) owns it and could read the host's TLS keys there.
        "/etc/ssl/certs", "/etc/ssl/openssl.cnf",
        "/etc/ca-certificates", "/etc/ca-certificates.conf", "/etc/resolv.conf", "/etc/hosts", "/etc/host.conf",
        "/etc/nsswitch.conf", "/etc/gai.conf", "/etc/services", "/etc/protocols", "/etc/passwd", "/etc/group",
        "/etc/mime.types", "/etc/locale.alias", "/etc/locale.conf", "/etc/os-release", "/etc/fonts",
        "/proc/meminfo", "/proc/cpuinfo", "/proc/stat", "/sys/devices/system/cpu",
        "/dev/urandom", "/dev/random", "/dev/zero",
    ]

    /// What a process reads of itself under /proc/self (the C library, the Swift runtime, Foundation, Python) —
    /// not all of it: `/proc/self/net` lists every socket and connection of the network namespace (the host's and
    /// every other program's), which is not the plugin's to see.
    static let ownProcessFiles = [
        "status", "stat", "statm", "maps", "task", "fd", "fdinfo", "cmdline", "environ", "auxv", "limits", "cgroup",
        "mounts", "mountinfo",
    ].map { "/proc/self/" + $0 }

    /// A peek under way: the child reads the declaration while the worker sets up its registry.
    struct Peek {
        let base: Paths
        let child: pid_t
        let report: Int32
        let temporary: String?
        let maximumABI: Int
        /// The declaration the host gave (`WorkerLaunch.declared`): no child was started.
        let known: PluginDeclaration?
    }

    /// How the worker confined itself, and from what declaration.
    struct Confined {
        let report: ConfinementReport
        /// Nil when the plugin is confined as declaring nothing (its peek failed).
        let declared: PluginDeclaration?
        /// Whether the worker peeked for the declaration (else the host gave it).
        let peeked: Bool
    }

    /// Starts the peek: a confined child loads the plugin at `launch.copy` and reports its declaration — unless the
    /// launch carries it already (a restart of the same copy). Gives the worker its private temporary folder
    /// (`TMPDIR`). When the child cannot start, `child` is -1 and the plugin is confined as declaring nothing.
    static func begin(_ launch: WorkerLaunch) -> Peek {
        let base = basePaths(copy: launch.copy, prepared: launch.prepared)
        let temporary = makeTemporaryDirectory()
        if let temporary { setenv("TMPDIR", temporary, 1) }
        let abi = launch.maximumLandlockABI ?? -1
        var child: pid_t = -1
        var report: Int32 = -1
        let started = withSpecification(
            Confinement(), execute: base.execute, read: base.read, write: ["/dev/null"], maximumABI: abi
        ) { specification in
            withUnsafePointer(to: specification) { pointer in
                // Compiled by the host once for every worker (or here, before the fork): the child loads it as it
                // is, and so does this process when the plugin declares nothing, the common case.
                let imported = launch.prepared.map { prepared in
                    prepared.filter.withUnsafeBufferPointer {
                        skillhost_seccomp_import(pointer, $0.baseAddress, Int32($0.count)) == 0
                    }
                }
                if imported != true { _ = skillhost_seccomp_prepare(pointer) }
                return launch.declared == nil ? skillhost_peek_start(launch.copy, pointer, &child, &report) : 0
            }
        }
        if started != 0 { child = -1 }
        return Peek(
            base: base, child: child, report: report, temporary: temporary, maximumABI: abi, known: launch.declared)
    }

    /// Reads the declaration, widens or narrows it by the user's rules, and confines this process for good. Fails
    /// with a sentence when the confinement cannot be applied, or is partial while the rules require it complete.
    static func finish(_ peek: Peek, _ launch: WorkerLaunch, rules: ConfinementRules)
        -> Result<Confined, WorkerFailure>
    {
        // Landlock and the filter bind only the calling thread (and the threads it starts from now on): one that
        // already ran could later run plugin code unconfined.
        let threads = skillhost_thread_count()
        guard threads == 1 else {
            return .failure(WorkerFailure("cannot confine the plugin: the worker already runs \(threads) threads"))
        }
        let home = Self.home
        // The refusal memory for the host's metadata supervision, made while the peek child may still be working.
        _ = skillhost_metadata_prepare()
        let declared = peek.known ?? (peek.child > 0 ? read(peek) : nil)
        let (confinement, writable) = allowed(
            declared, rules: rules, dataDirectory: launch.dataDirectory, taken: launch.takenNames,
            temporary: peek.temporary, home: home
        ) { StandardStreams.error("skillhost worker: \($0)\n") }
        // Metadata changes are supervised by the host, to which the worker sends the filter's listener over its
        // supervision socket as it confines itself.
        let report = confine(
            confinement, execute: peek.base.execute, read: peek.base.read + confinement.readPaths, write: writable,
            maximumABI: peek.maximumABI)
        switch report {
        case .failure(let failure): return .failure(failure)
        case .success(let report):
            if let refusal = refusal(report, rules: rules) { return .failure(WorkerFailure(refusal)) }
            return .success(Confined(report: report, declared: declared, peeked: peek.known == nil))
        }
    }

    /// What a plugin that declared `declared` (nil: nothing, as when its peek failed) may do under `rules`, and the
    /// folders it may write: its own grants, its private temporary folder and its data folder — created here (a
    /// folder that cannot be made is not writable; `warn` hears why, and the plugin's init then says what it misses).
    /// A name another plugin's file holds (`taken`) is not this one's: neither that name's grants nor its data
    /// folder (its load is refused for the clash; until then, nothing of the other plugin's is in its reach).
    static func allowed(
        _ declared: PluginDeclaration?, rules: ConfinementRules, dataDirectory: String, taken: [String: String],
        temporary: String?, home: String, warn: (String) -> Void
    ) -> (confinement: Confinement, writable: [String]) {
        let isTaken = declared.map { taken[$0.name] != nil } ?? false
        var rules = rules
        if isTaken, let name = declared?.name { rules.grants[name] = nil }
        let confinement = rules.confinement(
            for: declared?.name ?? "", declared: declared?.capabilities ?? [], readPaths: declared?.readPaths ?? [],
            home: home)
        var writable = ["/dev/null"] + confinement.writePaths
        if let temporary { writable.append(temporary) }
        if let name = declared?.name, !isTaken {
            let data = (dataDirectory as NSString).appendingPathComponent(name)
            do {
                _ = try PrivateFiles.directory(dataDirectory)
                _ = try PrivateFiles.directory(data)
                writable.append(data)
            } catch {
                warn("cannot create \(data): \(error)")
            }
        }
        return (confinement, writable)
    }

    /// Why a plugin confined as `report` says may not load under `rules`, or nil.
    static func refusal(_ report: ConfinementReport, rules: ConfinementRules) -> String? {
        guard rules.requireConfinement, let shortfall = report.shortfall else { return nil }
        return "refused to load: the plugin would be only partly confined (\(shortfall)) and "
            + "isolation.require_confinement is true"
    }

    struct WorkerFailure: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    package struct Paths: Sendable, Equatable {
        var execute: [String]
        var read: [String]
    }

    /// The user's home folder as this process's environment says (else the account's): read from the environment
    /// directly, as `ProcessInfo.environment` copies all of it (about 40 µs of each worker start).
    static var home: String { getenv("HOME").map { String(cString: $0) } ?? NSHomeDirectory() }

    /// The system folders, the files this process already maps (the Swift runtime wherever the toolchain lives,
    /// and the skillhost binary itself), and the plugin's private copy.
    static func basePaths(copy: String, prepared: WorkerPreparation?) -> Paths {
        var paths = prepared?.paths ?? systemPaths()
        paths.execute.append(copy)
        return paths
    }

    /// The system folders and the files this process maps: the same for every worker of one binary, so the host
    /// computes them once (`WorkerPreparation`), before it loads any plugin itself.
    static func systemPaths() -> Paths {
        var execute = systemFolders
        var link = [CChar](repeating: 0, count: 4096)
        let linked = readlink("/proc/self/exe", &link, link.count - 1)
        let executable =
            linked > 0 ? String(decoding: link[0..<linked].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        // The binary itself, not its folder (a build folder holds more than the program).
        var buffer = [CChar](repeating: 0, count: 65536)
        let used = Int(skillhost_mapped_folders(executable, &buffer, Int32(buffer.count)))
        let folders = buffer[0..<used].split(separator: 0).map {
            String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        execute += folders.filter { folder in !systemFolders.contains { folder == $0 || folder.hasPrefix($0 + "/") } }
        if !executable.isEmpty { execute.append(executable) }
        var read = systemFiles + ownProcessFiles
        // A symbolic link's target must be readable too (/etc/resolv.conf → /run/systemd/resolve/…).
        for path in systemFiles where !path.hasPrefix("/proc/") {
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { continue }
            if let resolved = realpath(path, nil) {
                let target = String(cString: resolved)
                free(resolved)
                if target != path { read.append(target) }
            }
        }
        return Paths(execute: execute, read: read)
    }

    /// What the child reported; nil when it failed (the real load then fails the same way and says why).
    static func read(_ peek: Peek) -> PluginDeclaration? {
        var buffer = [CChar](repeating: 0, count: Int(SKILLHOST_PEEK_REPORT_SIZE))
        var length: Int32 = 0
        guard skillhost_peek_finish(peek.child, peek.report, 60_000, &buffer, Int32(buffer.count), &length) == 0
        else { return nil }
        let fields = buffer[0..<Int(length)].split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
            String(decoding: $0.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        guard fields.count >= 2, let bits = UInt32(fields[1]) else { return nil }
        return PluginDeclaration(name: fields[0], capabilities: bits, readPaths: Array(fields.dropFirst(2)))
    }

    /// A new private folder `worker-XXXXXX` in `folder` (default: $TMPDIR as the host set it, its private folder;
    /// read directly, as Foundation's first use costs time).
    static func makeTemporaryDirectory(in folder: String? = nil) -> String? {
        let folder = folder ?? getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array((folder + "/worker-XXXXXX").utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
    }

    static func confine(
        _ confinement: Confinement, execute: [String], read: [String], write: [String], maximumABI: Int,
        forExec: Bool = false
    ) -> Result<ConfinementReport, WorkerFailure> {
        var applied: Int32 = 0
        let result = withSpecification(
            confinement, execute: execute, read: read, write: write, maximumABI: maximumABI, forExec: forExec
        ) { specification in
            withUnsafePointer(to: specification) { skillhost_confine($0, &applied) }
        }
        guard result == 0 else {
            return .failure(WorkerFailure("cannot confine the plugin: \(String(cString: strerror(result)))"))
        }
        return .success(report(confinement, applied: Int(applied), maximumABI: maximumABI))
    }

    /// What a worker confined with `confinement` that applied the `applied` layers (`SKILLHOST_CONFINED_*`) under
    /// Landlock ABI `maximumABI` (-1: the kernel's) has, on this kernel.
    static func report(_ confinement: Confinement, applied: Int, maximumABI: Int) -> ConfinementReport {
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return ConfinementReport(
            confinement: confinement, layers: ConfinementReport.Layers(rawValue: applied),
            landlockABI: maximumABI >= 0
                ? min(maximumABI, Int(skillhost_landlock_abi())) : Int(skillhost_landlock_abi()),
            kernel: kernel)
    }

    /// Calls `body` with the C form of a confinement; the strings live until it returns.
    static func withSpecification<T>(
        _ confinement: Confinement, execute: [String], read: [String], write: [String], maximumABI: Int,
        forExec: Bool = false, _ body: (skillhost_confinement) -> T
    ) -> T {
        let owned = [execute, read, write].map { list in list.map { strdup($0) } }
        defer { owned.joined().forEach { free($0) } }
        let pointers = owned.map { list in list.map { UnsafePointer($0) } }
        return pointers[0].withUnsafeBufferPointer { execute in
            pointers[1].withUnsafeBufferPointer { read in
                pointers[2].withUnsafeBufferPointer { write in
                    let capabilities = confinement.capabilities
                    let specification = skillhost_confinement(
                        network: capabilities.contains(.network) ? 1 : 0,
                        exec: capabilities.contains(.runPrograms) ? 1 : 0,
                        read_anywhere: capabilities.contains(.readFiles) ? 1 : 0,
                        write_anywhere: capabilities.contains(.writeFiles) ? 1 : 0,
                        execute_paths: execute.baseAddress, execute_count: Int32(execute.count),
                        read_paths: read.baseAddress, read_count: Int32(read.count),
                        write_paths: write.baseAddress, write_count: Int32(write.count),
                        maximum_abi: Int32(maximumABI), for_exec: forExec ? 1 : 0, supervise_metadata: 1)
                    return body(specification)
                }
            }
        }
    }
}

/// What every worker of one host would compute the same way before it can confine itself — the system paths and
/// the compiled system-call filter for a plugin that declares nothing — computed once by the host and passed on
/// each worker's command line (about 0.8 ms of each worker's start).
package struct WorkerPreparation: Sendable, Equatable {
    let paths: WorkerConfinement.Paths
    /// The compiled filter (`struct sock_filter` array), for `Confinement()`.
    let filter: [UInt8]

    /// Computed in this process; nil when the filter cannot be compiled here.
    package static func make() -> WorkerPreparation? {
        let paths = WorkerConfinement.systemPaths()
        var bytes = [UInt8](repeating: 0, count: 65536)
        let length = WorkerConfinement.withSpecification(
            Confinement(), execute: [], read: [], write: [], maximumABI: -1
        ) { specification in
            withUnsafePointer(to: specification) { skillhost_seccomp_export($0, &bytes, Int32(bytes.count)) }
        }
        guard length > 0 else { return nil }
        return WorkerPreparation(paths: paths, filter: Array(bytes[0..<Int(length)]))
    }

    /// The arguments that carry it, made once: every worker's launch carries them (the filter alone is some 5,000
    /// hex digits).
    let arguments: [String]
    /// The filter in hex, as `--filter` carries it (the C worker takes only that).
    let filterHex: String

    /// Read back from `--system-paths` and `--filter`; nil when either is missing or malformed.
    init?(paths text: String?, filter hex: String?) {
        guard let text, let hex, let value = try? JSONValue(parsing: text),
            let execute = value["execute"]?.arrayValue?.compactMap(\.stringValue),
            let read = value["read"]?.arrayValue?.compactMap(\.stringValue)
        else { return nil }
        guard let bytes = [UInt8](hex: hex) else { return nil }
        self.init(paths: WorkerConfinement.Paths(execute: execute, read: read), filter: bytes)
    }

    init(paths: WorkerConfinement.Paths, filter: [UInt8]) {
        self.paths = paths
        self.filter = filter
        let listed: JSONValue = [
            "execute": .array(paths.execute.map { .string($0) }), "read": .array(paths.read.map { .string($0) }),
        ]
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(filter.count * 2)
        for byte in filter {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        filterHex = String(decoding: hex, as: UTF8.self)
        arguments = ["--system-paths", listed.jsonText, "--filter", filterHex]
    }
}
