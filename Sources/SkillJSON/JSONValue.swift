#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A JSON value.
///
/// Numbers keep their integer precision: a literal without fraction or exponent that fits `Int64` is `.int`,
/// everything else `.double`. Objects keep member order (schemas and envelopes print the way they were written),
/// but compare without regard to order, and `1` equals `1.0`, as JSON Schema requires.
public enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The JSON Schema type name of this value: `null`, `boolean`, `integer`, `number`, `string`, `array`,
    /// `object` (a double with no fractional part is an `integer`).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double(let d): return d.rounded() == d && d.isFinite ? "integer" : "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The value as a `Double` when it is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    /// The value as an integer when it is a whole number within `range`; nil otherwise (`1e300`, `-1`, `2.5`, a
    /// string) — never a trap. For every number that comes from outside (a record, a model server, a peer).
    public func integer(in range: ClosedRange<Int>) -> Int? {
        let whole: Int?
        switch self {
        case .int(let i): whole = Int(exactly: i)
        case .double(let d): whole = d.isFinite ? Int(exactly: d) : nil
        default: whole = nil
        }
        return whole.flatMap { range.contains($0) ? $0 : nil }
    }

    /// The value as a count, clamped into `0...limit`: a negative or non-numeric value is 0, a larger one (`1e300`,
    /// infinity) is `limit`, a fraction is rounded down. For counts a stranger reports (tokens a model server used).
    public func count(upTo limit: Int) -> Int {
        guard let number = doubleValue, !number.isNaN, number > 0 else { return 0 }
        return number >= Double(limit) ? limit : min(limit, Int(number.rounded(.down)))
    }

    /// The string payload, if this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The object payload, if this is an object.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The array payload, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The member `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }
}

extension JSONValue: Equatable {
    /// JSON equality: numbers by value (`1 == 1.0`), objects regardless of member order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.int, .double), (.double, .int), (.double, .double):
            return lhs.doubleValue == rhs.doubleValue
        case (.string(let a), .string(let b)): return sameScalars(a, b)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }
}

extension JSONValue {
    /// Orders two numbers exactly (-1, 0, 1): integers as integers, an integer against a double without rounding
    /// the integer to a double (so -2^63 is below -2^63 + 1). nil when either is not a number or is NaN.
    public static func compareNumbers(_ lhs: JSONValue, _ rhs: JSONValue) -> Int? {
        switch (lhs, rhs) {
        case (.int(let a), .int(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.int(let a), .double(let b)): return compare(a, b)
        case (.double(let a), .int(let b)): return compare(b, a).map { -$0 }
        case (.double(let a), .double(let b)):
            guard !a.isNaN, !b.isNaN else { return nil }
            return a < b ? -1 : (a == b ? 0 : 1)
        default: return nil
        }
    }

    /// An integer against a double, exactly.
    private static func compare(_ integer: Int64, _ double: Double) -> Int? {
        guard !double.isNaN else { return nil }
        if double >= 9_223_372_036_854_775_808.0 { return -1 }  // 2^63: above every Int64
        if double < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = double.rounded(.down)  // within [-2^63, 2^63): exactly an Int64
        let truncated = Int64(whole)
        if integer != truncated { return integer < truncated ? -1 : 1 }
        return double > whole ? -1 : 0
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}

/// The members of a JSON object, in the order they were written.
///
/// Lookups in small objects (what arguments and results usually are) are linear scans, the fastest choice there;
/// objects with more than `indexThreshold` members also keep an index by name, so building or reading an object
/// with 100,000 members stays linear in its size.
public struct JSONObject: Sendable, Equatable {
    /// The members in order. Keys are unique.
    public private(set) var members: [(key: String, value: JSONValue)]
    /// Member positions by name, kept once the object has more than `indexThreshold` members.
    private var positions: [MemberName: Int]?

    static let indexThreshold = 16

    /// Creates an object from members; a later duplicate key replaces the earlier value.
    public init(_ members: [(key: String, value: JSONValue)] = []) {
        self.members = []
        self.members.reserveCapacity(members.count)
        for member in members { self[member.key] = member.value }
    }

    /// Creates an object from members whose keys the caller knows to be unique, compared by code points (the parser
    /// checked them; a caller writing fixed keys knows them): the array becomes the object as it is, one allocation
    /// for a small object. Not checked: duplicate keys make lookups find the first.
    public init(uniqueMembers members: [(key: String, value: JSONValue)]) {
        self.members = members
        if members.count > Self.indexThreshold { rebuildIndex() }
    }

    /// Number of members.
    public var count: Int { members.count }

    /// The keys in order.
    public var keys: [String] { members.map(\.key) }

    private func position(of key: String) -> Int? {
        if let positions { return positions[MemberName(key)] }
        return members.firstIndex { sameScalars($0.key, key) }
    }

    private mutating func rebuildIndex() {
        guard members.count > Self.indexThreshold else {
            positions = nil
            return
        }
        var index: [MemberName: Int] = [:]
        index.reserveCapacity(members.count)
        for (position, member) in members.enumerated() { index[MemberName(member.key)] = position }
        positions = index
    }

    /// The value of `key`, looked for at `position` first (where callers that know the usual order expect it).
    public func value(_ key: String, expectedAt position: Int) -> JSONValue? {
        if position < members.count, sameScalars(members[position].key, key) { return members[position].value }
        return self[key]
    }

    /// Reads, replaces, appends (new key) or removes (nil) a member.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let index = position(of: key) {
                if let newValue {
                    members[index].value = newValue
                } else {
                    members.remove(at: index)
                    if positions != nil { rebuildIndex() }
                }
            } else if let newValue {
                members.append((key: key, value: newValue))
                if positions != nil {
                    positions?[MemberName(key)] = members.count - 1
                } else if members.count > Self.indexThreshold {
                    rebuildIndex()
                }
            }
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.count == rhs.count else { return false }
        for member in lhs.members {
            guard let other = rhs[member.key], other == member.value else { return false }
        }
        return true
    }
}

/// A member name as a dictionary key that compares by code points (see `sameScalars`), not by Swift's canonical
/// equivalence.
struct MemberName: Hashable {
    let text: String

    init(_ text: String) { self.text = text }

    static func == (lhs: MemberName, rhs: MemberName) -> Bool { sameScalars(lhs.text, rhs.text) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// JSON compares strings by code points; Swift's `==` uses canonical equivalence ("é" == "e\u{301}"), which JSON
/// Schema's `const`/`enum` and member names must not.
@inline(__always)
func sameScalars(_ a: String, _ b: String) -> Bool {
    let count = a.utf8.count
    guard count == b.utf8.count else { return false }
    let fast = a.utf8.withContiguousStorageIfAvailable { pa in
        b.utf8.withContiguousStorageIfAvailable { pb in
            // unsafelyUnwrapped is sound: a buffer of count > 0 bytes has a base address (the 0 case is checked
            // first and never reaches memcmp).
            count == 0 || memcmp(pa.baseAddress.unsafelyUnwrapped, pb.baseAddress.unsafelyUnwrapped, count) == 0
        }
    }
    if let fast, let result = fast { return result }
    return a.utf8.elementsEqual(b.utf8)
}
