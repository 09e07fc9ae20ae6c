import SessionUI

/// Plain-text tables and wrapped lines that fit a terminal: `skillhost list` and the shell's `/skills` share the
/// layout.
package enum Table {
    /// Columns padded to their widest cell, two spaces apart. With a `width`, no line is longer: the last column
    /// is shortened with `…` first, then the widest of the others except the first (ids stay whole).
    package static func render(header: [String], rows: [[String]], width: Int? = nil) -> String {
        // Cells are strangers' words (ids, titles, plugin names, files): inert.
        let all = ([header] + rows).map { $0.map(InertText.make) }
        var widths = Array(repeating: 0, count: header.count)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        if let width, widths.count > 1 {
            let fixed = { widths.dropLast().reduce(0, +) + 2 * (widths.count - 1) }
            // Keep at least 24 characters for the last column; shorten the widest other column to make room.
            while fixed() + 24 > width,
                let widest = widths.indices.dropFirst().dropLast().max(by: { widths[$0] < widths[$1] }),
                widths[widest] > 8
            {
                widths[widest] -= 1
            }
            widths[widths.count - 1] = max(1, width - fixed())
        }
        return all.map { row in
            row.enumerated().map { column, cell in
                let fitted = width == nil ? cell : CardText.shorten(cell, widths[column])
                return column == row.count - 1
                    ? fitted : fitted.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }

    /// `text` (any number of lines, styled or not) with every line that is wider than `width` columns broken at
    /// spaces, continuation lines indented two more than the line they continue — so the terminal never cuts a
    /// word in two. Escape sequences take no columns; a word wider than the width keeps a line of its own. This is
    /// how every line the shell composes itself reaches the screen (cards and the line editor fit themselves).
    package static func fit(_ text: String, width: Int) -> String {
        guard width > 0 else { return text }
        var out: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            guard TerminalMarkdown.displayWidth(line) > width else {
                out.append(line)
                continue
            }
            let indent = String(line.prefix { $0 == " " })
            let continuation = indent + "  "
            var current = indent
            var currentWidth = indent.count
            var empty = true
            for word in line.dropFirst(indent.count).split(separator: " ", omittingEmptySubsequences: false) {
                let wordWidth = TerminalMarkdown.displayWidth(String(word))
                if empty {
                    current += word
                    currentWidth += wordWidth
                    empty = false
                } else if currentWidth + 1 + wordWidth <= width {
                    current += " " + word
                    currentWidth += 1 + wordWidth
                } else {
                    out.append(current)
                    current = continuation + word
                    currentWidth = continuation.count + wordWidth
                }
            }
            out.append(current)
        }
        return out.joined(separator: "\n")
    }

    /// `text` broken into lines of at most `width` characters, only at spaces (a word longer than the width gets a
    /// line of its own).
    package static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
