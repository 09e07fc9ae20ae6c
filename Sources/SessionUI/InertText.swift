/// Text of foreign origin — what a plugin, an MCP server, a model or a file wrote — made inert before it reaches a
/// terminal: C0 controls other than newline and tab (ESC, BEL, CR, backspace…), DEL, C1 controls (CSI, OSC…) and
/// the bidirectional overrides and isolates are shown as visible escapes (`\x1b`, `\x9b`, `\u{202e}`), so a result
/// cannot set the window title, write the clipboard, move the cursor, erase a line to forge a prompt, or reorder
/// what is shown. Only skillhost's own styling emits escape sequences. Machine-readable output (`--json`, MCP)
/// keeps the data as sent: JSON escapes it there.
package enum InertText {
    /// `text` with every control shown visibly (newlines and tabs kept).
    package static func make(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.append(scalar)
                continue
            }
            let value = scalar.value
            let shown = value < 0x100 ? "\\x" + hex(value, digits: 2) : "\\u{" + hex(value, digits: 4) + "}"
            out.append(contentsOf: shown.unicodeScalars)
        }
        return String(out)
    }

    /// Whether a scalar can drive a terminal or reorder text.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return false
        case 0x00..<0x20, 0x7F, 0x80...0x9F: return true
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
