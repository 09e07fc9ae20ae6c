import Foundation

/// A compiled JSON Schema (draft 2020-12 subset) that validates arguments before any plugin code runs.
///
/// Supported keywords: `type` (incl. unions), `enum`, `const`, `properties`, `patternProperties`,
/// `additionalProperties`, `required`, `min/maxProperties`, `prefixItems`, `items`, `min/maxItems`,
/// `uniqueItems`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `min/maxLength`,
/// `pattern`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `$ref` within the document (`$defs`, `$id`,
/// `$anchor`), and `default` (filled in for missing properties). Other keywords are annotations and ignored.
///
/// ```swift
/// let schema = try JSONSchema(try JSONValue(parsing: #"{"type":"object","properties":{"n":{"type":"integer"}}}"#))
/// let checked = schema.validate(try JSONValue(parsing: #"{"n":"23"}"#))   // .valid({"n":23}) with coercion
/// ```
public struct JSONSchema: Sendable {
    /// The schema document as given.
    public let document: JSONValue
    let root: SchemaNode
    /// Whether validating can cost more than one walk over the value (it has patterns, `$ref`s or combinators):
    /// only then is a deadline worth watching.
    public let mayBeCostly: Bool

    /// Compiles a schema document.
    /// - Throws: `SchemaError` naming where the schema is malformed.
    public init(_ document: JSONValue) throws(SchemaError) {
        self.document = document
        (root, mayBeCostly) = try SchemaCompiler.compile(document)
    }

    /// Validates `value`.
    ///
    /// - Parameters:
    ///   - value: the instance.
    ///   - options: `.lenient` (the default) coerces `"23"` → 23 and `"true"` → true where the schema expects a
    ///     number or boolean and fills in `default`s of missing properties; `.strict` does neither.
    /// - Returns: the (possibly coerced) value, or every problem found.
    public func validate(_ value: JSONValue, options: ValidationOptions = .lenient) -> ValidationResult {
        switch check(value, options: options) {
        case .success(let replacement): return .valid(replacement ?? value)
        case .failure(let issues): return .invalid(issues.issues)
        }
    }

    /// Like `validate`, but says whether anything changed: `.success(nil)` means the value is valid as given.
    public func check(_ value: JSONValue, options: ValidationOptions = .lenient) -> Result<JSONValue?, ValidationIssues>
    {
        // First without paths (a valid value, the common case, allocates nothing for them); a value that failed is
        // walked again to say where and why.
        var validator = Validator(options: options, collectsIssues: false)
        let replacement = validator.check(value, root)
        if let stop = validator.budget.stop {
            return .failure(ValidationIssues(issues: [ValidationIssue(path: "$", message: stop.message)], stop: stop))
        }
        if !validator.failed { return .success(replacement) }
        var explaining = Validator(options: options)
        _ = explaining.check(value, root)
        if let stop = explaining.budget.stop {
            return .failure(ValidationIssues(issues: [ValidationIssue(path: "$", message: stop.message)], stop: stop))
        }
        return .failure(ValidationIssues(issues: explaining.issues))
    }
}

/// How forgiving validation is.
public struct ValidationOptions: Sendable {
    /// Accept a string holding a number or boolean where the schema wants a number or boolean, and convert it.
    public var coerceStrings: Bool
    /// Insert the `default` of a missing, optional property.
    public var fillDefaults: Bool
    /// Treat `null` given for an optional property whose schema does not allow null as if it were absent (clients
    /// built on some frameworks send every optional argument, unset ones as null).
    public var nullMeansAbsent: Bool
    /// Steps (subschemas applied, regex progress reports) one validation may take before it stops.
    public var stepLimit = 1_000_000
    /// The caller's deadline: validation stops once it passed (looked at every 256 steps).
    public var deadline: ContinuousClock.Instant?
    /// Where the current instant comes from for `deadline` (the host's clock); nil: the system's.
    public var now: (@Sendable () -> ContinuousClock.Instant)?

    public init(coerceStrings: Bool, fillDefaults: Bool, nullMeansAbsent: Bool? = nil) {
        self.coerceStrings = coerceStrings
        self.fillDefaults = fillDefaults
        self.nullMeansAbsent = nullMeansAbsent ?? coerceStrings
    }

    /// Coercions, defaults and null as absent: what models and agent frameworks need.
    public static let lenient = ValidationOptions(coerceStrings: true, fillDefaults: true)
    /// The letter of the specification.
    public static let strict = ValidationOptions(coerceStrings: false, fillDefaults: false)
}

/// The outcome of `JSONSchema.validate`.
public enum ValidationResult: Sendable, Equatable {
    /// The value matches; the payload is the value after coercions and defaults.
    case valid(JSONValue)
    /// The value does not match; at least one issue.
    case invalid([ValidationIssue])

    /// True for `.valid`.
    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }
}

/// One reason a value does not match, with the path of the offending part (`$.items[2].name`).
public struct ValidationIssue: Sendable, Equatable, CustomStringConvertible {
    /// Where in the instance: `$` is the root.
    public let path: String
    /// What is wrong, e.g. `expected string, got number`.
    public let message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    /// `$.expression: expected string, got number`.
    public var description: String { "\(path): \(message)" }
}

/// The issues of an invalid value, as an error.
public struct ValidationIssues: Error, Sendable, Equatable {
    public let issues: [ValidationIssue]
    /// Set when validation stopped before it was complete (then the one issue says why).
    public let stop: ValidationStop?

    public init(issues: [ValidationIssue], stop: ValidationStop? = nil) {
        self.issues = issues
        self.stop = stop
    }
}

/// Why a validation stopped before it was complete.
public enum ValidationStop: Sendable, Equatable {
    /// The step budget (`ValidationOptions.stepLimit`) was spent.
    case stepLimit(Int)
    /// Subschemas nested deeper than this while checking one value.
    case depth(Int)
    /// The caller's deadline passed.
    case deadline

    /// What a person reads.
    public var message: String {
        switch self {
        case .stepLimit(let limit):
            return "checking this value against the schema took over \(limit) steps; simplify the schema or the value"
        case .depth(let limit):
            return "checking this value nests subschemas deeper than \(limit) levels; simplify the schema or the value"
        case .deadline: return "checking this value against the schema ran past the call's deadline"
        }
    }
}

extension Array where Element == ValidationIssue {
    /// The issues as one line: the first three joined by "; ", then "(and N more)".
    public var summary: String {
        let shown = prefix(3).map(\.description).joined(separator: "; ")
        return count > 3 ? "\(shown) (and \(count - 3) more)" : shown
    }
}
