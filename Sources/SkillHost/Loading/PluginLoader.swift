import CProcess
import Foundation
import SkillJSON
import SkillSDK
import Synchronization

/// A plugin image that is open and fully validated but not yet initialised or registered.
struct PluginCandidate {
    let file: String
    let handle: UnsafeMutableRawPointer
    let descriptor: UnsafePointer<skill_plugin>
    let name: String
    let version: String
    let description: String
    let skills: [ValidatedSkill]
    let keepsMapped: Bool
    let imageSize: Int
    let capabilities: PluginCapabilities
    let readPaths: [String]
    let snapshot: PluginSnapshot.Function?
    /// Its views (since 1.4).
    var views: [SkillView] = []
}

/// A descriptor that passed validation, with its compiled schema and implementation.
struct ValidatedSkill {
    let id: String
    let title: String
    let description: String
    let risk: SkillRisk
    let flags: SkillFlags
    let timeout: Duration?
    let schema: JSONSchema
    let schemaIsGenerated: Bool
    let kind: SkillKind
    let implementation: Skill.Implementation
    /// The result's JSON Schema (since 1.1), as declared and compiled.
    let outputSchema: JSONValue?
    let output: JSONSchema?
    /// How a result reads as a sentence (since 1.3), checked.
    let answer: AnswerTemplate?
    /// The name of the plugin's view that shows its results, and who may call it (since 1.4).
    var view: String? = nil
    var audience: SkillAudience = [.model, .view]
}

/// Opens plugin files from private copies, validates them against the ABI, and initialises them.
///
/// Every step that can fail produces `PluginProblem`s; nothing here throws past a rejected file.
final class PluginLoader: Sendable {
    /// Where private copies go (a directory only this process uses).
    let copyDirectory: URL
    /// `copyDirectory`'s path.
    private let copyFolder: String
    let hostVersion: String
    /// Hears which step of loading starts, so a load that hangs can be reported with the step it hung in.
    let onPhase: @Sendable (LoadPhase) -> Void
    /// Files given are private copies already (a worker's, made by its host, which nothing changes or removes
    /// while it runs): opened where they are, without a copy of the copy.
    let filesArePrivate: Bool
    private let counter = Atomic<Int>(0)

    init(
        copyDirectory: URL, hostVersion: String, filesArePrivate: Bool = false,
        onPhase: @escaping @Sendable (LoadPhase) -> Void = { _ in }
    ) {
        self.copyDirectory = copyDirectory
        copyFolder = copyDirectory.path
        self.hostVersion = hostVersion
        self.filesArePrivate = filesArePrivate
        self.onPhase = onPhase
    }

