import Testing

@testable import Shell

/// Markdown answers laid out for the terminal by cmark-gfm's tree — exact text at 80 and 120 columns, with and
/// without colour.
struct TerminalMarkdownTests {
    static let answer = """
        # Weather report

        The forecast for **Paris** is *mild*, with `22 °C` at noon and ~~rain~~ sun; see [the source](https://example.com/paris) or https://example.com.

        ## Details

        - morning: cool
        - afternoon: warm enough for a walk along the river, which is what most people will want to do today
          1. pack water
          2. pack a hat

        > A quote that goes on for a while, long enough to need wrapping when the terminal is narrow enough to make it wrap.

        ```swift
        let temperature = 22 // a long comment that must not be re-wrapped even though it is longer than the terminal is wide
        print(temperature)
        ```

        | City | High | Low | Notes |
        |:-----|-----:|:---:|-------|
        | Paris | 22 | 14 | sunny afternoon with a light breeze from the west, pleasant for a walk |
        | Oslo | 9 | 2 | cold |

        ---
        Done.
        """

    /// Plain (no terminal, or NO_COLOR): no escapes; headings keep their #, code its backticks, struck text its
    /// tildes; the paragraph, the list item and the table cell wrap at 80 columns, the code block never does.
    @Test func plainAt80Columns() {
        let expected = """
            # Weather report

            The forecast for Paris is mild, with `22 °C` at noon and ~~rain~~ sun; see the
            source (https://example.com/paris) or https://example.com.

            ## Details

            • morning: cool
            • afternoon: warm enough for a walk along the river, which is what most people
              will want to do today
              1. pack water
              2. pack a hat

            │ A quote that goes on for a while, long enough to need wrapping when the
            │ terminal is narrow enough to make it wrap.

            ┌─ swift ───────────────────────────────────────────────────────────────────────
            │ let temperature = 22 // a long comment that must not be re-wrapped even though it is longer than the terminal is wide
            │ print(temperature)
            └───────────────────────────────────────────────────────────────────────────────

            ┌───────┬──────┬─────┬─────────────────────────────────────────────────────────┐
            │ City  │ High │ Low │ Notes                                                   │
            ├───────┼──────┼─────┼─────────────────────────────────────────────────────────┤
            │ Paris │   22 │ 14  │ sunny afternoon with a light breeze from the west,      │
            │       │      │     │ pleasant for a walk                                     │
            │ Oslo  │    9 │  2  │ cold                                                    │
            └───────┴──────┴─────┴─────────────────────────────────────────────────────────┘

            ────────────────────────────────────────────────────────────────────────────────

            Done.
            """
        #expect(TerminalMarkdown.render(Self.answer, width: 80, colors: false) == expected + "\n")
    }

    @Test func plainAt120Columns() {
        let expected = """
            # Weather report

            The forecast for Paris is mild, with `22 °C` at noon and ~~rain~~ sun; see the source (https://example.com/paris) or
            https://example.com.

            ## Details

            • morning: cool
            • afternoon: warm enough for a walk along the river, which is what most people will want to do today
              1. pack water
              2. pack a hat

            │ A quote that goes on for a while, long enough to need wrapping when the terminal is narrow enough to make it wrap.

            ┌─ swift ──────────────────────────────────────────────────────────────────────────────────────────────────────────────
            │ let temperature = 22 // a long comment that must not be re-wrapped even though it is longer than the terminal is wide
            │ print(temperature)
            └──────────────────────────────────────────────────────────────────────────────────────────────────────────────────────

            ┌───────┬──────┬─────┬────────────────────────────────────────────────────────────────────────┐
            │ City  │ High │ Low │ Notes                                                                  │
            ├───────┼──────┼─────┼────────────────────────────────────────────────────────────────────────┤
            │ Paris │   22 │ 14  │ sunny afternoon with a light breeze from the west, pleasant for a walk │
            │ Oslo  │    9 │  2  │ cold                                                                   │
            └───────┴──────┴─────┴────────────────────────────────────────────────────────────────────────┘

            ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────

            Done.
            """
        #expect(TerminalMarkdown.render(Self.answer, width: 120, colors: false) == expected + "\n")
    }

