import Foundation
import SkillJSON

/// Values people write in a shape of their own — a hex colour, a network in CIDR notation, an IPv4 address, a
/// Roman numeral — for the string arguments whose name or description names that kind of value (or, for an
/// argument that says nothing of itself, whose skill's description does: "contrast of two hex colors"). Such an
/// argument takes only a value of its shape, and a request that holds one is evidence for the skill.
enum TokenShape: CaseIterable {
    case network, address, hexColour, romanNumeral

    /// The shape an argument takes, if any.
    static func of(argument name: String, _ schema: JSONValue, toolDescription: String) -> TokenShape? {
        guard ArgumentFiller.types(of: schema).contains("string") || schema["type"] == nil,
            schema["enum"] == nil
        else { return nil }
        let own = (name.replacingOccurrences(of: "_", with: " ") + " " + (schema["description"]?.stringValue ?? ""))
        if let shape = named(in: own) { return shape }
        return schema["description"] == nil ? named(in: toolDescription) : nil
    }

    /// The one shape a text names (none when it names several).
    static func named(in text: String) -> TokenShape? {
        let words = Set(Lexicon.words(Lexicon.fold(text.replacingOccurrences(of: "-", with: " "))))
        var shapes: [TokenShape] = []
        if !words.isDisjoint(with: ["cidr", "subnet", "network"]) { shapes.append(.network) }
        if !words.isDisjoint(with: ["ip", "ipv4"]) && !shapes.contains(.network) { shapes.append(.address) }
        if words.contains("hex") || words.contains("hex2rgb") { shapes.append(.hexColour) }
        if !words.isDisjoint(with: ["roman", "numeral", "numerals"]) { shapes.append(.romanNumeral) }
        return shapes.count == 1 ? shapes[0] : nil
    }

    /// The values of this shape in `text`, in order.
    func values(in text: String) -> [String] {
        let found = ArgumentText.matches(pattern, in: String(text.prefix(2000)))
        switch self {
        case .romanNumeral:
            return found.filter { token in
                token.count >= 2 && !Self.words.contains(token.lowercased())
                    && token.uppercased().range(of: Self.validNumeral, options: .regularExpression) != nil
                    // Lowercase only when it is the whole of a short request's value: "what year is mmxv".
                    && (token == token.uppercased() || token.count >= 3)
            }
        case .hexColour:
            // Six hex digits without "#" only with a letter and a digit among them ("00ff7f"; not "123456", nor
            // "facade" or "decade").
            return found.filter { $0.hasPrefix("#") || ($0.contains { $0.isLetter } && $0.contains { $0.isNumber }) }
        default: return found
        }
    }

    var pattern: String {
        switch self {
        case .network: return #"\b\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}\b"#
        case .address: return #"\b\d{1,3}(?:\.\d{1,3}){3}\b(?!/)"#
        case .hexColour: return #"(?:#[0-9A-Fa-f]{6}|#[0-9A-Fa-f]{3}|\b[0-9A-Fa-f]{6})\b"#
        case .romanNumeral: return #"\b[MDCLXVImdclxvi]+\b"#
        }
    }

    static let validNumeral = #"^M{0,3}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$"#
    /// English words that are also numerals.
    static let words: Set<String> = [
        "mix", "mid", "dim", "did", "mi", "id", "im", "di", "li", "cd", "dc", "mill", "civic", "vim", "mild", "lid",
        "cc", "mm", "cm", "dl", "ml",
    ]
}
