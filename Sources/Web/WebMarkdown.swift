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
        return withoutEmptyLinks(String(cString: rendered))
    }

    /// A link whose target the safe mode took away (`javascript:` and the like, or none at all) is `<a href="">`:
    /// it still looks like a link, and clicking it reloads the page. Shown as its text instead.
    static func withoutEmptyLinks(_ html: String) -> String {
        guard html.contains(#"<a href="""#) else { return html }
        // With or without a title; links never nest, so the first `</a>` ends it.
        let emptyLink = #/<a href=""(?: title="[^"]*")?>(.*?)</a>/#.dotMatchesNewlines()
        return html.replacing(emptyLink) { match in "<span class=\"dead-link\">" + match.output.1 + "</span>" }
    }

    /// Plain text (the offline router's answers) as HTML: escaped, each line kept (markdown would join them and
    /// read `2*3*4` as emphasis). Escaped scalar by scalar, not character by character: a character may hold a
    /// `<` behind a prepended mark (U+0600 then `<` is one character), and it must not pass as text.
    static func plain(_ text: String) -> String {
        var html = "<p class=\"plain\">"
        var bytes = 0
        var previousWasReturn = false
        for scalar in text.unicodeScalars {
            bytes += scalar.utf8.count
            guard bytes <= maximumBytes else { break }
            defer { previousWasReturn = scalar == "\r" }
            switch scalar {
            case "&": html += "&amp;"
            case "<": html += "&lt;"
            case ">": html += "&gt;"
            case "\"": html += "&quot;"
            case "'": html += "&#39;"
            case "\r": html += "<br>\n"
            case "\n": if !previousWasReturn { html += "<br>\n" }
            default: html.unicodeScalars.append(scalar)
            }
        }
        return html + "</p>\n"
    }
}