    static let styled =
        "# Title\n\nSome **bold** and `code`, see [docs](https://x.example), then enough words to wrap a line of "
        + "eighty columns but not one of a hundred and twenty.\n\n| a | b |\n|---|--:|\n| 1 | 22 |\n"

    static func ansi(_ code: String, _ text: String) -> String { "\u{1B}[\(code)m\(text)\u{1B}[0m" }

    static func styledTable() -> String {
        let bar = ansi("2", "│")
        return [
            ansi("2", "┌───┬────┐"), "\(bar) \(ansi("1", "a")) \(bar)  \(ansi("1", "b")) \(bar)",
            ansi("2", "├───┼────┤"),
            "\(bar) 1 \(bar) 22 \(bar)", ansi("2", "└───┴────┘"),
        ].joined(separator: "\n")
    }

    /// Colour: bold underlined first-level heading, bold, cyan code, underlined link text with its target dimmed
    /// after it, a dim table frame with a bold header and the second column right-aligned.
    @Test func colourAt80And120Columns() {
        let opening =
            "Some \(Self.ansi("1", "bold")) and \(Self.ansi("36", "code")), see \(Self.ansi("4", "docs")) "
            + "\(Self.ansi("2", "(https://x.example)")),"
        let at80 =
            [
                Self.ansi("1;4", "Title"), "",
                opening + " then enough words to wrap a",
                "line of eighty columns but not one of a hundred and twenty.", "", Self.styledTable(),
            ].joined(separator: "\n") + "\n"
        #expect(TerminalMarkdown.render(Self.styled, width: 80, colors: true) == at80)
        let at120 =
            [
                Self.ansi("1;4", "Title"), "",
                opening + " then enough words to wrap a line of eighty columns but not one of a",
                "hundred and twenty.", "", Self.styledTable(),
            ].joined(separator: "\n") + "\n"
        #expect(TerminalMarkdown.render(Self.styled, width: 120, colors: true) == at120)
    }

    /// Hostile input: nesting deeper than the renderer follows is flattened to text, not recursed into.
    @Test func deepNestingIsBounded() {
        let deep = String(repeating: "> ", count: 5000) + "bottom"
        let text = TerminalMarkdown.render(deep, width: 80, colors: false)
        #expect(text.contains("bottom"))
    }
}

/// Every line the shell composes is fitted to the terminal with one function: broken at spaces, never mid-word.
struct FitToWidthTests {
    @Test func linesBreakAtSpacesWithTheirIndentation() {
        let undone = "✓ undone: {\"id\":3,\"title\":\"call the plumber\",\"body\":\"Tuesday after 5pm\"} restored"
        #expect(
            Table.fit(undone, width: 40)
                == "✓ undone: {\"id\":3,\"title\":\"call the\n  plumber\",\"body\":\"Tuesday after 5pm\"}\n  restored")
        #expect(
            Table.fit("  composite skill, 2 steps:\n    notes_search(query: ${input.query}) as found", width: 30)
                == "  composite skill, 2 steps:\n    notes_search(query:\n      ${input.query}) as found")
        // Styling takes no columns; a word wider than the line keeps a line of its own; short text is untouched.
        let styled = "\u{1B}[2m+ hello 1.0.0: 2 skills added (hypotenuse, greet)\u{1B}[0m"
        #expect(Table.fit(styled, width: 49) == styled)
        #expect(
            Table.fit(styled, width: 30)
                == "\u{1B}[2m+ hello 1.0.0: 2 skills added\n  (hypotenuse, greet)\u{1B}[0m")
        #expect(Table.fit("a verylongwordthatdoesnotfit b", width: 10) == "a\n  verylongwordthatdoesnotfit\n  b")
        #expect(Table.fit("short\n", width: 10) == "short\n")
        for width in [20, 37, 100, 120] {
            let text = String(repeating: "lorem ipsum dolor sit amet ", count: 12)
            for line in Table.fit(text, width: width).split(separator: "\n") {
                #expect(line.count <= width, "\(line)")
                let words = Set(line.split(separator: " ").map(String.init))
                #expect(words.isSubset(of: ["lorem", "ipsum", "dolor", "sit", "amet"]), "no word is cut: \(line)")
            }
        }
    }
}
