import CFFI
import Foundation
import SkillJSON
import SkillSDK

/// A typed skill's C function with its `ffi_cif`, prepared once at load and read-only afterwards.
///
/// - Important: `@unchecked Sendable` is safe because the cif, the argument-type array and the function pointer
///   are written once in `init` and only read afterwards (`ffi_call` does not modify the cif), and the memory is
///   freed in `deinit`, when no call can hold a reference any more.
final class TypedFunction: @unchecked Sendable {
    let signature: TypedSignature
    /// The parameters' types and names in memory a call reads without retaining anything.
    let table: ParameterTable
    /// `signature.returnType`, read on every call without copying the signature.
    private let returnType: CType
    private let function: @convention(c) () -> Void
    private let cif: UnsafeMutablePointer<ffi_cif>
    private let argumentTypes: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    private let freeString: (@convention(c) (UnsafeMutablePointer<CChar>?) -> Void)?

    /// Prepares the call interface. Returns nil (with a reason) when libffi refuses it.
    init(
        signature: TypedSignature, function: @escaping @convention(c) () -> Void,
        freeString: (@convention(c) (UnsafeMutablePointer<CChar>?) -> Void)?
    ) throws(TypedCallError) {
        self.signature = signature
        table = ParameterTable(signature.parameters)
        returnType = signature.returnType
        self.function = function
        self.freeString = freeString
        cif = .allocate(capacity: 1)
        let count = signature.parameters.count + (signature.reportsErrors ? 1 : 0)
        argumentTypes = .allocate(capacity: max(1, count))
        for (index, parameter) in signature.parameters.enumerated() {
            argumentTypes[index] = Self.ffiType(parameter.type)
        }
        if signature.reportsErrors { argumentTypes[count - 1] = skillhost_ffi_type_pointer() }
        let status = ffi_prep_cif(
            cif, skillhost_ffi_default_abi(), UInt32(count), Self.ffiType(signature.returnType), argumentTypes)
        guard status == FFI_OK else {
            cif.deallocate()
            argumentTypes.deallocate()
            table.deallocate()
            throw .prepareFailed(Int(status.rawValue))
        }
    }

    deinit {
        cif.deallocate()
        argumentTypes.deallocate()
        table.deallocate()
    }

    static func ffiType(_ type: CType) -> UnsafeMutablePointer<ffi_type>? {
        switch type {
        case .void: return skillhost_ffi_type_void()
        case .bool: return skillhost_ffi_type_uint8()
        case .int32: return skillhost_ffi_type_sint32()
        case .int64: return skillhost_ffi_type_sint64()
        case .double: return skillhost_ffi_type_double()
        case .string: return skillhost_ffi_type_pointer()
        }
    }

    /// Converts validated arguments to exactly-typed C values, calls the function, converts the result.
    ///
    /// Runs on the caller's thread: the function executes plugin code.
    func call(_ arguments: JSONObject) -> Result<JSONValue, TypedCallError> {
        let result = withSlots { base, owned in
            for (index, parameter) in signature.parameters.enumerated() {
                guard let value = arguments.value(parameter.name, expectedAt: index) else {
                    return .failed(.argument(parameter.name, ArgumentReason("is missing")))
                }
                switch Self.store(value, as: parameter.type, into: base + index * 8) {
                case .success(_?): owned |= 1 << index
                case .success(nil): break
                case .failure(let reason): return .failed(.argument(parameter.name, reason))
                }
            }
            return .filled
        }
        return result ?? .failure(.prepareFailed(-1))
    }

    /// What filling the argument slots came to.
    enum Filling {
        case filled
        case failed(TypedCallError)
        /// The filler cannot read these arguments (the caller goes another way).
        case declined
    }