    /// Reads a plugin file's bytes: refuses what is not a regular file or is larger than `maximumSize`, and (`elf`,
    /// for shared libraries) a file that does not start with an ELF header, before reading the rest (a 2 GB file
    /// of zeros costs one `read`).
    static func read(_ file: String, maximumSize: Int, elf: Bool = true) -> Result<[UInt8], PluginLoadError> {
        func failure(_ problem: PluginProblem) -> Result<[UInt8], PluginLoadError> {
            .failure(PluginLoadError(file: file, problems: [problem]))
        }
        // O_NONBLOCK: opening a FIFO must not wait for a writer.
        let descriptor = Glibc.open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            switch errno {
            case ENOENT: return failure(.unreadable("it no longer exists"))
            case EACCES: return failure(.unreadable("permission denied; make it readable (chmod a+r)"))
            case ELOOP: return failure(.notAFile(kind: "a symbolic link that loops"))
            default: return failure(.unreadable(String(cString: strerror(errno))))
            }
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return failure(.unreadable(String(cString: strerror(errno)))) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return failure(.notAFile(kind: "a directory"))
        case S_IFIFO: return failure(.notAFile(kind: "a named pipe (FIFO)"))
        case S_IFSOCK: return failure(.notAFile(kind: "a socket"))
        case S_IFCHR, S_IFBLK: return failure(.notAFile(kind: "a device"))
        default: return failure(.notAFile(kind: "not a regular file"))
        }
        let size = Int(status.st_size)
        guard size <= maximumSize else { return failure(.tooLarge(size: size, limit: maximumSize)) }
        var magic: [UInt8] = [0, 0, 0, 0]
        guard !elf || pread(descriptor, &magic, 4, 0) == 4 && magic == [0x7F, 0x45, 0x4C, 0x46] else {
            return failure(.notELF)
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var filled = 0
        while filled < size {
            let count = bytes.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress.map { $0 + filled }, size - filled)
            }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return failure(.unreadable(String(cString: strerror(errno)))) }
            if count == 0 { break }  // the file shrank while being read: what was read is checked as it is
            filled += count
        }
        if filled < size { bytes.removeSubrange(filled...) }
        return .success(bytes)
    }

    /// Checks, copies, `dlopen`s and validates the bytes read from `file`. On failure the image is closed again.
    func open(_ file: String, bytes: [UInt8]) -> Result<PluginCandidate, PluginLoadError> {
        let summary: ELFSummary
        let copy: String
        let written =
            filesArePrivate
            ? ELFInspector.inspect(bytes).map { ($0, file) }.mapError { PluginLoadError(file: file, problems: [$0]) }
            : writeCopy(file, bytes: bytes)
        switch written {
        case .success(let written): (summary, copy) = written
        case .failure(let error): return .failure(error)
        }
        // The mapping keeps the inode alive; nothing is left behind on disk (a private file is its owner's to remove).
        defer { if !filesArePrivate { unlink(copy) } }
        let base = (file as NSString).lastPathComponent

        var flags = RTLD_NOW | RTLD_LOCAL
        if summary.containsSwift { flags |= RTLD_NODELETE }
        onPhase(.constructors)
        guard let handle = dlopen(copy, flags) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown dlopen error"
            return .failure(
                PluginLoadError(
                    file: file,
                    problems: [
                        // The private copy's path (or its name alone) means nothing to the author: their file's name.
                        .dlopenFailed(
                            reason.replacingOccurrences(of: copy, with: base).replacingOccurrences(
                                of: (copy as NSString).lastPathComponent, with: base))
                    ]))
        }
        guard let symbol = dlsym(handle, SKILL_PLUGIN_ENTRY_SYMBOL) else {
            dlclose(handle)
            return .failure(PluginLoadError(file: file, problems: [.missingEntry]))
        }
        let entry = unsafeBitCast(symbol, to: skill_plugin_entry_fn.self)
        guard let descriptor = entry() else {
            dlclose(handle)
            return .failure(PluginLoadError(file: file, problems: [.entryReturnedNull]))
        }
        onPhase(.validation)
        switch DescriptorValidator.validate(descriptor) {
        case .failure(let list):
            dlclose(handle)
            return .failure(PluginLoadError(file: file, problems: list.problems))
        case .success(let validated):
            var candidate = PluginCandidate(
                file: file, handle: handle, descriptor: descriptor, name: validated.name,
                version: validated.version, description: validated.description, skills: validated.skills,
                keepsMapped: summary.containsSwift, imageSize: bytes.count,
                capabilities: validated.capabilities, readPaths: validated.readPaths,
                snapshot: validated.snapshot?.address)
            candidate.views = validated.views
            return .success(candidate)
        }
    }

    /// Checks the ELF headers (no plugin code runs), then writes a private copy with a unique path: glibc would hand
    /// back an already-loaded image for the same path or inode, and a file overwritten in place under a live
    /// mapping crashes the process. The caller removes the copy.
    func writeCopy(_ file: String, bytes: [UInt8]) -> Result<(ELFSummary, String), PluginLoadError> {
        let summary: ELFSummary
        switch ELFInspector.inspect(bytes) {
        case .success(let s): summary = s
        case .failure(let problem): return .failure(PluginLoadError(file: file, problems: [problem]))
        }
        let number = counter.add(1, ordering: .relaxed).newValue
        let base = (file as NSString).lastPathComponent
        // Joined as text: URL's appendingPathComponent cost a worker start about 50 µs.
        let copy = copyFolder + "/\(number)-\(base)"
        // Used at once and removed: no fsync (it cost a worker start about half a millisecond).
        let failure = PrivateFiles.writeScratch(copy, bytes)
        guard failure == 0 else {
            return .failure(
                PluginLoadError(
                    file: file,
                    problems: [
                        .unreadable("cannot write a private copy to \(copy): \(String(cString: strerror(failure)))")
                    ]))
        }
        return .success((summary, copy))
    }

    /// Calls the plugin's `init` with its data directory (created private to the user; `log` hears when an existing
    /// one had to be tightened) and builds the registered objects.
    func initialize(
        _ candidate: PluginCandidate, dataDirectory: URL, log: @escaping @Sendable (LogRecord) -> Void = { _ in }
    ) -> Result<
        (LoadedPlugin, [Skill]), PluginLoadError
    > {
        do {
            // The plugin's data is the user's alone (and so is the folder of all plugins' data).
            for notice in [
                try PrivateFiles.directory(dataDirectory.deletingLastPathComponent().path),
                try PrivateFiles.directory(dataDirectory.path),
            ] {
                if let notice { log(LogRecord(level: .warning, source: "host", message: notice)) }
            }
        } catch {
            discard(candidate)
            return .failure(
                PluginLoadError(
                    file: candidate.file,
                    problems: [
                        .other("cannot create the data directory \(dataDirectory.path): \(error.localizedDescription)")
                    ]))
        }
        guard
            let host = HostRecord(
                dataDirectory: dataDirectory.path, hostVersion: hostVersion, plugin: candidate.name, log: log)
        else {
            discard(candidate)
            return .failure(
                PluginLoadError(
                    file: candidate.file,
                    problems: [.other("the host is out of memory for the plugin's log function (libffi closure)")]))
        }
        var state: UnsafeMutableRawPointer?
        onPhase(.initialisation)
        if let initFunction = DescriptorValidator.v1_0Part(candidate.descriptor).`init` {
            var errorBuffer = [CChar](repeating: 0, count: 1024)
            let code = errorBuffer.withUnsafeMutableBufferPointer { buffer in
                initFunction(host.pointer, &state, buffer.baseAddress, buffer.count - 1)
            }
            if code != 0 {
                discard(candidate)
                let message = errorBuffer.withUnsafeBufferPointer { pluginString($0.baseAddress) }
                return .failure(
                    PluginLoadError(file: candidate.file, problems: [.initFailed(code: code, message: message)]))
            }
        }
        let plugin = LoadedPlugin(
            name: candidate.name, version: candidate.version, description: candidate.description, file: candidate.file,
            image: .native(handle: candidate.handle, descriptor: candidate.descriptor, state: state),
            keepsMapped: candidate.keepsMapped, imageSize: candidate.imageSize, host: host,
            capabilities: candidate.capabilities, readPaths: candidate.readPaths, snapshot: candidate.snapshot)
        let skills = candidate.skills.map { validated in
            Skill(
                info: SkillInfo(
                    id: validated.id, title: validated.title, description: validated.description,
                    plugin: candidate.name,
                    pluginVersion: candidate.version, file: candidate.file, risk: validated.risk,
                    flags: validated.flags,
                    timeout: validated.timeout, inputSchema: validated.schema.document,
                    schemaIsGenerated: validated.schemaIsGenerated, kind: validated.kind,
                    outputSchema: validated.outputSchema, answer: validated.answer,
                    declares: PluginCapabilities.declared(candidate.capabilities, readPaths: candidate.readPaths),
                    view: candidate.views.first { $0.name == validated.view }, audience: validated.audience),
                schema: validated.schema, implementation: validated.implementation, plugin: plugin,
                output: validated.output)
        }
        return .success((plugin, skills))
    }

    /// Closes a candidate that will not be registered.
    func discard(_ candidate: PluginCandidate) {
        dlclose(candidate.handle)
    }
}

