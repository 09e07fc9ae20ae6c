import CMarkGFM
import Glibc

/// A model's answer as HTML for the page: CommonMark with GitHub's tables, strikethrough, autolinks and task lists,
/// rendered by cmark-gfm in its safe mode — raw HTML is left out (a comment stands in its place) and links to
/// `javascript:`, `vbscript:`, `file:` and non-image `data:` lose their target — with GitHub's tag filter on top.
/// What a model writes cannot run in the page.
enum WebMarkdown {
    /// The longest answer laid out; beyond it the rest is shown as plain text by the page.
    static let maximumBytes = 1 << 20

    static func html(_ text: String) -> String {
        cmark_gfm_core_extensions_ensure_registered()
        guard let parser = cmark_parser_new(CMARK_OPT_DEFAULT) else { return "" }
        defer { cmark_parser_free(parser) }
        for name in ["table", "strikethrough", "autolink", "tasklist", "tagfilter"] {
            if let syntax = cmark_find_syntax_extension(name) { cmark_parser_attach_syntax_extension(parser, syntax) }
        }
        var bytes = Array(text.utf8.prefix(maximumBytes))
        bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                cmark_parser_feed(parser, $0, buffer.count)
            }
        }
        guard let root = cmark_parser_finish(parser) else { return "" }
        defer { cmark_node_free(root) }
        // CMARK_OPT_DEFAULT without CMARK_OPT_UNSAFE: the safe rendering.
        guard let rendered = cmark_render_html(root, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser))
        else { return "" }
        defer { free(rendered) }
        return String(cString: rendered)
    }

    /// Plain text (the offline router's answers) as HTML: escaped, each line kept (markdown would join them and
    /// read `2*3*4` as emphasis).
    static func plain(_ text: String) -> String {
        let lines = text.prefix(maximumBytes).split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.reduce(into: "") { escaped, character in
                switch character {
                case "&": escaped += "&amp;"
                case "<": escaped += "&lt;"
                case ">": escaped += "&gt;"
                case "\"": escaped += "&quot;"
                case "'": escaped += "&#39;"
                default: escaped.append(character)
                }
            }
        }
        return "<p class=\"plain\">" + lines.joined(separator: "<br>\n") + "</p>\n"
    }
}
