import Foundation

/// The cost account of one validation, shared by the probes inside anyOf/oneOf/not/if (they take it over and hand
/// it back): a step per subschema applied (and per regex progress report), a bound on nesting, and the caller's
/// deadline. Once spent, the validation stops and says why. A value, so a validation allocates nothing for it.
struct ValidationBudget {
    private(set) var steps = 0
    private(set) var depth = 0
    private(set) var stop: ValidationStop?
    let stepLimit: Int
    let deadline: ContinuousClock.Instant?
    let now: (@Sendable () -> ContinuousClock.Instant)?

    /// How deep subschemas may nest while checking one value (instance depth and `$ref` chains together).
    static let maximumDepth = 1024
    /// Steps one regex progress report counts for (ICU reports every few thousand backtracking steps).
    static let regexReportCost = 1000

    init(options: ValidationOptions) {
        stepLimit = options.stepLimit
        deadline = options.deadline
        now = options.now
    }

    /// Counts `count` steps; false once the budget is spent.
    mutating func spend(_ count: Int = 1) -> Bool {
        guard stop == nil else { return false }
        steps += count
        if steps > stepLimit {
            stop = .stepLimit(stepLimit)
        } else if steps & 0xFF < count, let deadline, (now?() ?? .now) >= deadline {
            stop = .deadline
        }
        return stop == nil
    }

    mutating func enter() -> Bool {
        depth += 1
        if depth > Self.maximumDepth, stop == nil { stop = .depth(Self.maximumDepth) }
        return stop == nil
    }

    mutating func leave() { depth -= 1 }
}

/// Walks an instance against a compiled schema, collecting issues. `check` returns a replacement value when a
/// coercion or default changed the instance, and nil when it is unchanged (the common, allocation-free case).
struct Validator {
    enum PathComponent {
        case key(String)
        case index(Int)
    }

    let options: ValidationOptions
    var budget: ValidationBudget
    /// Whether issues are collected with their paths. The first pass over a value does not (no path is kept, so
    /// a valid value costs no allocation); only a value that failed is walked again to say where and why.
    let collectsIssues: Bool
    var failed = false
    var issues: [ValidationIssue] = []
    var path: [PathComponent] = []

    init(options: ValidationOptions, collectsIssues: Bool = true) {
        self.options = options
        self.collectsIssues = collectsIssues
        self.budget = ValidationBudget(options: options)
    }

    mutating func report(_ message: @autoclosure () -> String) {
        failed = true
        if collectsIssues { issues.append(ValidationIssue(path: Self.render(path), message: message())) }
    }

    @inline(__always)
    mutating func enter(_ component: PathComponent) {
        if collectsIssues { path.append(component) }
    }

    @inline(__always)
    mutating func leave() {
        if collectsIssues { path.removeLast() }
    }

