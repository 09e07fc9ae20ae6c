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
        guard namesOffset >= 0, namesSize >= 0, namesOffset + namesSize <= bytes.count else { return false }
        let prefix = Array("swift5_".utf8)
        for index in 0..<shnum {
            let nameOffset = namesOffset + Int(read32(bytes, shoff + index * shentsize))
            guard nameOffset + prefix.count <= namesOffset + namesSize else { continue }
            if Array(bytes[nameOffset..<nameOffset + prefix.count]) == prefix { return true }
        }
        return false
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
