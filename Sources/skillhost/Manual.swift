import Foundation

/// `skillhost help --man`: the manual page in roff, made from the `--help` texts (installed as
/// share/man/man1/skillhost.1 by `make install`).
enum Manual {
    static var roff: String {
        var out = """
            .TH SKILLHOST 1 "" "skillhost \(SkillhostCLI.version)" "User Commands"
            .SH NAME
            skillhost \\- a native skill host for AI agents
            .SH DESCRIPTION

            """
        out += block(Help.overview)
        for command in ["list", "call", "check", "ask", "sessions", "mcp", "plugin", "new", "config"] {
            guard let text = Help.text(for: command) else { continue }
            out += ".SH \(command.uppercased())\n" + block(text)
        }
        out +=
            ".SH FILES\n"
            + block(
                """
                $XDG_CONFIG_HOME/skillhost/config.json      the configuration (skillhost config path)
                $XDG_DATA_HOME/skillhost/plugins            the user plugins folder ($SKILLHOST_PLUGINS)
                $XDG_DATA_HOME/skillhost/history.db         the shell's saved sessions
                """)
        return out
    }

    /// Text shown as it is (no filling), with roff's special characters escaped.
    static func block(_ text: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var escaped = line.replacingOccurrences(of: "\\", with: "\\e")
            if escaped.hasPrefix(".") || escaped.hasPrefix("'") { escaped = "\\&" + escaped }
            return escaped
        }
        return ".nf\n" + lines.joined(separator: "\n") + "\n.fi\n"
    }
}
