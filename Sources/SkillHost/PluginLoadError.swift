/// One reason a plugin file cannot be loaded. Each case renders as a sentence that says what is wrong and how to
/// fix it; `PluginLoadError` adds the file.
public enum PluginProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file cannot be read.
    case unreadable(String)
    /// The file does not start with an ELF header.
    case notELF
    /// A 32-bit ELF file.
    case wrongClass
    /// Built for another CPU.
    case wrongArchitecture(found: String)
    /// An executable or object file, not a shared library.
    case notSharedLibrary
    /// The headers describe more bytes than the file has.
    case truncated(expected: Int, actual: Int)
    /// `dlopen` failed; the payload is `dlerror()`.
    case dlopenFailed(String)
    /// No `skill_plugin_entry` function is exported.
    case missingEntry
    /// `skill_plugin_entry()` returned NULL.
    case entryReturnedNull
    /// `struct_size` smaller than the v1.0 struct.
    case structTooSmall(structName: String, size: Int, minimum: Int)
    /// ABI major differs from the host's.
    case abiMajorMismatch(plugin: Int, host: Int)
    /// ABI minor newer than the host's.
    case abiMinorTooNew(plugin: Int, host: Int)
    /// Missing or malformed plugin name.
    case invalidPluginName(String?)
    /// Another loaded plugin already has this name.
    case duplicatePluginName(String, otherFile: String)
    /// Missing or empty version.
    case missingVersion
    /// skill_count > 0 with a NULL skills pointer, or zero skills.
    case noSkills
    /// A descriptor-level problem: the skill's index and id (when readable) and what is wrong.
    case skill(index: Int, id: String?, reason: String)
    /// The same skill id twice in this plugin.
    case duplicateSkillID(String)
    /// The skill id is already provided by another loaded plugin.
    case skillIDTaken(String, plugin: String)
    /// `init` returned non-zero; the payload is the plugin's error text.
    case initFailed(code: Int32, message: String)
    /// A file with this content failed before and was not retried.
    case other(String)
    /// The path is not a regular file (a directory, a FIFO, a socket, a device).
    case notAFile(kind: String)
    /// The file is larger than the host accepts for a plugin.
    case tooLarge(size: Int, limit: Int)

    public var description: String {
        switch self {
        case .unreadable(let reason): return "cannot be read: \(reason)"
        case .notAFile(let kind): return "is \(kind), not a plugin file; only shared library files are loaded"
        case .tooLarge(let size, let limit):
            return "is \(byteCount(size)), over the host's limit of \(byteCount(limit)) for plugin files; check it is "
                + "the right file (or raise max_plugin_mb in config.json)"
        case .notELF:
            return "is not a shared library (no ELF header); build it with cc -shared -fPIC"
        case .wrongClass:
            return "is a 32-bit library; rebuild it as 64-bit for \(ELFInspector.machineName(ELFInspector.hostMachine))"
        case .wrongArchitecture(let found):
            return
                "is built for \(found), but this host runs on \(ELFInspector.machineName(ELFInspector.hostMachine)); "
                + "rebuild it for this machine"
        case .notSharedLibrary:
            return "is an executable or object file, not a shared library; build it with cc -shared -fPIC"
        case .truncated(let expected, let actual):
            return "is truncated: its headers describe \(expected) bytes but the file has \(actual); "
                + "rebuild it or copy it again"
        case .dlopenFailed(let reason): return "cannot be loaded: \(reason)"
        case .missingEntry:
            return "does not export skill_plugin_entry; define it with SKILL_PLUGIN(...) from skill_sdk.h "
                + "(or mark it SKILL_EXPORT)"
        case .entryReturnedNull: return "skill_plugin_entry() returned NULL; it must return the plugin's descriptor"
        case .structTooSmall(let name, let size, let minimum):
            return "\(name).struct_size is \(size), smaller than the \(minimum) bytes of ABI v1.0; "
                + "set it to sizeof(\(name))"
        case .abiMajorMismatch(let plugin, let host):
            return "ABI major \(plugin), host \(host); rebuild the plugin against this host's skill_sdk.h"
        case .abiMinorTooNew(let plugin, let host):
            return "ABI minor \(plugin) is newer than the host's \(host); update skillhost or rebuild the plugin "
                + "against this host's skill_sdk.h"
        case .invalidPluginName(let name):
            if let name { return "plugin name \"\(name)\" is invalid; use 1-48 characters of a-z, 0-9, _ and -" }
            return "plugin name is missing; set skill_plugin.name"
        case .duplicatePluginName(let name, let otherFile):
            return "plugin name \"\(name)\" is already used by \(otherFile); rename one of them"
        case .missingVersion: return "plugin version is missing; set skill_plugin.version (e.g. \"1.0.0\")"
        case .noSkills: return "declares no skills; list at least one skill_descriptor"
        case .skill(let index, let id, let reason):
            if let id { return "skill \"\(id)\": \(reason)" }
            return "skill #\(index): \(reason)"
        case .duplicateSkillID(let id): return "skill id \"\(id)\" is declared twice in this plugin"
        case .skillIDTaken(let id, let plugin):
            return "skill id \"\(id)\" is already provided by plugin \"\(plugin)\"; rename one of them"
        case .initFailed(let code, let message):
            let text = message.isEmpty ? "(no error message)" : message
            return "init failed (code \(code)): \(text)"
        case .other(let text): return text
        }
    }
}

/// Several problems found by validation.
struct ProblemList: Error {
    let problems: [PluginProblem]
    init(_ problems: [PluginProblem]) { self.problems = problems }
}

/// A plugin file that was rejected: the file and every problem found, the first of which is the headline.
public struct PluginLoadError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file as the user named it (not the private copy).
    public let file: String
    /// At least one problem.
    public let problems: [PluginProblem]

    public init(file: String, problems: [PluginProblem]) {
        precondition(!problems.isEmpty, "a PluginLoadError needs at least one problem")
        self.file = file
        self.problems = problems
    }

    /// One line: `units.so: ABI major 2, host 1; rebuild …` (+ how many more problems `skillhost check` shows).
    public var description: String {
        let name = file.split(separator: "/").last.map(String.init) ?? file
        var line = "\(name): \(problems[0])"
        if problems.count > 1 {
            line +=
                " (and \(problems.count - 1) more problem\(problems.count == 2 ? "" : "s"); "
                + "run skillhost check \(file))"
        }
        return line
    }
}
