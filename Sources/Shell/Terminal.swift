import Foundation
import Support

#if canImport(Glibc)
    import Glibc
#endif

/// What the output is: a terminal (colours, symbols, in-place updates) or a pipe/file (plain lines).
package struct Terminal: Sendable {
    /// Standard output is a terminal.
    package let isTTY: Bool
    /// ANSI colours allowed: a terminal, `NO_COLOR` unset, `TERM` not `dumb`.
    package let colors: Bool
    /// Answers stay as the model sent them (`--raw`): no markdown layout after they are complete.
    package let rawAnswers: Bool

    package init(environment: [String: String], isTTY: Bool = isatty(STDOUT_FILENO) == 1, rawAnswers: Bool = false) {
        self.isTTY = isTTY
        self.rawAnswers = rawAnswers
        colors = isTTY && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }

    /// Columns of the terminal (80 when unknown); cards are shortened to fit one line.
    var width: Int {
        var size = winsize()
        guard isTTY, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 else { return 80 }
        return Int(size.ws_col)
    }

    /// Rows of the terminal (24 when unknown).
    var height: Int {
        var size = winsize()
        guard isTTY, ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 2 else { return 24 }
        return Int(size.ws_row)
    }

    /// Standard input is a terminal (an interactive session).
    package static var inputIsTTY: Bool { isatty(STDIN_FILENO) == 1 }

    func style(_ text: String, _ code: String) -> String { colors ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
    func dim(_ text: String) -> String { style(text, "2") }
    func bold(_ text: String) -> String { style(text, "1") }
    func green(_ text: String) -> String { style(text, "32") }
    func red(_ text: String) -> String { style(text, "31") }
    func yellow(_ text: String) -> String { style(text, "33") }
    func cyan(_ text: String) -> String { style(text, "36") }

    /// Erases the current line (terminal only) so a card can be redrawn in place.
    var clearLine: String { isTTY ? "\r\u{1B}[2K" : "" }
}

/// Writes to standard output at once; a closed output ends the shell quietly (`StandardStreams.out`).
func writeOut(_ text: String) {
    StandardStreams.out(text)
}
