import CMarkGFM
import Foundation
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
        unwrapLinksWithoutTarget(root)
        // CMARK_OPT_DEFAULT without CMARK_OPT_UNSAFE: the safe rendering.
        guard let rendered = cmark_render_html(root, CMARK_OPT_DEFAULT, cmark_parser_get_syntax_extensions(parser))
        else { return "" }
        defer { free(rendered) }
        return String(cString: rendered)
    }

    /// A link whose target the safe mode would take away (`javascript:`, `vbscript:`, `file:`, a `data:` that is no
    /// image, or none at all) would render as `<a href="">`: it still looks like a link, and clicking it reloads the
    /// page. Such a link is replaced in the tree by what it holds (an autolink nested in it is looked at on its own).
    static func unwrapLinksWithoutTarget(_ root: OpaquePointer) {
        var dead: [OpaquePointer] = []
        guard let iterator = cmark_iter_new(root) else { return }
        while cmark_iter_next(iterator) != CMARK_EVENT_DONE {
            guard cmark_iter_get_event_type(iterator) == CMARK_EVENT_ENTER, let node = cmark_iter_get_node(iterator),
                cmark_node_get_type(node) == CMARK_NODE_LINK
            else { continue }
            let url = cmark_node_get_url(node).map { String(cString: $0) } ?? ""
            if !hasTarget(url) { dead.append(node) }
        }
        cmark_iter_free(iterator)
        // Innermost first: a link's children are moved out before the link itself goes.
        for link in dead.reversed() {
            while let child = cmark_node_first_child(link) { _ = cmark_node_insert_before(link, child) }
            cmark_node_free(link)
        }
    }

    /// Whether cmark's safe mode keeps `url` as a link's target (its `scan_dangerous_url`, plus: not empty).
    static func hasTarget(_ url: String) -> Bool {
        let lowered = url.trimmingCharacters(in: .whitespaces).lowercased()
        guard !lowered.isEmpty else { return false }
        if lowered.hasPrefix("data:") {
            return ["data:image/png", "data:image/gif", "data:image/jpeg", "data:image/webp"].contains {
                lowered.hasPrefix($0)
            }
        }
        return !["javascript:", "vbscript:", "file:"].contains { lowered.hasPrefix($0) }
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
