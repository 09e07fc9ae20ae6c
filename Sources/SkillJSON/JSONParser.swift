#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a text is not JSON: a sentence with the byte offset where parsing stopped.
public struct JSONParseError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What was wrong, e.g. `expected ',' or '}' after an object member`.
    public let reason: String
    /// Byte offset (0-based) in the input.
    public let offset: Int

    public var description: String { "invalid JSON at byte \(offset): \(reason)" }

    /// The sentence for a file a person edits: where by line and column (from 1) as well as byte, and — when the
    /// parser ran out of text — that the file ends early, so a cut-off file reads as one.
    public func located(in bytes: [UInt8]) -> String {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // a character, not each byte of one
            }
        }
        let endsEarly = offset >= bytes.count || reason.hasPrefix("unterminated")
        return "invalid JSON at line \(line), column \(column) (byte \(offset)): \(reason)"
            + (endsEarly ? "; the text ends early (is the file cut off?)" : "")
    }
}

extension JSONValue {
    /// Parses one JSON text (RFC 8259). Rejects trailing content, invalid UTF-8, lone surrogates, duplicate member
    /// names and nesting deeper than 512.
    ///
    /// - Throws: `JSONParseError` naming the offset and the reason.
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { bytes -> Result<JSONValue, JSONParseError> in
            var parser = JSONParser(bytes: bytes)
            do throws(JSONParseError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        self = try result.get()
    }

    /// Parses one JSON text from UTF-8 bytes.
    public init(parsing bytes: UnsafeBufferPointer<UInt8>) throws(JSONParseError) {
        var parser = JSONParser(bytes: bytes)
        self = try parser.parseDocument()
    }

    /// Parses one JSON text from UTF-8 bytes; `maximumDepth` bounds nesting (an envelope around a value that may
    /// itself be 512 deep needs a few levels more).
    public init(parsing bytes: [UInt8], maximumDepth: Int = JSONParser.maximumDepth) throws(JSONParseError) {
        let result = bytes.withUnsafeBufferPointer { buffer -> Result<JSONValue, JSONParseError> in
            var parser = JSONParser(bytes: buffer, maximumDepth: maximumDepth)
            do throws(JSONParseError) { return .success(try parser.parseDocument()) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

/// Not Sendable: a parser reads through a pointer valid only while `JSONValue(parsing:)` runs.
@available(*, unavailable)
extension JSONParser: Sendable {}

/// A recursive-descent parser over UTF-8 bytes.
public struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0
    let maximumDepth: Int
    /// How deep a JSON text may nest by default.
    public static let maximumDepth = 512

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int = Self.maximumDepth) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count { throw fail("unexpected content after the JSON value") }
        return value
    }

    func fail(_ reason: String) -> JSONParseError { JSONParseError(reason: reason, offset: index) }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw fail("unexpected end of input, expected a value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default:
            throw fail("unexpected character '\(Unicode.Scalar(bytes[index]))', expected a value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw fail("invalid literal, expected '\(literal)'") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw fail("invalid literal, expected '\(literal)'")
        }
        index += count
    }

    mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > maximumDepth { throw fail("nesting deeper than \(maximumDepth) levels") }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enter()
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        var names: Set<MemberName>?  // for large objects; small ones are checked by a scan
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject())
        }
        // One allocation for the common small object instead of growing through 1 and 2.
        members.reserveCapacity(4)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw fail("expected a member name in double quotes")
            }
            let keyOffset = index
            let key = try parseString()
            if members.count < JSONObject.indexThreshold {
                if members.contains(where: { sameScalars($0.key, key) }) { throw duplicate(key, at: keyOffset) }
            } else {
                if names == nil { names = Set(members.map { MemberName($0.key) }) }
                if names?.insert(MemberName(key)).inserted == false { throw duplicate(key, at: keyOffset) }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw fail("expected ':' after member name \"\(key)\"")
            }
            index += 1
            skipWhitespace()
            let value = try parseValue()
            members.append((key: key, value: value))
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input, expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                break
            }
            throw fail("expected ',' or '}' after an object member")
        }
        depth -= 1
        return .object(JSONObject(uniqueMembers: members))
    }

    /// Duplicate member names are refused: readers disagree on which value counts (the host would validate one
    /// and a plugin's C helper read the other).
    func duplicate(_ key: String, at offset: Int) -> JSONParseError {
        JSONParseError(reason: "duplicate member name \"\(key)\"", offset: offset)
    }

    mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw fail("unexpected end of input, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                break
            }
            throw fail("expected ',' or ']' after an array element")
        }
        depth -= 1
        return .array(elements)
    }

    mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes. ASCII text needs no UTF-8 validation.
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                if highBits & 0x80 == 0 {
                    index += 1
                    return String(decoding: slice, as: UTF8.self)
                }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    index = start
                    throw fail("string is not valid UTF-8")
                }
                index += 1
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in string (escape it as \\u00XX)") }
            highBits |= byte
            index += 1
        }
        var buffer = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw fail("string is not valid UTF-8")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(escape)
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    buffer.append(contentsOf: Array(String(Character(scalar)).utf8))
                default:
                    index -= 1
                    throw fail("invalid escape '\\\(Unicode.Scalar(escape))' in string")
                }
            default:
                if byte < 0x20 { throw fail("control character in string (escape it as \\u00XX)") }
                buffer.append(byte)
                index += 1
            }
        }
        throw fail("unterminated string")
    }

    mutating func readHex4() throws(JSONParseError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw fail("incomplete \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid hex digit in \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let high = try readHex4()
        if (0xD800...0xDBFF).contains(high) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw fail("lone surrogate \\u\(String(high, radix: 16)) in string") }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("invalid surrogate pair in string") }
            let combined = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw fail("invalid surrogate pair in string") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else { throw fail("lone surrogate \\u\(String(high, radix: 16))") }
        return scalar
    }

    mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit in number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw fail("leading zero in number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { throw fail("expected a digit in exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if isInteger, let value = Self.int64(text) { return .int(value) }
        if let value = Self.exactDouble(text) { return .double(value) }
        // The grammar is already checked, so strtod parses exactly this span; copy it to add the terminator.
        let value: Double
        if text.count < 64 {
            value = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
                for offset in 0..<text.count { buffer[offset] = CChar(bitPattern: text[offset]) }
                buffer[text.count] = 0
                // unsafelyUnwrapped is sound: a temporary allocation of capacity 64 always has a base address.
                return strtod(buffer.baseAddress.unsafelyUnwrapped, nil)
            }
        } else {
            guard let parsed = Double(String(decoding: text, as: UTF8.self)) else {
                index = start
                throw fail("invalid number")
            }
            value = parsed
        }
        return .double(value)
    }

    /// Exact Int64 from ASCII digits with an optional leading '-'; nil on overflow.
    static func int64(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
        var negative = false
        var position = 0
        if text[0] == UInt8(ascii: "-") {
            negative = true
            position = 1
        }
        var value: Int64 = 0
        while position < text.count {
            let digit = Int64(text[position] - UInt8(ascii: "0"))
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) =
                negative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
            if o1 || o2 { return nil }
            value = next
            position += 1
        }
        return value
    }

    /// Exact powers of ten as doubles (every one up to 10^22 is representable).
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// The common number, correctly rounded without `strtod`: at most 15 significant digits and a decimal exponent
    /// within ±22, so the digits and the power of ten are both exact doubles and one multiplication or division
    /// rounds once (Clinger's fast path). nil for anything else, which `strtod` then parses. `text` already
    /// follows the JSON number grammar.
    static func exactDouble(_ text: UnsafeBufferPointer<UInt8>) -> Double? {
        var position = 0
        let negative = text[0] == UInt8(ascii: "-")
        if negative { position = 1 }
        var mantissa: Int64 = 0
        var digits = 0
        var exponent = 0
        var seenPoint = false
        while position < text.count {
            let byte = text[position]
            if byte == UInt8(ascii: ".") {
                seenPoint = true
            } else if byte >= 0x30 && byte <= 0x39 {
                if mantissa != 0 || byte != 0x30 { digits += 1 }
                guard digits <= 15 else { return nil }
                mantissa = mantissa * 10 + Int64(byte - 0x30)
                if seenPoint { exponent -= 1 }
            } else {
                break  // 'e' or 'E'
            }
            position += 1
        }
        if position < text.count {
            position += 1
            var exponentNegative = false
            if text[position] == UInt8(ascii: "+") || text[position] == UInt8(ascii: "-") {
                exponentNegative = text[position] == UInt8(ascii: "-")
                position += 1
            }
            var written = 0
            while position < text.count {
                written = written * 10 + Int(text[position] - 0x30)
                guard written <= 400 else { return nil }
                position += 1
            }
            exponent += exponentNegative ? -written : written
        }
        guard abs(exponent) <= 22 else { return nil }
        var value = Double(mantissa)
        value = exponent < 0 ? value / powersOfTen[-exponent] : value * powersOfTen[exponent]
        return negative ? -value : value
    }

    @inline(__always) func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}

extension JSONParser {
    /// Reads one JSON number at `index` exactly as a document's number is read (`.int` for an integer literal within
    /// Int64, else `.double`), moving `index` past it; nil, with `index` unchanged, when no number starts there.
    /// For readers of a fixed shape (a typed skill's arguments) that must agree with the full parser to the bit.
    public static func number(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> JSONValue? {
        guard index < bytes.count else { return nil }
        var parser = JSONParser(bytes: bytes)
        parser.index = index
        guard let value = try? parser.parseNumber() else { return nil }
        index = parser.index
        return value
    }
}
