import Foundation

/// Reads arithmetic out of a request written in words or symbols: "15 times 23 plus 4" → `15*23+4`,
/// "2 to the power of 16" → `2^16`, "square root of 81" → `sqrt(81)`, "17% of 240" → `17/100*240`.
///
/// The result uses the operators and functions a calculator skill documents (`+ - * / ^ %`, `sqrt sin cos tan
/// log ln abs`, `pi e`). It is nil unless there is an operator between operands or a function applied to one, so
/// a lone number ("note 3", "5 km") is never arithmetic.
enum Arithmetic {
    static let functions: Set<String> = ["sqrt", "sin", "cos", "tan", "log", "ln", "abs"]
    static let constants: Set<String> = ["pi", "e"]

    /// Word forms rewritten to symbols, in order (longer phrases first). Applied to lowercased text.
    static let rewrites: [(pattern: String, replacement: String)] = [
        // Dates and clock times are not arithmetic.
        (#"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{1,2}:\d{2}(?::\d{2})?)?\b|\b\d{1,2}:\d{2}\b"#, " ; "),
        // Addresses, networks and day/month/year dates are not sums: "192.168.1.0/24", "31/12/2026".
        (#"\b\d+(?:\.\d+){2,}(?:/\d+)?\b|\b\d{1,2}/\d{1,2}/\d{4}\b"#, " ; "),
        (#"(\d)\s*,\s*(\d{3})\b"#, "$1$2"),  // 1,200 → 1200
        (#"[$€£¥]\s*(\d)"#, "$1"),  // $45 → 45: the amount, not its currency
        // "20% tip on a 45 bill", "8% tax on 120", "15 percent of the 80": a share of the amount the request ends
        // with ("5% interest for 2 years on 1000" is not one).
        (
            #"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)\s+(?:(?:tip|tax|vat|service|gratuity|commission)\s+)?"#
                + #"(?:on|of|for)\s+(?:an?\s+|the\s+)?(\d+(?:\.\d+)?)(?=\s*(?:bill|total|check|order|meal|"#
                + #"purchase|invoice)?\s*[?.!]*\s*$)"#, "$1/100*$2"
        ),
        // "20% off 80": what is left; "add 8% sales tax to 45": the amount and its share.
        (
            #"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)\s+off\s+(?:of\s+)?(?:an?\s+|the\s+)?(\d+(?:\.\d+)?)"#,
            "$2-$2*$1/100"
        ),
        (
            #"\badd\s+(?:an?\s+)?(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)\s+(?:[a-z]+\s+){0,2}(?:to|on)\s+"#
                + #"(?:an?\s+|the\s+)?(\d+(?:\.\d+)?)"#, "$2+$2*$1/100"
        ),
        // "what percentage of 180 is 45", "what percent is 45 of 180": the share as a percentage.
        (
            #"\bwhat\s+(?:percent(?:age)?|%)\s+of\s+(\d+(?:\.\d+)?)\s+is\s+(\d+(?:\.\d+)?)"#, "$2/$1*100"
        ),
        (
            #"\bwhat\s+(?:percent(?:age)?|%)\s+is\s+(\d+(?:\.\d+)?)\s+of\s+(\d+(?:\.\d+)?)"#, "$1/$2*100"
        ),
        (#"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)\s+of\s+"#, "$1/100*"),
        (#"(\d+(?:\.\d+)?)\s*(?:%|percent|per cent)"#, "($1/100)"),
        (#"\b(?:the\s+)?square\s+root\s+of\s+(-?\d+(?:\.\d+)?)"#, "sqrt($1)"),
        (#"\b(?:the\s+)?cube\s+root\s+of\s+(-?\d+(?:\.\d+)?)"#, "$1^(1/3)"),
        (#"\b(?:the\s+)?(?:absolute value|abs) of\s+(-?\d+(?:\.\d+)?)"#, "abs($1)"),
        (#"\b(sqrt|sin|cos|tan|log|ln|abs)\s+of\s+(-?\d+(?:\.\d+)?)"#, "$1($2)"),
        (#"\b(sqrt|sin|cos|tan|log|ln|abs)\s+(-?\d+(?:\.\d+)?)"#, "$1($2)"),
        (#"\bhalf of\s+"#, "0.5*"),
        (#"\btwice\s+"#, "2*"),
        (#"(\d)\s+squared\b"#, "$1^2"),
        (#"(\d)\s+cubed\b"#, "$1^3"),
        (#"\s*\b(?:raised\s+)?to\s+the\s+(?:power|pow)\s+of\s+"#, "^"),
        (#"\s*\braised\s+to\s+"#, "^"),
        (#"(\d)\s*\*\*\s*(\d)"#, "$1^$2"),
        (#"\s*\b(?:multiplied\s+by|times)\s+"#, "*"),
        (#"(\d)\s*[x×]\s*(\d)"#, "$1*$2"),
        (#"\s*\b(?:divided\s+by|over)\s+"#, "/"),
        (#"÷"#, "/"),
        (#"\s*\b(?:plus|added\s+to)\s+"#, "+"),
        (#"\s*\b(?:minus|less)\s+"#, "-"),
        (#"−"#, "-"),
        (#"\s*\b(?:mod|modulo)\s+"#, "%"),
        (#"\bsum of\s+(-?\d+(?:\.\d+)?)\s+and\s+(-?\d+(?:\.\d+)?)"#, "$1+$2"),
        (#"\bproduct of\s+(-?\d+(?:\.\d+)?)\s+and\s+(-?\d+(?:\.\d+)?)"#, "$1*$2"),
        (#"\bdifference between\s+(-?\d+(?:\.\d+)?)\s+and\s+(-?\d+(?:\.\d+)?)"#, "$1-$2"),
        (#"\badd\s+(-?\d+(?:\.\d+)?)\s+(?:and|to)\s+(-?\d+(?:\.\d+)?)"#, "$1+$2"),
        (#"\bmultiply\s+(-?\d+(?:\.\d+)?)\s+(?:and|by)\s+(-?\d+(?:\.\d+)?)"#, "$1*$2"),
        (#"\bdivide\s+(-?\d+(?:\.\d+)?)\s+by\s+(-?\d+(?:\.\d+)?)"#, "$1/$2"),
        (#"\bsubtract\s+(-?\d+(?:\.\d+)?)\s+from\s+(-?\d+(?:\.\d+)?)"#, "$2-$1"),
    ]

    /// The arithmetic in `text`, in the calculator's notation, or nil when there is none.
    static func expression(in text: String) -> String? {
        var lowered = RouterRequest.thousands(Lexicon.digits(text.lowercased()))
        for (pattern, replacement) in rewrites {
            lowered = ArgumentText.replacing(pattern, with: replacement, in: lowered)
        }
        let run = longestRun(in: tokens(lowered))
        // A percentage alone is no sum: "5% interest for 2 years on 1000" would answer 0.05 (the share of what was
        // never said); nothing matches is the honest answer.
        if let run, run.range(of: #"^\(\d+(?:\.\d+)?/100\)$"#, options: .regularExpression) != nil { return nil }
        return run
    }

    enum Token: Equatable {
        case number(String)
        case name(String)  // a function or constant
        case symbol(Character)  // + - * / ^ % ( )
        case other
    }

    static func tokens(_ text: String) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(text)
        var index = 0
        while index < characters.count {
            let c = characters[index]
            if c.isNumber || (c == "." && index + 1 < characters.count && characters[index + 1].isNumber) {
                var end = index
                while end < characters.count, characters[end].isNumber || characters[end] == "." { end += 1 }
                tokens.append(.number(String(characters[index..<end])))
                index = end
            } else if c.isLetter {
                var end = index
                while end < characters.count, characters[end].isLetter || characters[end] == "_" { end += 1 }
                let word = String(characters[index..<end])
                tokens.append(functions.contains(word) || constants.contains(word) ? .name(word) : .other)
                index = end
            } else if "+-*/^%()".contains(c) {
                tokens.append(.symbol(c))
                index += 1
            } else if c == " " || c == "\t" {
                index += 1
            } else {
                tokens.append(.other)
                index += 1
            }
        }
        return tokens
    }

    /// The longest run of arithmetic tokens that holds an operator between operands (or a function call), with
    /// dangling operators and unbalanced parentheses trimmed.
    static func longestRun(in tokens: [Token]) -> String? {
        var best: [Token] = []
        var run: [Token] = []
        func close() {
            var trimmed = run
            while let last = trimmed.last, case .symbol(let s) = last, s != ")" { trimmed.removeLast() }
            while let first = trimmed.first, case .symbol(let s) = first, s != "(", s != "-" { trimmed.removeFirst() }
            while trimmed.filter({ $0 == .symbol("(") }).count > trimmed.filter({ $0 == .symbol(")") }).count,
                let index = trimmed.firstIndex(of: .symbol("("))
            {
                trimmed.remove(at: index)
            }
            while trimmed.filter({ $0 == .symbol(")") }).count > trimmed.filter({ $0 == .symbol("(") }).count,
                let index = trimmed.lastIndex(of: .symbol(")"))
            {
                trimmed.remove(at: index)
            }
            if isArithmetic(trimmed), trimmed.count > best.count { best = trimmed }
            run = []
        }
        for token in tokens {
            if token == .other {
                close()
            } else if case .number = token, case .number? = run.last {
                // Two numbers side by side are two things ("… to 45 2 times"), never one written together.
                close()
                run.append(token)
            } else {
                run.append(token)
            }
        }
        close()
        return best.isEmpty ? nil : render(best)
    }

    static func isArithmetic(_ tokens: [Token]) -> Bool {
        for (index, token) in tokens.enumerated() {
            if case .name(let name) = token, functions.contains(name), index + 1 < tokens.count,
                tokens[index + 1] == .symbol("(")
            {
                return true
            }
            guard case .symbol(let s) = token, "+-*/^%".contains(s), index > 0, index + 1 < tokens.count else {
                continue
            }
            let before = tokens[index - 1]
            let after = tokens[index + 1]
            let operandBefore: Bool
            switch before {
            case .number, .name, .symbol(")"): operandBefore = true
            default: operandBefore = false
            }
            let operandAfter: Bool
            switch after {
            case .number, .name, .symbol("("), .symbol("-"): operandAfter = true
            default: operandAfter = false
            }
            if operandBefore, operandAfter { return true }
        }
        return false
    }

    static func render(_ tokens: [Token]) -> String {
        var text = ""
        for token in tokens {
            switch token {
            case .number(let n): text += n
            case .name(let n): text += n
            case .symbol(let s): text.append(s)
            case .other: break
            }
        }
        return text
    }
}
