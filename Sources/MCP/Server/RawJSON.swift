/// Pieces of a JSON text as written, for what parsing would change: a request id `123456789012345678901234567890`
/// must come back digit for digit, not as `1.2345678901234568e+29`.
///
/// The text has already been parsed (so it is known to be well-formed); these scans only find boundaries.
enum RawJSON {
    /// The text of member `key` of the object that `bytes` holds, as written; nil when absent.
    static func member(_ key: String, in bytes: ArraySlice<UInt8>) -> String? {
        var index = skipSpace(bytes, bytes.startIndex)
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        let wanted = Array(key.utf8)
        while true {
            index = skipSpace(bytes, index)
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") else { return nil }
            let nameStart = index + 1
            index = skipValue(bytes, index)
            let name = bytes[nameStart..<(index - 1)]
            index = skipSpace(bytes, index)
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ":") else { return nil }
            index = skipSpace(bytes, index + 1)
            let valueStart = index
            index = skipValue(bytes, index)
            if name.elementsEqual(wanted) { return String(decoding: bytes[valueStart..<index], as: UTF8.self) }
            index = skipSpace(bytes, index)
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ",") else { return nil }
            index += 1
        }
    }

    /// The elements of the array that `bytes` holds, as slices of it.
    static func elements(in bytes: ArraySlice<UInt8>) -> [ArraySlice<UInt8>] {
        var index = skipSpace(bytes, bytes.startIndex)
        guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "[") else { return [] }
        index += 1
        var result: [ArraySlice<UInt8>] = []
        while true {
            index = skipSpace(bytes, index)
            guard index < bytes.endIndex, bytes[index] != UInt8(ascii: "]") else { return result }
            let start = index
            index = skipValue(bytes, index)
            result.append(bytes[start..<index])
            index = skipSpace(bytes, index)
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: ",") else { return result }
            index += 1
        }
    }

    private static func skipSpace(_ bytes: ArraySlice<UInt8>, _ start: Int) -> Int {
        var index = start
        while index < bytes.endIndex, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    /// The index just past the value that starts at `start`.
    private static func skipValue(_ bytes: ArraySlice<UInt8>, _ start: Int) -> Int {
        var index = start
        var depth = 0
        repeat {
            guard index < bytes.endIndex else { return index }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.endIndex, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                index += 1
            default:
                guard depth > 0 else {
                    // A number or literal: up to the next delimiter.
                    while index < bytes.endIndex, !",}] \t\r\n".utf8.contains(bytes[index]) { index += 1 }
                    return index
                }
                index += 1
            }
        } while depth > 0
        return index
    }
}