    /// Gives `fill` one 8-byte slot per parameter (every supported type fits) and a mask in which it sets bit `i`
    /// when slot `i` holds a C string it allocated with malloc; calls the function once they are filled and frees
    /// those strings afterwards, whatever happened. Nil when `fill` declined.
    func withSlots(_ fill: (UnsafeMutableRawPointer, inout UInt32) -> Filling) -> Result<JSONValue, TypedCallError>? {
        let count = table.count
        // One more slot for a function that reports errors: the pointer to its `skill_error`.
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: count + 1) { slots in
            withUnsafeTemporaryAllocation(of: UnsafeMutableRawPointer?.self, capacity: count + 1) { pointers in
                guard let base = UnsafeMutableRawPointer(slots.baseAddress) else { return .failure(.prepareFailed(-1)) }
                var owned: UInt32 = 0
                defer {
                    for index in 0..<count where owned & (1 << index) != 0 {
                        free(base.load(fromByteOffset: index * 8, as: UnsafeMutableRawPointer?.self))
                    }
                }
                switch fill(base, &owned) {
                case .declined: return nil
                case .failed(let error): return .failure(error)
                case .filled: break
                }
                for index in 0..<count { pointers[index] = base + index * 8 }
                var returnSlot: UInt64 = 0
                guard reportsErrors else {
                    withUnsafeMutablePointer(to: &returnSlot) { returnPointer in
                        ffi_call(cif, function, returnPointer, pointers.baseAddress)
                    }
                    return convertResult(returnSlot)
                }
                var report = skill_error()
                report.struct_size = UInt32(MemoryLayout<skill_error>.size)
                let reported = withUnsafeMutablePointer(to: &report) { record -> TypedCallError? in
                    base.storeBytes(
                        of: UnsafeMutableRawPointer(record), toByteOffset: count * 8, as: UnsafeMutableRawPointer.self)
                    pointers[count] = base + count * 8
                    withUnsafeMutablePointer(to: &returnSlot) { returnPointer in
                        ffi_call(cif, function, returnPointer, pointers.baseAddress)
                    }
                    return Self.reported(record.pointee)
                }
                guard let reported else { return convertResult(returnSlot) }
                // A failed function's string is released, never read (it may be anything but a string it owns).
                if returnType == .string, let pointer = UnsafeMutablePointer<CChar>(bitPattern: UInt(returnSlot)) {
                    freeString?(pointer)
                }
                return .failure(reported)
            }
        }
    }

    /// Whether the function takes a `skill_error *` after its arguments (ABI 1.2).
    private var reportsErrors: Bool { signature.reportsErrors }

    /// The failure a typed function reported through its `skill_error`, or nil when it reported none. The message is
    /// read within the record (at most 511 bytes, whatever the function wrote) and must be UTF-8.
    static func reported(_ record: skill_error) -> TypedCallError? {
        guard record.code != 0 else { return nil }
        let message = withUnsafeBytes(of: record.message) { bytes -> String in
            let text = bytes.prefix(bytes.count - 1).prefix { $0 != 0 }
            return String(validating: text, as: UTF8.self)
                ?? "the skill failed, and its message is not valid UTF-8"
        }
        return .reported(code: record.code, message: message)
    }

    /// Whether `arguments` satisfies the generated schema exactly as given — every parameter present with a value
    /// of its type (integers in range), nothing else — so lenient validation would neither change nor report
    /// anything. The quick check for the common call; any other value goes through the validator, which coerces
    /// and explains.
    func acceptsAsGiven(_ arguments: JSONValue) -> Bool {
        guard case .object(let object) = arguments, object.count == signature.parameters.count else { return false }
        for (index, parameter) in signature.parameters.enumerated() {
            switch (parameter.type, object.value(parameter.name, expectedAt: index)) {
            case (.bool, .bool?), (.double, .int?), (.double, .double?), (.int64, .int?), (.string, .string?): continue
            case (.int32, .int(let value)?) where Int32(exactly: value) != nil: continue
            default: return false
            }
        }
        return true
    }

    /// Writes one argument into its slot; returns a C string the caller must free, if one was made.
    static func store(_ value: JSONValue, as type: CType, into slot: UnsafeMutableRawPointer)
        -> Result<UnsafeMutablePointer<CChar>?, ArgumentReason>
    {
        switch type {
        case .bool:
            guard case .bool(let b) = value else { return .failure(.init("expected a boolean, got \(value.typeName)")) }
            slot.storeBytes(of: b ? 1 : 0, as: UInt8.self)
        case .int32:
            switch exactInteger(value) {
            case .success(let i):
                guard let narrow = Int32(exactly: i) else {
                    return .failure(.init("must be between \(Int32.min) and \(Int32.max), got \(value.jsonText)"))
                }
                slot.storeBytes(of: narrow, as: Int32.self)
            case .failure(let reason): return .failure(reason)
            }
        case .int64:
            switch exactInteger(value) {
            case .success(let i): slot.storeBytes(of: i, as: Int64.self)
            case .failure(let reason): return .failure(reason)
            }
        case .double:
            guard let d = value.doubleValue else { return .failure(.init("expected a number, got \(value.typeName)")) }
            slot.storeBytes(of: d, as: Double.self)
        case .string:
            guard case .string(let s) = value else {
                return .failure(.init("expected a string, got \(value.typeName)"))
            }
            guard !s.utf8.contains(0) else { return .failure(.init("must not contain NUL characters")) }
            guard let copy = strdup(s) else { return .failure(.init("cannot be copied (out of memory)")) }
            slot.storeBytes(of: UnsafeMutableRawPointer(copy), as: UnsafeMutableRawPointer.self)
            return .success(copy)
        case .void:
            return .failure(.init("cannot be void"))
        }
        return .success(nil)
    }

    /// The exact integer a JSON number stands for: fractions and values outside Int64 are errors.
    static func exactInteger(_ value: JSONValue) -> Result<Int64, ArgumentReason> {
        switch value {
        case .int(let i): return .success(i)
        case .double(let d):
            guard d.rounded() == d else { return .failure(.init("expected an integer, got \(value.jsonText)")) }
            guard let i = Int64(exactly: d) else {
                return .failure(.init("must be between \(Int64.min) and \(Int64.max), got \(value.jsonText)"))
            }
            return .success(i)
        default:
            return .failure(.init("expected an integer, got \(value.typeName)"))
        }
    }

    func convertResult(_ raw: UInt64) -> Result<JSONValue, TypedCallError> {
        guard returnType == .string else { return Self.convert(raw, as: returnType) }
        guard let pointer = UnsafeMutablePointer<CChar>(bitPattern: UInt(raw)) else { return .success(.null) }
        let text = String(validatingCString: pointer)
        freeString?(pointer)
        guard let text else { return .failure(.invalidUTF8) }
        return .success(.string(text))
    }

    /// A returned register's bits as a value of `type` (not a string, which is a pointer only this process reads).
    static func convert(_ raw: UInt64, as type: CType) -> Result<JSONValue, TypedCallError> {
        switch type {
        case .void, .string: return .success(.null)
        case .bool: return .success(.bool(raw & 0xFF != 0))
        case .int32: return .success(.int(Int64(Int32(truncatingIfNeeded: raw))))
        case .int64: return .success(.int(Int64(bitPattern: raw)))
        case .double:
            let d = Double(bitPattern: raw)
            guard d.isFinite else { return .failure(.notFinite(d)) }
            return .success(.double(d))
        }
    }
}