/// The `skill_host` record handed to `init`, with the strings it points to and the plugin's own `log` function.
/// Lives as long as the plugin.
///
/// - Important: `@unchecked Sendable` is safe because the record and its strings are written once in `init` and
///   only read (by plugin code) afterwards; they are freed in `deinit`, after the plugin's `deinit` ran.
final class HostRecord: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<skill_host>
    private let strings: [UnsafeMutablePointer<CChar>]
    /// `log`: a C function made for this plugin alone.
    private let logFunction: LogClosure

    /// nil when libffi cannot make the plugin's `log` function (out of memory).
    init?(dataDirectory: String, hostVersion: String, plugin: String, log: @escaping @Sendable (LogRecord) -> Void) {
        let speaker = LogClosure.Speaker(plugin: plugin, log: log)
        guard let logFunction = LogClosure(speaker) else { return nil }
        self.logFunction = logFunction
        let copies = [strdup("skillhost"), strdup(hostVersion), strdup(dataDirectory)].compactMap { $0 }
        strings = copies
        pointer = .allocate(capacity: 1)
        pointer.initialize(
            to: skill_host(
                struct_size: UInt32(MemoryLayout<skill_host>.size), abi_major: UInt16(SKILL_ABI_MAJOR),
                abi_minor: UInt16(SKILL_ABI_MINOR), host_name: copies.count == 3 ? UnsafePointer(copies[0]) : nil,
                host_version: copies.count == 3 ? UnsafePointer(copies[1]) : nil,
                data_dir: copies.count == 3 ? UnsafePointer(copies[2]) : nil,
                log: logFunction.function,
                log_with: { host, level, message in
                    // The record names its plugin and its registry's sink; an unknown pointer is ignored.
                    guard let host, let speaker = HostRecord.speaker(host) else { return }
                    speaker.log(
                        LogRecord(
                            level: LogRecord.Level(code: level), source: speaker.plugin, message: pluginString(message))
                    )
                }))
        Self.speakers.withLock { $0[UInt(bitPattern: pointer)] = speaker }
    }

    /// Who speaks through each live record (keyed by its address), for `log_with`: a plugin may pass any pointer,
    /// and only the address of a live record finds a speaker.
    private static let speakers = Mutex<[UInt: LogClosure.Speaker]>([:])

    static func speaker(_ host: UnsafePointer<skill_host>) -> LogClosure.Speaker? {
        speakers.withLock { $0[UInt(bitPattern: host)] }
    }

    deinit {
        _ = Self.speakers.withLock { $0.removeValue(forKey: UInt(bitPattern: pointer)) }
        pointer.deallocate()
        strings.forEach { free($0) }
    }
}

/// A fast content fingerprint (not a security hash), kept in memory only: FNV-1a's step over 8-byte words, each
/// followed by a fold of the high half into the low (a byte at a time, a 40 KB plugin took about 50 µs of each load;
/// every step is a bijection of the running hash, so two contents that differ in one word never share it).
func fingerprint(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset + 8 <= raw.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0x100_0000_01b3
            hash ^= hash >> 32
            offset += 8
        }
        while offset < raw.count {
            hash = (hash ^ UInt64(raw[offset])) &* 0x100_0000_01b3
            offset += 1
        }
    }
    return hash ^ UInt64(bytes.count)
}

/// The steps of loading a plugin that run its code or cost time in proportion to what it declares.
public enum LoadPhase: String, Sendable {
    /// `dlopen`: the image's constructors run.
    case constructors
    /// Descriptors are checked and schemas compiled.
    case validation
    /// The plugin's `init` runs.
    case initialisation

    /// What the plugin was doing, for a message: "it was still running its constructors".
    var doing: String {
        switch self {
        case .constructors: return "running its constructors (while being opened)"
        case .validation: return "having its descriptors checked and its schemas compiled"
        case .initialisation: return "in its init"
        }
    }
}
