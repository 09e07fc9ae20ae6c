import Foundation

/// Text from outside the host — the command line, standard input — read as UTF-8 or refused with the byte that
/// is wrong. Never repaired: a U+FFFD in place of the byte would reach the skill as a different value than the one
/// typed, and the parse error would point at the wrong thing.
enum UTF8Input {
    /// The offset of the first byte that does not belong to well-formed UTF-8 (no overlong forms, no surrogates,
    /// nothing past U+10FFFF), or nil when all of it is.
    static func firstInvalidByte(_ bytes: [UInt8]) -> Int? {
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0x00...0x7F: length = 1
            case 0xC2...0xDF: length = 2
            case 0xE0: (length, second) = (3, 0xA0...0xBF)
            case 0xED: (length, second) = (3, 0x80...0x9F)
            case 0xE1...0xEF: length = 3
            case 0xF0: (length, second) = (4, 0x90...0xBF)
            case 0xF4: (length, second) = (4, 0x80...0x8F)
            case 0xF1...0xF3: length = 4
            default: return index
            }
            for position in 1..<max(length, 1) {
                guard index + position < bytes.count else { return index }
                let range = position == 1 ? second : 0x80...0xBF
                guard range.contains(bytes[index + position]) else { return index + position }
            }
            index += length
        }
        return nil
    }

    /// `bytes` as a string, or a usage error naming `what`, the byte and its offset.
    static func decode(_ bytes: [UInt8], _ what: String) throws(UsageError) -> String {
        if let offset = firstInvalidByte(bytes) {
            throw UsageError(
                "\(what) is not valid UTF-8: byte 0x\(String(format: "%02X", bytes[offset])) at offset \(offset)",
                hint: "give the text in UTF-8 (a JSON string can spell any character as \\uXXXX)")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The process's arguments after the program name, each checked.
    static func commandLine() throws(UsageError) -> [String] {
        var arguments: [String] = []
        for index in 1..<Int(CommandLine.argc) {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = Array(UnsafeBufferPointer(start: pointer, count: strlen(pointer))).map { UInt8(bitPattern: $0) }
            arguments.append(try decode(bytes, "argument \(index) of the command line"))
        }
        return arguments
    }

    /// The most of standard input read (JSON arguments or a question; more is refused, not read to the end).
    static let maximumInput = 16 << 20

    /// All of standard input, checked; at most `maximumInput` bytes.
    static func standardInput() throws(UsageError) -> String {
        var bytes: [UInt8] = []
        while bytes.count <= maximumInput {
            let chunk = (try? FileHandle.standardInput.read(upToCount: 1 << 16)) ?? nil
            guard let chunk, !chunk.isEmpty else { break }
            bytes += chunk
        }
        guard bytes.count <= maximumInput else {
            throw UsageError(
                "standard input is more than \(maximumInput >> 20) MB",
                hint:
                    "send at most \(maximumInput >> 20) MB: arguments and questions are read whole before anything runs"
            )
        }
        return try decode(bytes, "standard input")
    }
}
