extension JSONValue {
    /// Compact JSON text (no spaces), members in stored order.
    public var jsonText: String {
        // A scalar (a typed skill's result, most often) needs no buffer.
        switch self {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .int(let i): return String(i)
        case .double(let d): return JSONWriter.formatDouble(d)
        case .string, .array, .object: break
        }
        var out: [UInt8] = []
        out.reserveCapacity(64)
        JSONWriter.write(self, into: &out, indent: nil, level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the compact JSON text (as `jsonText`) to `out`: a caller that frames the text itself (a JSON-RPC
    /// line) writes it in place instead of copying a string.
    public func writeJSONText(into out: inout [UInt8]) {
        JSONWriter.write(self, into: &out, indent: nil, level: 0)
    }

    /// Indented JSON text (two spaces), for people.
    public var prettyJSONText: String {
        var out: [UInt8] = []
        JSONWriter.write(self, into: &out, indent: 2, level: 0)
        return String(decoding: out, as: UTF8.self)
    }

    /// The text a person wants to see: strings without quotes, everything else as compact JSON.
    public var displayText: String {
        if case .string(let s) = self { return s }
        return jsonText
    }
}

/// Writes JSON text into a byte buffer.
enum JSONWriter {
    static func write(_ value: JSONValue, into out: inout [UInt8], indent: Int?, level: Int) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): out.append(contentsOf: formatDouble(d).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent: indent, level: level + 1)
                write(element, into: &out, indent: indent, level: level + 1)
            }
            if !elements.isEmpty { newline(&out, indent: indent, level: level) }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent: indent, level: level + 1)
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if indent != nil { out.append(UInt8(ascii: " ")) }
                write(member.value, into: &out, indent: indent, level: level + 1)
            }
            if object.count > 0 { newline(&out, indent: indent, level: level) }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func newline(_ out: inout [UInt8], indent: Int?, level: Int) {
        guard let indent else { return }
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * level))
    }

    /// Shortest text that reads back as the same double; integral values without ".0"; non-finite as null.
    static func formatDouble(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        if d.rounded() == d, abs(d) < 1e15 { return String(Int64(d)) }
        return d.description
    }

    static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends `string` quoted and escaped. Runs of bytes that need no escape (most strings are one) are copied
    /// whole: byte by byte, writing a worker's launch line cost its start some 60 µs.
    static func writeString(_ string: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            var run = 0  // where the bytes not yet copied begin
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if run < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index])) }
                run = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0..<0x20:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hexDigits[Int(byte >> 4)])
                    out.append(hexDigits[Int(byte & 15)])
                default: out.append(byte)
                }
            }
            if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
