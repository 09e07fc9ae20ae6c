import Foundation
import SkillJSON

extension TypedFunction {
    /// Calls the function with arguments given as JSON text, read straight into its C slots — when the text is
    /// plain: one object holding every parameter once and nothing else, each with a value of its type as given
    /// (booleans, integer literals within the type's range, any number for a double, strings without escapes).
    /// Such text is exactly what the parser and the generated schema accept unchanged, and the slots get the very
    /// values they would have produced (numbers are read by the parser's own code).
    ///
    /// Nil for any other text: the caller takes the general way (parse, validate leniently, explain). This reader
    /// never refuses a call and never decides one differently; it only skips building a value nobody needs.
    func call(plainText text: String) -> Result<JSONValue, TypedCallError>? {
        let outcome = text.utf8.withContiguousStorageIfAvailable { bytes in
            withSlots { base, owned in
                var reader = PlainArgumentReader(bytes: bytes)
                return reader.read(table, into: base, owned: &owned)
                    ? .filled : .declined
            }
        }
        return outcome ?? nil
    }
}

/// Reads one plain arguments object (see `TypedFunction.call(plainText:)`) into argument slots; any byte it does
/// not expect ends the reading with `false`. Linear in the text, no recursion, no allocation but the C strings.
struct PlainArgumentReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0

    /// Fills one slot per parameter; false when the text is not plain (strings already copied are marked in
    /// `owned`, so the caller frees them either way).
    mutating func read(_ table: ParameterTable, into base: UnsafeMutableRawPointer, owned: inout UInt32) -> Bool {
        skipSpace()
        // Blank text stands for `{}`.
        guard index < bytes.count else { return table.count == 0 }
        guard take(UInt8(ascii: "{")) else { return false }
        var filled: UInt32 = 0
        skipSpace()
        if !take(UInt8(ascii: "}")) {
            var member = 0
            repeat {
                skipSpace()
                guard let key = plainString(),
                    let slot = table.parameter(named: UnsafeBufferPointer(rebasing: bytes[key]), expected: member),
                    filled & (1 << slot) == 0
                else { return false }
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return false }
                skipSpace()
                guard store(table.types[slot], into: base + slot * 8, ownsString: &owned, slot: slot) else {
                    return false
                }
                filled |= 1 << slot
                member += 1
                skipSpace()
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return false }
        }
        skipSpace()
        return index == bytes.count && filled == (1 << table.count) - 1
    }

    /// Reads a value of `type` into `slot`; false when the value there is not of the type as given.
    private mutating func store(
        _ type: CType, into slot: UnsafeMutableRawPointer, ownsString owned: inout UInt32, slot number: Int
    ) -> Bool {
        switch type {
        case .bool:
            if literal("true") {
                slot.storeBytes(of: 1, as: UInt8.self)
            } else if literal("false") {
                slot.storeBytes(of: 0, as: UInt8.self)
            } else {
                return false
            }
        case .int32:
            guard case .int(let value)? = JSONParser.number(in: bytes, at: &index), let narrow = Int32(exactly: value)
            else { return false }
            slot.storeBytes(of: narrow, as: Int32.self)
        case .int64:
            guard case .int(let value)? = JSONParser.number(in: bytes, at: &index) else { return false }
            slot.storeBytes(of: value, as: Int64.self)
        case .double:
            switch JSONParser.number(in: bytes, at: &index) {
            case .int(let value)?: slot.storeBytes(of: Double(value), as: Double.self)
            case .double(let value)?: slot.storeBytes(of: value, as: Double.self)
            default: return false
            }
        case .string:
            guard let range = plainString(), let copy = malloc(range.count + 1) else { return false }
            if let source = bytes.baseAddress { memcpy(copy, source + range.lowerBound, range.count) }
            copy.storeBytes(of: 0, toByteOffset: range.count, as: UInt8.self)
            slot.storeBytes(of: copy, as: UnsafeMutableRawPointer.self)
            owned |= 1 << number
        case .void:
            return false
        }
        return true
    }

    /// A string with no escape and no control character: the range of its contents; nil otherwise.
    private mutating func plainString() -> Range<Int>? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return start..<(index - 1)
            }
            guard byte != UInt8(ascii: "\\"), byte >= 0x20 else { return nil }
            index += 1
        }
        return nil
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        let matches = word.withUTF8Buffer {
            UnsafeBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual($0)
        }
        if matches { index += count }
        return matches
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}

/// A typed function's parameter types and UTF-8 names, allocated once at load and freed with the function (whose
/// `deinit` calls `deallocate`): a trivial value, so reading it on a call retains nothing.
struct ParameterTable {
    let types: UnsafeMutableBufferPointer<CType>
    /// Every name's bytes, one after another; name `i` is `names[bounds[i]..<bounds[i + 1]]`.
    private let names: UnsafeMutableBufferPointer<UInt8>
    private let bounds: UnsafeMutableBufferPointer<Int>

    init(_ parameters: [TypedSignature.Parameter]) {
        types = .allocate(capacity: parameters.count)
        _ = types.initialize(from: parameters.map(\.type))
        let bytes = parameters.flatMap(\.name.utf8)
        names = .allocate(capacity: bytes.count)
        _ = names.initialize(from: bytes)
        bounds = .allocate(capacity: parameters.count + 1)
        var end = 0
        bounds[0] = 0
        for (index, parameter) in parameters.enumerated() {
            end += parameter.name.utf8.count
            bounds[index + 1] = end
        }
    }

    var count: Int { types.count }

    /// The parameter named `key`, trying the one expected at this position first.
    func parameter(named key: UnsafeBufferPointer<UInt8>, expected: Int) -> Int? {
        if expected < count, name(expected).elementsEqual(key) { return expected }
        return (0..<count).first { name($0).elementsEqual(key) }
    }

    private func name(_ index: Int) -> UnsafeMutableBufferPointer<UInt8> {
        UnsafeMutableBufferPointer(rebasing: names[bounds[index]..<bounds[index + 1]])
    }

    func deallocate() {
        types.deallocate()
        names.deallocate()
        bounds.deallocate()
    }
}
