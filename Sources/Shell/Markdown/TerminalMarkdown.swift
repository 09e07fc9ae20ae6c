import SessionUI

/// Lays out a markdown answer for a terminal `width` columns wide: headings, emphasis, lists, block quotes, code
/// blocks (boxed on the left, never re-wrapped), tables aligned and fitted to the width (cells wrapped when they
/// must be), links followed by their target. With `colors` styles are ANSI escapes; without (no terminal,
/// `NO_COLOR`) the text stays plain and readable: `#` before headings, backticks around code, no escapes at all.
package enum TerminalMarkdown {
    /// The layout of `text`; ends with a newline when it has any content. The text is a model's: its controls are
    /// made inert before it is parsed, so text nodes, code and link targets alike show them visibly (`\x1b` is
    /// no markdown escape), and the only escapes in the layout are its own styles.
    package static func render(_ text: String, width: Int, colors: Bool) -> String {
        let layout = Layout(colors: colors)
        let blocks = MarkdownDocument(parsing: InertText.make(text)).blocks
        return layout.blocks(blocks, width: max(20, width)).joined(separator: "\n") + "\n"
    }

    /// Columns a text takes on a terminal (escapes not counted).
    static func displayWidth(_ text: String) -> Int { Layout.displayWidth(Layout.strip(text)) }
}

/// One rendering's choices.
private struct Layout {
    let colors: Bool

    func style(_ text: String, _ code: String) -> String { colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }

    /// Blocks one after another, a blank line between them (none inside a tight list's item).
    func blocks(_ blocks: [MarkdownDocument.Block], width: Int, tight: Bool = false) -> [String] {
        var lines: [String] = []
        for block in blocks {
            if !lines.isEmpty, !tight { lines.append("") }
            lines += self.block(block, width: width)
        }
        return lines
    }

    func block(_ block: MarkdownDocument.Block, width: Int) -> [String] {
        switch block {
        case .paragraph(let runs): return wrap(runs, width: width)
        case .heading(let level, let runs):
            if colors {
                let code = level == 1 ? "1;4" : "1"
                return wrap(runs, width: width).map { style(Self.strip($0), code) }
            }
            let marker = String(repeating: "#", count: level) + " "
            return wrap(runs, width: width - marker.count).enumerated().map {
                ($0.offset == 0 ? marker : String(repeating: " ", count: marker.count)) + $0.element
            }
        case .quote(let inner):
            let bar = style("│", "2") + " "
            return blocks(inner, width: width - 2).map { $0.isEmpty ? style("│", "2") : bar + $0 }
        case .list(let ordered, let start, let tight, let items):
            let markers = items.indices.map { ordered ? "\(start + $0)." : "•" }
            let markerWidth = (markers.map(\.count).max() ?? 1) + 1
            let loose = !tight
            var lines: [String] = []
            for (marker, item) in zip(markers, items) {
                if loose, !lines.isEmpty { lines.append("") }
                let body = blocks(item, width: width - markerWidth, tight: tight)
                for (index, line) in body.enumerated() {
                    let prefix =
                        index == 0
                        ? marker + String(repeating: " ", count: markerWidth - marker.count)
                        : String(repeating: " ", count: markerWidth)
                    lines.append(line.isEmpty ? "" : prefix + line)
                }
                if body.isEmpty { lines.append(marker) }
            }
            return lines
        case .code(let language, let lines):
            let longest = lines.map(Self.displayWidth).max() ?? 0
            let rule = min(width, max(longest + 2, language.count + 5))
            let label = language.isEmpty ? "" : " \(language) "
            let top = "┌─" + label + String(repeating: "─", count: max(0, rule - 2 - Self.displayWidth(label)))
            let body = lines.map { style("│", "2") + " " + ($0.isEmpty ? "" : style($0, "36")) }
            return [style(top, "2")] + body + [style("└" + String(repeating: "─", count: max(0, rule - 1)), "2")]
        case .table(let alignments, let header, let rows):
            return table(alignments: alignments, header: header, rows: rows, width: width)
        case .rule: return [style(String(repeating: "─", count: width), "2")]
        }
    }

    // MARK: Inline text

    /// One word (or a hard break) with the styles it is drawn in.
    private struct Piece {
        var text: String
        var codes: [String]
        var breakAfter = false
    }

    private func codes(_ style: MarkdownDocument.Style) -> [String] {
        var codes: [String] = []
        if style.contains(.strong) { codes.append("1") }
        if style.contains(.emphasis) { codes.append("3") }
        if style.contains(.code) { codes.append("36") }
        if style.contains(.strike) { codes.append("9") }
        if style.contains(.link) { codes.append("4") }
        return codes
    }

