import Foundation

/// What the loader learns from a plugin file's ELF headers before handing it to `dlopen`.
struct ELFSummary: Equatable {
    /// The image carries Swift metadata sections (`swift5_*`), even empty ones: it registers itself with the
    /// Swift runtime when loaded (anything linked by swiftc does, C plugins built by SwiftPM included), and the
    /// runtime keeps pointers into it, so it must never be unmapped.
    var containsSwift: Bool
}

/// Checks that bytes are a complete 64-bit ELF shared library for this machine, without executing anything.
///
/// `dlopen` on a file that is not one produces messages that do not help a plugin author ("invalid ELF header",
/// "file too short"); these checks say what is wrong and how to fix it.
enum ELFInspector {
    static let hostMachine: UInt16 = {
        #if arch(x86_64)
            return 62
        #elseif arch(arm64)
            return 183
        #else
            return 0
        #endif
    }()

    static func machineName(_ machine: UInt16) -> String {
        switch machine {
        case 3: return "i386"
        case 40: return "arm"
        case 62: return "x86_64"
        case 183: return "aarch64"
        case 243: return "riscv"
        default: return "machine type \(machine)"
        }
    }

    /// Inspects the file's bytes. Returns nil and a reason when the file cannot be a loadable plugin.
    static func inspect(_ bytes: [UInt8]) -> Result<ELFSummary, PluginProblem> {
        guard bytes.count >= 4, bytes[0] == 0x7F, bytes[1] == 0x45, bytes[2] == 0x4C, bytes[3] == 0x46 else {
            return .failure(.notELF)
        }
        guard bytes.count >= 64 else { return .failure(.truncated(expected: 64, actual: bytes.count)) }
        guard bytes[4] == 2 else { return .failure(.wrongClass) }
        guard bytes[5] == 1 else { return .failure(.wrongArchitecture(found: "a big-endian machine")) }
        let type = read16(bytes, 16)
        let machine = read16(bytes, 18)
        if machine != hostMachine { return .failure(.wrongArchitecture(found: machineName(machine))) }
        guard type == 3 else { return .failure(.notSharedLibrary) }

        let phoff = Int(clamping: read64(bytes, 32))
        let shoff = Int(clamping: read64(bytes, 40))
        let phentsize = Int(read16(bytes, 54))
        let phnum = Int(read16(bytes, 56))
        let shentsize = Int(read16(bytes, 58))
        let shnum = Int(read16(bytes, 60))
        let shstrndx = Int(read16(bytes, 62))

        // The end of everything the headers describe must lie inside the file.
        var needed = 64
        let programEnd = phoff.addingReportingOverflow(phentsize * phnum)
        needed = max(needed, programEnd.overflow ? Int.max : programEnd.partialValue)
        if needed <= bytes.count, phentsize >= 56 {
            for index in 0..<phnum {
                let base = phoff + index * phentsize
                let offset = Int(clamping: read64(bytes, base + 8))
                let size = Int(clamping: read64(bytes, base + 32))
                let end = offset.addingReportingOverflow(size)
                needed = max(needed, end.overflow ? Int.max : end.partialValue)
            }
        }
        let sectionEnd = shoff.addingReportingOverflow(shentsize * shnum)
        if shnum > 0 { needed = max(needed, sectionEnd.overflow ? Int.max : sectionEnd.partialValue) }
        guard needed <= bytes.count else { return .failure(.truncated(expected: needed, actual: bytes.count)) }

        return .success(ELFSummary(containsSwift: hasSwiftSections(bytes, shoff, shentsize, shnum, shstrndx)))
    }

    static func hasSwiftSections(_ bytes: [UInt8], _ shoff: Int, _ shentsize: Int, _ shnum: Int, _ shstrndx: Int)
        -> Bool
    {
        guard shentsize >= 64, shstrndx < shnum else { return false }
        let names = shoff + shstrndx * shentsize
        let namesOffset = Int(clamping: read64(bytes, names + 24))
        let namesSize = Int(clamping: read64(bytes, names + 32))
        guard fits(namesOffset, namesSize, in: bytes.count) else { return false }
        let prefix = Array("swift5_".utf8)
        for index in 0..<shnum {
            let nameOffset = namesOffset + Int(read32(bytes, shoff + index * shentsize))
            guard nameOffset + prefix.count <= namesOffset + namesSize else { continue }
            if Array(bytes[nameOffset..<nameOffset + prefix.count]) == prefix { return true }
        }
        return false
    }