    static func render(_ path: [PathComponent]) -> String {
        var text = "$"
        for component in path {
            switch component {
            case .index(let i): text += "[\(i)]"
            case .key(let key):
                let simple =
                    !key.isEmpty
                    && key.utf8.allSatisfy { byte in
                        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A)
                            || (byte >= 0x30 && byte <= 0x39)
                            || byte == 0x5F || byte == 0x2D
                    }
                text += simple ? ".\(key)" : "[\(JSONValue.string(key).jsonText)]"
            }
        }
        return text
    }

    /// Does `value` match `node`? Used inside anyOf/oneOf/not/if, where issues are not reported.
    mutating func matches(_ value: JSONValue, _ node: SchemaNode) -> (Bool, JSONValue?) {
        var probe = Validator(options: options, collectsIssues: false)
        probe.budget = budget
        let replacement = probe.check(value, node)
        budget = probe.budget
        return (!probe.failed && budget.stop == nil, replacement)
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    mutating func check(_ original: JSONValue, _ node: SchemaNode) -> JSONValue? {
        guard budget.spend(), budget.enter() else { return nil }
        defer { budget.leave() }
        if node.rejectsEverything {
            report("no value is allowed here")
            return nil
        }
        var value = original
        var changed = false

        if let types = node.types, !types.accepts(value) {
            if options.coerceStrings, case .string(let text) = value, let coerced = Self.coerce(text, to: types) {
                value = coerced
                changed = true
            } else {
                report("expected \(types.humanName), got \(value.typeName)")
                return nil
            }
        }
        if let target = node.ref, let replacement = check(value, target) {
            value = replacement
            changed = true
        }
        if let values = node.enumValues, !values.contains(value) {
            let shown = values.prefix(10).map(\.jsonText).joined(separator: ", ")
            report("must be one of \(shown)\(values.count > 10 ? ", …" : ""), got \(value.jsonText)")
        }
        if node.hasConst, let constant = node.constValue, value != constant {
            report("must be exactly \(constant.jsonText), got \(value.jsonText)")
        }

        switch value {
        case .object(let object):
            if let replacement = checkObject(object, node) {
                value = .object(replacement)
                changed = true
            }
        case .array(let elements):
            if let replacement = checkArray(elements, node) {
                value = .array(replacement)
                changed = true
            }
        case .string(let text):
            checkString(text, node)
        case .int, .double:
            checkNumber(value, node)
        default:
            break
        }

        for sub in node.allOf {
            if let replacement = check(value, sub) {
                value = replacement
                changed = true
            }
        }
        if !node.anyOf.isEmpty {
            var matched = false
            for sub in node.anyOf {
                let (ok, replacement) = matches(value, sub)
                if ok {
                    if !matched, let replacement {
                        value = replacement
                        changed = true
                    }
                    matched = true
                }
            }
            if !matched { report("does not match any of the \(node.anyOf.count) alternatives in anyOf") }
        }
        if !node.oneOf.isEmpty {
            var matchCount = 0
            var firstReplacement: JSONValue?
            for sub in node.oneOf {
                let (ok, replacement) = matches(value, sub)
                if ok {
                    matchCount += 1
                    if matchCount == 1 { firstReplacement = replacement }
                }
            }
            if matchCount != 1 {
                report("must match exactly one schema in oneOf, matched \(matchCount == 0 ? "none" : "\(matchCount)")")
            } else if let firstReplacement {
                value = firstReplacement
                changed = true
            }
        }
        if let sub = node.not, matches(value, sub).0 {
            report("must not match the schema under \"not\"")
        }
        if let condition = node.ifSchema {
            let branch = matches(value, condition).0 ? node.thenSchema : node.elseSchema
            if let branch, let replacement = check(value, branch) {
                value = replacement
                changed = true
            }
        }
        return changed ? value : nil
    }

    /// Lenient conversion of a string that holds a number or boolean.
    static func coerce(_ text: String, to types: SchemaTypes) -> JSONValue? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if types.contains(.integer) || types.contains(.number), !trimmed.isEmpty,
            let parsed = try? JSONValue(parsing: trimmed), parsed.doubleValue != nil, types.accepts(parsed)
        {
            return parsed
        }
        if types.contains(.boolean) {
            switch trimmed.lowercased() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: break
            }
        }
        return nil
    }

    mutating func checkObject(_ object: JSONObject, _ node: SchemaNode) -> JSONObject? {
        var object = object
        var changed = false
        if options.nullMeansAbsent {
            // `null` for an optional property that does not allow null: as if it were not given.
            let absent = object.members.filter { member in
                guard member.value == .null, !node.required.contains(member.key),
                    let types = node.property(named: member.key)?.types
                else { return false }
                return !types.contains(.null)
            }.map(\.key)
            if !absent.isEmpty {
                object = JSONObject(object.members.filter { !absent.contains($0.key) })
                changed = true
            }
        }
        var result = object
        for name in node.required where object[name] == nil {
            report("missing required property \"\(name)\"")
        }
        if let minimum = node.minProperties, object.count < minimum {
            report("must have at least \(minimum) \(minimum == 1 ? "property" : "properties"), got \(object.count)")
        }
        if let maximum = node.maxProperties, object.count > maximum {
            report("must have at most \(maximum) \(maximum == 1 ? "property" : "properties"), got \(object.count)")
        }
        for member in object.members {
            var evaluated = false
            var current = member.value
            enter(.key(member.key))
            if let property = node.property(named: member.key) {
                evaluated = true
                if let replacement = check(current, property) {
                    current = replacement
                    changed = true
                }
            }
            for entry in node.patternProperties where search(entry.pattern, member.key) {
                evaluated = true
                if let replacement = check(current, entry.schema) {
                    current = replacement
                    changed = true
                }
            }
            if !evaluated, let additional = node.additionalProperties {
                if additional.rejectsEverything {
                    leave()
                    let message = collectsIssues ? unknownPropertyMessage(member.key, node) : ""
                    report(message)
                    enter(.key(member.key))
                } else if let replacement = check(current, additional) {
                    current = replacement
                    changed = true
                }
            }
            leave()
            if changed { result[member.key] = current }
        }
        if options.fillDefaults {
            for property in node.properties where object[property.name] == nil {
                if let defaultValue = property.schema.defaultValue {
                    result[property.name] = defaultValue
                    changed = true
                }
            }
        }
        return changed ? result : nil
    }

    func unknownPropertyMessage(_ key: String, _ node: SchemaNode) -> String {
        let known = node.properties.map(\.name)
        if let suggestion = EditDistance.closest(to: key, among: known) {
            return "unknown property \"\(key)\" (did you mean \"\(suggestion)\"?)"
        }
        if known.isEmpty { return "unknown property \"\(key)\" (no properties are allowed)" }
        return "unknown property \"\(key)\" (allowed: \(known.map { "\"\($0)\"" }.joined(separator: ", ")))"
    }

    mutating func checkArray(_ elements: [JSONValue], _ node: SchemaNode) -> [JSONValue]? {
        var result = elements
        var changed = false
        if let minimum = node.minItems, elements.count < minimum {
            report("must have at least \(minimum) item\(minimum == 1 ? "" : "s"), got \(elements.count)")
        }
        if let maximum = node.maxItems, elements.count > maximum {
            report("must have at most \(maximum) item\(maximum == 1 ? "" : "s"), got \(elements.count)")
        }
        for (position, element) in elements.enumerated() {
            let schema = position < node.prefixItems.count ? node.prefixItems[position] : node.items
            guard let schema else { continue }
            enter(.index(position))
            if let replacement = check(element, schema) {
                result[position] = replacement
                changed = true
            }
            leave()
        }
        if node.uniqueItems {
            outer: for i in result.indices {
                guard budget.spend(result.count - i) else { break }
                for j in result.indices where j > i && result[i] == result[j] {
                    report("items must be unique (items \(i) and \(j) are equal)")
                    break outer
                }
            }
        }
        return changed ? result : nil
    }

    mutating func checkString(_ text: String, _ node: SchemaNode) {
        if node.minLength != nil || node.maxLength != nil {
            let length = text.unicodeScalars.count
            if let minimum = node.minLength, length < minimum {
                report("must be at least \(minimum) character\(minimum == 1 ? "" : "s") long, got \(length)")
            }
            if let maximum = node.maxLength, length > maximum {
                report("must be at most \(maximum) character\(maximum == 1 ? "" : "s") long, got \(length)")
            }
        }
        if let pattern = node.pattern, !search(pattern.regex, text), budget.stop == nil {
            report("must match the pattern \(pattern.source)")
        }
    }

    mutating func checkNumber(_ value: JSONValue, _ node: SchemaNode) {
        guard let number = value.doubleValue else { return }
        // Messages (and the number's text in them) are made only when issues are collected.
        var shown: String { value.jsonText }
        func order(_ bound: JSONValue) -> Int { JSONValue.compareNumbers(value, bound) ?? 0 }
        if let minimum = node.minimum, order(minimum) < 0 {
            report("must be >= \(minimum.jsonText), got \(shown)")
        }
        if let maximum = node.maximum, order(maximum) > 0 {
            report("must be <= \(maximum.jsonText), got \(shown)")
        }
        if let minimum = node.exclusiveMinimum, order(minimum) <= 0 {
            report("must be > \(minimum.jsonText), got \(shown)")
        }
        if let maximum = node.exclusiveMaximum, order(maximum) >= 0 {
            report("must be < \(maximum.jsonText), got \(shown)")
        }
        if let divisor = node.multipleOf {
            let quotient = number / divisor
            if quotient.isFinite, quotient.rounded() != quotient {
                report("must be a multiple of \(JSONValue.double(divisor).jsonText), got \(shown)")
            }
        }
    }

    /// Whether `regex` matches somewhere in `text`. A match that backtracks for long is stopped by the budget
    /// (ICU reports progress every few thousand steps; each report counts), so no pattern can outrun the deadline.
    mutating func search(_ regex: NSRegularExpression, _ text: String) -> Bool {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        var found = false
        var budget = self.budget
        regex.enumerateMatches(in: text, options: [.reportProgress], range: range) { result, _, stop in
            if result != nil {
                found = true
                stop.pointee = true
            } else if !budget.spend(ValidationBudget.regexReportCost) {
                stop.pointee = true
            }
        }
        self.budget = budget
        return found
    }
}

/// "Did you mean" suggestions by Levenshtein distance.
public enum EditDistance: Sendable {
    /// Edit distance between two strings in Unicode scalars, where swapping two neighbours counts as one edit
    /// (optimal string alignment), so "modle" is one edit from "model".
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars)
        let b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = Swift.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = Swift.min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }

    /// The candidate closest to `word`, if it is close enough to be a likely typo: at most a third of the word
    /// changed (at least one edit allowed), and not every character.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let limit = Swift.min(Swift.max(1, word.count / 3), word.count - 1)
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(word.lowercased(), candidate.lowercased())
            if d <= limit, d < (best?.1 ?? Int.max) { best = (candidate, d) }
        }
        return best?.0
    }
}
