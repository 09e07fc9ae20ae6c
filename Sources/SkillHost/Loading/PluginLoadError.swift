/// One reason a plugin file cannot be loaded: a sentence that says what is wrong and how to fix it (`description`),
/// a `code` to branch on, and for failures of the dynamic linker the `cause` it gave (`dlerror()`).
/// `PluginLoadError` adds the file.
///
/// A struct over a private enum (as NIO's error codes are), so new problems can be added without breaking code
/// that switches over the codes.
public struct PluginProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of problem it is, for code that branches on it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let rawValue: String
        private init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let unreadable = Code(rawValue: "unreadable")
        public static let notELF = Code(rawValue: "notELF")
        public static let wrongClass = Code(rawValue: "wrongClass")
        public static let wrongArchitecture = Code(rawValue: "wrongArchitecture")
        public static let notSharedLibrary = Code(rawValue: "notSharedLibrary")
        public static let truncated = Code(rawValue: "truncated")
        public static let dlopenFailed = Code(rawValue: "dlopenFailed")
        public static let missingEntry = Code(rawValue: "missingEntry")
        public static let entryReturnedNull = Code(rawValue: "entryReturnedNull")
        public static let structTooSmall = Code(rawValue: "structTooSmall")
        public static let abiMajorMismatch = Code(rawValue: "abiMajorMismatch")
        public static let abiMinorTooNew = Code(rawValue: "abiMinorTooNew")
        public static let invalidPluginName = Code(rawValue: "invalidPluginName")
        public static let duplicatePluginName = Code(rawValue: "duplicatePluginName")
        public static let missingVersion = Code(rawValue: "missingVersion")
        public static let noSkills = Code(rawValue: "noSkills")
        public static let skill = Code(rawValue: "skill")
        public static let duplicateSkillID = Code(rawValue: "duplicateSkillID")
        public static let skillIDTaken = Code(rawValue: "skillIDTaken")
        public static let initFailed = Code(rawValue: "initFailed")
        public static let other = Code(rawValue: "other")
        public static let notAFile = Code(rawValue: "notAFile")
        public static let tooLarge = Code(rawValue: "tooLarge")
        public static let composite = Code(rawValue: "composite")
    }

    private enum Kind: Equatable, Sendable {
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
        /// `dlopen` failed; `cause` is `dlerror()`.
        case dlopenFailed
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
        /// A composite skill's file (`NAME.skill.json`) is wrong; the sentence says where and how.
        case composite(String)

        var code: Code {
            switch self {
            case .unreadable: return .unreadable
            case .notELF: return .notELF
            case .wrongClass: return .wrongClass
            case .wrongArchitecture: return .wrongArchitecture
            case .notSharedLibrary: return .notSharedLibrary
            case .truncated: return .truncated
            case .dlopenFailed: return .dlopenFailed
            case .missingEntry: return .missingEntry
            case .entryReturnedNull: return .entryReturnedNull
            case .structTooSmall: return .structTooSmall
            case .abiMajorMismatch: return .abiMajorMismatch
            case .abiMinorTooNew: return .abiMinorTooNew
            case .invalidPluginName: return .invalidPluginName
            case .duplicatePluginName: return .duplicatePluginName
            case .missingVersion: return .missingVersion
            case .noSkills: return .noSkills
            case .skill: return .skill
            case .duplicateSkillID: return .duplicateSkillID
            case .skillIDTaken: return .skillIDTaken
            case .initFailed: return .initFailed
            case .other: return .other
            case .notAFile: return .notAFile
            case .tooLarge: return .tooLarge
            case .composite: return .composite
            }
        }
    }

    private let kind: Kind
    /// The underlying error text, when another component gave one: `dlerror()` for a library the dynamic linker
    /// refused.
    public let cause: String?

    private init(_ kind: Kind, cause: String? = nil) {
        self.kind = kind
        self.cause = cause
    }

    public var code: Code { kind.code }

    /// The file cannot be read.
    public static func unreadable(_ value0: String) -> PluginProblem {
        PluginProblem(.unreadable(value0))
    }

    /// The file does not start with an ELF header.
    public static let notELF = PluginProblem(.notELF)

    /// A 32-bit ELF file.
    public static let wrongClass = PluginProblem(.wrongClass)

    /// Built for another CPU.
    public static func wrongArchitecture(found: String) -> PluginProblem {
        PluginProblem(.wrongArchitecture(found: found))
    }

    /// An executable or object file, not a shared library.
    public static let notSharedLibrary = PluginProblem(.notSharedLibrary)

    /// The headers describe more bytes than the file has.
    public static func truncated(expected: Int, actual: Int) -> PluginProblem {
        PluginProblem(.truncated(expected: expected, actual: actual))
    }

    /// `dlopen` failed; the payload is `dlerror()`.
    public static func dlopenFailed(_ dlerror: String) -> PluginProblem {
        PluginProblem(.dlopenFailed, cause: dlerror)
    }

    /// No `skill_plugin_entry` function is exported.
    public static let missingEntry = PluginProblem(.missingEntry)

    /// `skill_plugin_entry()` returned NULL.
    public static let entryReturnedNull = PluginProblem(.entryReturnedNull)

    /// `struct_size` smaller than the v1.0 struct.
    public static func structTooSmall(structName: String, size: Int, minimum: Int) -> PluginProblem {
        PluginProblem(.structTooSmall(structName: structName, size: size, minimum: minimum))
    }

    /// ABI major differs from the host's.
    public static func abiMajorMismatch(plugin: Int, host: Int) -> PluginProblem {
        PluginProblem(.abiMajorMismatch(plugin: plugin, host: host))
    }

    /// ABI minor newer than the host's.
    public static func abiMinorTooNew(plugin: Int, host: Int) -> PluginProblem {
        PluginProblem(.abiMinorTooNew(plugin: plugin, host: host))
    }

    /// Missing or malformed plugin name.
    public static func invalidPluginName(_ value0: String?) -> PluginProblem {
        PluginProblem(.invalidPluginName(value0))
    }

    /// Another loaded plugin already has this name.
    public static func duplicatePluginName(_ value0: String, otherFile: String) -> PluginProblem {
        PluginProblem(.duplicatePluginName(value0, otherFile: otherFile))
    }

    /// Missing or empty version.
    public static let missingVersion = PluginProblem(.missingVersion)

    /// skill_count > 0 with a NULL skills pointer, or zero skills.
    public static let noSkills = PluginProblem(.noSkills)

    /// A descriptor-level problem: the skill's index and id (when readable) and what is wrong.
    public static func skill(index: Int, id: String?, reason: String) -> PluginProblem {
        PluginProblem(.skill(index: index, id: id, reason: reason))
    }

    /// The same skill id twice in this plugin.
    public static func duplicateSkillID(_ value0: String) -> PluginProblem {
        PluginProblem(.duplicateSkillID(value0))
    }

    /// The skill id is already provided by another loaded plugin.
    public static func skillIDTaken(_ value0: String, plugin: String) -> PluginProblem {
        PluginProblem(.skillIDTaken(value0, plugin: plugin))
    }

    /// `init` returned non-zero; the payload is the plugin's error text.
    public static func initFailed(code: Int32, message: String) -> PluginProblem {
        PluginProblem(.initFailed(code: code, message: message))
    }

    /// A file with this content failed before and was not retried.
    public static func other(_ value0: String) -> PluginProblem {
        PluginProblem(.other(value0))
    }

    /// The path is not a regular file (a directory, a FIFO, a socket, a device).
    public static func notAFile(kind: String) -> PluginProblem {
        PluginProblem(.notAFile(kind: kind))
    }

    /// The file is larger than the host accepts for a plugin.
    public static func tooLarge(size: Int, limit: Int) -> PluginProblem {
        PluginProblem(.tooLarge(size: size, limit: limit))
    }

    /// A composite skill's file is wrong: `step 2: "call" 7 is not a skill id`.
    public static func composite(_ sentence: String) -> PluginProblem {
        PluginProblem(.composite(sentence))
    }

    public var description: String {
        switch kind {
        case .composite(let sentence): return sentence
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
        case .dlopenFailed: return "cannot be loaded: \(cause ?? "the dynamic linker gave no reason")"
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
            if let name, DescriptorValidator.reservedPluginNames.contains(name) {
                return "plugin name \"\(name)\" is skillhost's own (its skill folders' and its window's tools use it); "
                    + "choose another name"
            }
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
