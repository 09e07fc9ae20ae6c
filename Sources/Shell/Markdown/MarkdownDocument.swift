import CMarkGFM

/// A model answer as blocks and styled inline runs, parsed by cmark-gfm (CommonMark with the GFM table,
/// strikethrough and autolink extensions) — the shape `TerminalMarkdown` lays out.
struct MarkdownDocument: Equatable {
    indirect enum Block: Equatable {
        case paragraph([Run])
        case heading(level: Int, [Run])
        case quote([Block])
        case list(ordered: Bool, start: Int, tight: Bool, items: [[Block]])
        case code(language: String, lines: [String])
        case table(alignments: [Alignment], header: [[Run]], rows: [[[Run]]])
        case rule
    }

    enum Alignment: Equatable { case left, center, right }

    /// Text with the styles that apply to it.
    struct Run: Equatable {
        var text: String
        var style: Style = []
        /// A link's target, shown after its text.
        var link: String?
    }

    struct Style: OptionSet, Equatable {
        let rawValue: Int
        static let strong = Style(rawValue: 1)
        static let emphasis = Style(rawValue: 2)
        static let code = Style(rawValue: 4)
        static let strike = Style(rawValue: 8)
        static let link = Style(rawValue: 16)
    }

    var blocks: [Block]

    /// The deepest nesting followed; deeper blocks are flattened into text (a hostile answer cannot recurse
    /// without bound).
    static let maximumDepth = 32