    /// The runs as words, with link targets after the link's text and, without colours, code in backticks.
    private func pieces(_ runs: [MarkdownDocument.Run]) -> [Piece] {
        var expanded: [(text: String, codes: [String])] = []
        var index = 0
        while index < runs.count {
            let run = runs[index]
            var text = run.text
            if !colors, run.style.contains(.code) { text = "`" + text + "`" }
            if !colors, run.style.contains(.strike) { text = "~~" + text + "~~" }
            expanded.append((text, codes(run.style)))
            let linkEnds = run.link != nil && (index + 1 == runs.count || runs[index + 1].link != run.link)
            if linkEnds, let target = run.link {
                let shown = runs.filter { $0.link == target }.map(\.text).joined()
                if shown != target, !target.isEmpty { expanded.append((" (\(target))", ["2"])) }
            }
            index += 1
        }
        // Words: split at spaces (a word may span runs: "**bold**ly" stays one word), keep hard breaks.
        var pieces: [Piece] = []
        var current: [(String, [String])] = []
        func finishWord(breakAfter: Bool = false) {
            if !current.isEmpty {
                let text = current.map { colors && !$0.1.isEmpty ? style($0.0, $0.1.joined(separator: ";")) : $0.0 }
                pieces.append(Piece(text: text.joined(), codes: [], breakAfter: breakAfter))
                current = []
            } else if breakAfter, !pieces.isEmpty {
                pieces[pieces.count - 1].breakAfter = true
            }
        }
        for (text, codes) in expanded {
            var word = ""
            for character in text {
                if character == " " || character == "\t" {
                    if !word.isEmpty { current.append((word, codes)) }
                    word = ""
                    finishWord()
                } else if character == "\n" {
                    if !word.isEmpty { current.append((word, codes)) }
                    word = ""
                    finishWord(breakAfter: true)
                } else {
                    word.append(character)
                }
            }
            if !word.isEmpty { current.append((word, codes)) }
        }
        finishWord()
        return pieces
    }

    /// Word-wraps runs to `width` columns (a word longer than the width gets a line of its own).
    func wrap(_ runs: [MarkdownDocument.Run], width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        var used = 0
        for piece in pieces(runs) {
            let size = Self.displayWidth(Self.strip(piece.text))
            if used > 0, used + 1 + size > width {
                lines.append(line)
                line = ""
                used = 0
            }
            if used > 0 {
                line += " "
                used += 1
            }
            line += piece.text
            used += size
            if piece.breakAfter {
                lines.append(line)
                line = ""
                used = 0
            }
        }
        if used > 0 || lines.isEmpty { lines.append(line) }
        return lines
    }

    // MARK: Tables

    private func table(
        alignments: [MarkdownDocument.Alignment], header: [[MarkdownDocument.Run]], rows: [[[MarkdownDocument.Run]]],
        width: Int
    ) -> [String] {
        let columns = max(alignments.count, header.count, rows.map(\.count).max() ?? 0)
        guard columns > 0 else { return [] }
        let all = [header] + rows
        func natural(_ cell: [MarkdownDocument.Run]) -> Int {
            Self.displayWidth(Self.strip(wrap(cell, width: Int.max / 4).joined(separator: " ")))
        }
        var widths = (0..<columns).map { column in
            max(1, all.map { column < $0.count ? natural($0[column]) : 0 }.max() ?? 1)
        }
        // Fit: │ a │ b │ takes 3 columns per cell plus one; the widest column gives way first, down to 3.
        let budget = width - 3 * columns - 1
        while widths.reduce(0, +) > budget, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }),
            widths[widest] > 3
        {
            widths[widest] -= 1
        }
        func border(_ left: String, _ middle: String, _ right: String) -> String {
            style(left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: middle) + right, "2")
        }
        func row(_ cells: [[MarkdownDocument.Run]], bold: Bool) -> [String] {
            let wrapped = (0..<columns).map { column -> [String] in
                let cell = column < cells.count ? cells[column] : []
                let lines = wrap(cell, width: widths[column])
                return bold && colors ? lines.map { style(Self.strip($0), "1") } : lines
            }
            let height = wrapped.map(\.count).max() ?? 1
            return (0..<height).map { index in
                let parts = (0..<columns).map { column -> String in
                    let text = index < wrapped[column].count ? wrapped[column][index] : ""
                    let pad = max(0, widths[column] - Self.displayWidth(Self.strip(text)))
                    let alignment = column < alignments.count ? alignments[column] : .left
                    switch alignment {
                    case .left: return text + String(repeating: " ", count: pad)
                    case .right: return String(repeating: " ", count: pad) + text
                    case .center:
                        return String(repeating: " ", count: pad / 2) + text
                            + String(repeating: " ", count: pad - pad / 2)
                    }
                }
                let bar = style("│", "2")
                return bar + " " + parts.joined(separator: " " + bar + " ") + " " + bar
            }
        }
        var lines = [border("┌", "┬", "┐")]
        if !header.isEmpty {
            lines += row(header, bold: true)
            lines.append(border("├", "┼", "┤"))
        }
        for cells in rows { lines += row(cells, bold: false) }
        lines.append(border("└", "┴", "┘"))
        return lines
    }

    // MARK: Measuring

    /// The text without ANSI escapes.
    static func strip(_ text: String) -> String {
        guard text.contains("\u{1B}") else { return text }
        var result = ""
        var escaping = false
        for scalar in text.unicodeScalars {
            if escaping {
                if (0x40...0x7E).contains(scalar.value), scalar != "[" { escaping = false }
                continue
            }
            if scalar == "\u{1B}" {
                escaping = true
                continue
            }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// Columns a text takes: wide East Asian characters and emoji count two, combining marks none.
    static func displayWidth(_ text: String) -> Int {
        var width = 0
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if scalar.properties.generalCategory == .nonspacingMark || value == 0x200D
                || (0xFE00...0xFE0F).contains(value)
            {
                continue
            }
            let wide =
                (0x1100...0x115F).contains(value) || (0x2E80...0xA4CF).contains(value)
                || (0xAC00...0xD7A3).contains(value) || (0xF900...0xFAFF).contains(value)
                || (0xFE30...0xFE4F).contains(value) || (0xFF00...0xFF60).contains(value)
                || (0xFFE0...0xFFE6).contains(value) || (0x1F300...0x1FAFF).contains(value)
                || (0x20000...0x3FFFD).contains(value)
            width += wide ? 2 : 1
        }
        return width
    }
}