/// A reason an argument cannot be converted, without the argument's name.
struct ArgumentReason: Error, Equatable {
    let text: String
    init(_ text: String) { self.text = text }
}

/// Why a typed call failed before or after the C function ran.
enum TypedCallError: Error, Equatable, CustomStringConvertible {
    case prepareFailed(Int)
    case argument(String, ArgumentReason)
    case notFinite(Double)
    case invalidUTF8
    /// The function reported a failure through its `skill_error` (ABI 1.2): a `SKILL_ERR_*` code and its sentence.
    case reported(code: Int32, message: String)

    var description: String {
        switch self {
        case .reported(let code, let message):
            guard message.isEmpty else { return message }
            // The words a JSON skill's empty error gets (Skill.outcome), so a worker's report reads the same.
            return Int(code) == Int(SKILL_ERR_INVALID_ARGS)
                ? "the skill rejected its arguments (no message given)" : "the skill failed without a message"
        case .prepareFailed(let status): return "libffi could not prepare the call (status \(status))"
        case .argument(let name, let reason): return "$.\(name): \(reason.text)"
        case .notFinite(let d): return "result is not a finite number (\(d))"
        case .invalidUTF8: return "result is not valid UTF-8"
        }
    }

    /// Argument errors are the caller's fault (`invalid_args`); the others are the skill's.
    var isArgumentError: Bool {
        switch self {
        case .argument: return true
        case .reported(let code, _): return Int(code) == Int(SKILL_ERR_INVALID_ARGS)
        default: return false
        }
    }
}