    /// Parses `text`. Never fails: anything cmark-gfm accepts (everything) becomes blocks.
    init(parsing text: String) {
        cmark_gfm_core_extensions_ensure_registered()
        let parser = cmark_parser_new(CMARK_OPT_DEFAULT)
        defer { cmark_parser_free(parser) }
        for name in ["table", "strikethrough", "autolink"] {
            if let extension_ = cmark_find_syntax_extension(name) {
                cmark_parser_attach_syntax_extension(parser, extension_)
            }
        }
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress?.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                cmark_parser_feed(parser, $0, buffer.count)
            }
        }
        guard let root = cmark_parser_finish(parser) else {
            blocks = [.paragraph([Run(text: text)])]
            return
        }
        defer { cmark_node_free(root) }
        blocks = Self.blocks(of: root, depth: 0)
    }

    private static func children(_ node: OpaquePointer?) -> [OpaquePointer] {
        var result: [OpaquePointer] = []
        var child = cmark_node_first_child(node)
        while let current = child {
            result.append(current)
            child = cmark_node_next(current)
        }
        return result
    }

    private static func literal(_ node: OpaquePointer?) -> String {
        cmark_node_get_literal(node).map { String(cString: $0) } ?? ""
    }

    private static func typeName(_ node: OpaquePointer?) -> String {
        cmark_node_get_type_string(node).map { String(cString: $0) } ?? ""
    }

    private static func blocks(of node: OpaquePointer?, depth: Int) -> [Block] {
        children(node).compactMap { block($0, depth: depth) }
    }

    private static func block(_ node: OpaquePointer, depth: Int) -> Block? {
        if depth >= maximumDepth { return .paragraph([Run(text: plainText(node))]) }
        switch cmark_node_get_type(node) {
        case CMARK_NODE_PARAGRAPH: return .paragraph(runs(of: node, style: [], depth: depth))
        case CMARK_NODE_HEADING:
            return .heading(level: Int(cmark_node_get_heading_level(node)), runs(of: node, style: [], depth: depth))
        case CMARK_NODE_BLOCK_QUOTE: return .quote(blocks(of: node, depth: depth + 1))
        case CMARK_NODE_LIST:
            let items = children(node).map { blocks(of: $0, depth: depth + 1) }
            return .list(
                ordered: cmark_node_get_list_type(node) == CMARK_ORDERED_LIST,
                start: Int(cmark_node_get_list_start(node)), tight: cmark_node_get_list_tight(node) != 0, items: items)
        case CMARK_NODE_CODE_BLOCK:
            var lines = literal(node).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if lines.last == "" { lines.removeLast() }
            let info = cmark_node_get_fence_info(node).map { String(cString: $0) } ?? ""
            return .code(language: String(info.split(separator: " ").first ?? ""), lines: lines)
        case CMARK_NODE_HTML_BLOCK: return .paragraph([Run(text: literal(node).trimmingTrailingNewlines)])
        case CMARK_NODE_THEMATIC_BREAK: return .rule
        default:
            guard typeName(node) == "table" else { return .paragraph([Run(text: plainText(node))]) }
            let count = Int(cmark_gfm_extensions_get_table_columns(node))
            let raw = cmark_gfm_extensions_get_table_alignments(node)
            let alignments = (0..<count).map { index -> Alignment in
                switch raw?[index] {
                case UInt8(ascii: "c"): return .center
                case UInt8(ascii: "r"): return .right
                default: return .left
                }
            }
            var header: [[Run]] = []
            var rows: [[[Run]]] = []
            for row in children(node) {
                let cells = children(row).map { runs(of: $0, style: [], depth: depth + 1) }
                if cmark_gfm_extensions_get_table_row_is_header(row) != 0 { header = cells } else { rows.append(cells) }
            }
            return .table(alignments: alignments, header: header, rows: rows)
        }
    }

    /// The inline content of `node` as runs.
    private static func runs(of node: OpaquePointer?, style: Style, link: String? = nil, depth: Int) -> [Run] {
        var result: [Run] = []
        for child in children(node) {
            if depth >= maximumDepth {
                result.append(Run(text: plainText(child), style: style, link: link))
                continue
            }
            switch cmark_node_get_type(child) {
            case CMARK_NODE_TEXT: result.append(Run(text: literal(child), style: style, link: link))
            case CMARK_NODE_CODE: result.append(Run(text: literal(child), style: style.union(.code), link: link))
            case CMARK_NODE_SOFTBREAK: result.append(Run(text: " ", style: style, link: link))
            case CMARK_NODE_LINEBREAK: result.append(Run(text: "\n", style: style, link: link))
            case CMARK_NODE_EMPH: result += runs(of: child, style: style.union(.emphasis), link: link, depth: depth + 1)
            case CMARK_NODE_STRONG: result += runs(of: child, style: style.union(.strong), link: link, depth: depth + 1)
            case CMARK_NODE_LINK:
                let url = cmark_node_get_url(child).map { String(cString: $0) } ?? ""
                result += runs(of: child, style: style.union(.link), link: url, depth: depth + 1)
            case CMARK_NODE_IMAGE:
                let url = cmark_node_get_url(child).map { String(cString: $0) } ?? ""
                result += runs(of: child, style: style.union(.link), link: url, depth: depth + 1)
            case CMARK_NODE_HTML_INLINE: result.append(Run(text: literal(child), style: style, link: link))
            default:
                if typeName(child) == "strikethrough" {
                    result += runs(of: child, style: style.union(.strike), link: link, depth: depth + 1)
                } else {
                    result.append(Run(text: plainText(child), style: style, link: link))
                }
            }
        }
        return result
    }

    /// All the text under `node`, without structure.
    private static func plainText(_ node: OpaquePointer) -> String {
        let iterator = cmark_iter_new(node)
        defer { cmark_iter_free(iterator) }
        var text = ""
        while cmark_iter_next(iterator) != CMARK_EVENT_DONE {
            let current = cmark_iter_get_node(iterator)
            switch cmark_node_get_type(current) {
            case CMARK_NODE_TEXT, CMARK_NODE_CODE, CMARK_NODE_CODE_BLOCK, CMARK_NODE_HTML_INLINE:
                if cmark_iter_get_event_type(iterator) == CMARK_EVENT_ENTER { text += literal(current) }
            case CMARK_NODE_SOFTBREAK, CMARK_NODE_LINEBREAK: text += " "
            default: break
            }
        }
        return text
    }
}

extension String {
    fileprivate var trimmingTrailingNewlines: String {
        var text = self
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