    /// The sections of a complete ELF file (`inspect` succeeded): name, type, offset, size, link.
    static func sections(_ bytes: [UInt8]) -> [(name: String, type: UInt32, offset: Int, size: Int, link: Int)] {
        guard bytes.count >= 64 else { return [] }
        let shoff = Int(clamping: read64(bytes, 40))
        let shentsize = Int(read16(bytes, 58))
        let shnum = Int(read16(bytes, 60))
        let shstrndx = Int(read16(bytes, 62))
        guard shentsize >= 64, shstrndx < shnum, fits(shoff, shnum * shentsize, in: bytes.count) else { return [] }
        let namesOffset = Int(clamping: read64(bytes, shoff + shstrndx * shentsize + 24))
        let namesSize = Int(clamping: read64(bytes, shoff + shstrndx * shentsize + 32))
        guard fits(namesOffset, namesSize, in: bytes.count) else { return [] }
        return (0..<shnum).map { index in
            let base = shoff + index * shentsize
            let name = string(bytes, at: namesOffset + Int(read32(bytes, base)), end: namesOffset + namesSize)
            return (
                name, read32(bytes, base + 4), Int(clamping: read64(bytes, base + 24)),
                Int(clamping: read64(bytes, base + 32)), Int(read32(bytes, base + 40))
            )
        }
    }

    /// A NUL-terminated string at `offset`, read no further than `end`.
    static func string(_ bytes: [UInt8], at offset: Int, end: Int) -> String {
        guard offset >= 0, offset < min(end, bytes.count) else { return "" }
        var stop = offset
        while stop < min(end, bytes.count), bytes[stop] != 0 { stop += 1 }
        return String(decoding: bytes[offset..<stop], as: UTF8.self)
    }

    /// Whether a `swift5_*` section has content: the image contains Swift code, not only the empty metadata every
    /// library linked by swiftc registers.
    static func hasSwiftCode(_ bytes: [UInt8]) -> Bool {
        sections(bytes).contains { $0.name.hasPrefix("swift5_") && $0.size > 0 }
    }

    /// Functions and variables the image exports besides `skill_plugin_entry` (Swift's mangled names aside: a
    /// Swift plugin exports its types by design), at most 64.
    static func extraExports(_ bytes: [UInt8]) -> [String] {
        let all = sections(bytes)
        guard let symbols = all.first(where: { $0.type == 11 }), symbols.link < all.count else { return [] }
        let names = all[symbols.link]
        guard fits(symbols.offset, symbols.size, in: bytes.count), fits(names.offset, names.size, in: bytes.count)
        else { return [] }
        var found: [String] = []
        var position = symbols.offset
        while position + 24 <= symbols.offset + symbols.size, found.count < 64 {
            defer { position += 24 }
            let info = bytes[position + 4]
            let visibility = bytes[position + 5] & 3
            let section = read16(bytes, position + 6)
            let binding = info >> 4
            let kind = info & 0xF
            guard section != 0, binding == 1 || binding == 2, kind == 1 || kind == 2, visibility != 1, visibility != 2
            else { continue }
            let name = string(bytes, at: names.offset + Int(read32(bytes, position)), end: names.offset + names.size)
            guard !name.isEmpty, name != "skill_plugin_entry", !name.hasPrefix("$s"), !name.hasPrefix("_$s") else {
                continue
            }
            found.append(name)
        }
        return found
    }

    /// Whether `size` bytes from `offset` lie inside `count` bytes — header values are a stranger's, so nothing
    /// here may overflow.
    static func fits(_ offset: Int, _ size: Int, in count: Int) -> Bool {
        offset >= 0 && size >= 0 && offset <= count && size <= count - offset
    }

    static func read16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    static func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    static func read64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
}

/// What a plugin author will trip over in a file that loads (`skillhost check` warns about it).
package struct PluginFileReport: Sendable, Equatable {
    /// The image has Swift code (non-empty `swift5_*` sections), not only the empty metadata swiftc links in.
    package let containsSwiftCode: Bool
    /// Functions and variables exported besides `skill_plugin_entry` (built without `-fvisibility=hidden`).
    package let extraExports: [String]

    /// Reads `file`'s ELF headers (nothing is executed); nil when it is not a complete ELF file.
    package static func inspect(_ file: String) -> PluginFileReport? {
        guard case .success(.bytes(let bytes)) = BoundedFile.read(file, limit: 512 << 20) else { return nil }
        guard case .success = ELFInspector.inspect(bytes) else { return nil }
        return PluginFileReport(
            containsSwiftCode: ELFInspector.hasSwiftCode(bytes), extraExports: ELFInspector.extraExports(bytes))
    }
}
