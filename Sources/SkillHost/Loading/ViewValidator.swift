import Foundation
import SkillJSON

/// A plugin's view (`skill_view`, since ABI 1.4): an MCP App — a static HTML page a host shows where a skill's result
/// is, served as `ui://PLUGIN/NAME`. Copied at load; what it shows of the person's data arrives through the host's
/// bridge, never in the page.
public struct SkillView: Sendable, Equatable {
    /// `^[a-z][a-z0-9_-]{0,63}$`, unique in its plugin.
    public let name: String
    /// The plugin that declares it.
    public let plugin: String
    /// For people (the name when the plugin gives none).
    public let title: String
    /// The page: a whole HTML document, at most `ViewValidator.maximumPage` bytes.
    public let html: String
    /// The origins it may reach, as MCP Apps declare them (`connectDomains`, `resourceDomains`, `frameDomains`,
    /// `baseUriDomains`); nil: none.
    public let csp: JSONValue?
    /// What it may use (`camera`, `microphone`, `geolocation`, `clipboardWrite`); nil: none.
    public let permissions: JSONValue?
    /// The host draws a border around it.
    public let prefersBorder: Bool

    /// An MCP server's own address for it (`ui://…`, as the server names it); nil for a plugin's.
    package var resource: String? = nil
    /// The skill folder whose view it is (set only by the skill folders' tools): it may run only that folder's
    /// scripts. Nil for a plugin's or a server's.
    package var folder: String? = nil

    /// Where MCP hosts read it.
    public var uri: String { resource ?? "ui://\(plugin)/\(name)" }

    /// A view an MCP server serves as `resource` for its tools (`plugin`: the source its tools are registered
    /// under): its page and declarations as the server gave them.
    package init(
        resource: String, plugin: String, title: String, html: String, csp: JSONValue?, permissions: JSONValue?,
        prefersBorder: Bool
    ) {
        self.init(
            name: String(resource.dropFirst("ui://".count).prefix(64)), plugin: plugin, title: title, html: html,
            csp: csp, permissions: permissions, prefersBorder: prefersBorder)
        self.resource = resource
    }

    init(
        name: String, plugin: String, title: String, html: String, csp: JSONValue?, permissions: JSONValue?,
        prefersBorder: Bool
    ) {
        self.name = name
        self.plugin = plugin
        self.title = title
        self.html = html
        self.csp = csp
        self.permissions = permissions
        self.prefersBorder = prefersBorder
    }

    /// The resource's `_meta.ui`, as MCP Apps read it.
    public var resourceMeta: JSONValue {
        var ui = JSONObject()
        if let csp { ui["csp"] = csp }
        if let permissions { ui["permissions"] = permissions }
        if prefersBorder { ui["prefersBorder"] = true }
        return .object(ui)
    }
}

extension SkillView {
    /// As a Swift worker reports it.
    var json: JSONValue {
        [
            "name": .string(name), "title": .string(title), "html": .string(html), "csp": csp ?? .null,
            "permissions": permissions ?? .null, "prefers_border": .bool(prefersBorder),
        ]
    }

    /// A worker's report, checked again as at load (the worker runs a stranger's code); nil when it fails a rule.
    init?(json: JSONValue, plugin: String) {
        guard let name = json["name"]?.stringValue, ViewValidator.isValidName(name),
            let html = json["html"]?.stringValue, html.utf8.count <= ViewValidator.maximumPage,
            (json["title"]?.stringValue ?? "").utf8.count <= ViewValidator.maximumTitle
        else { return nil }
        let csp = json["csp"].flatMap { $0 == .null ? nil : $0 }
        let permissions = json["permissions"].flatMap { $0 == .null ? nil : $0 }
        if let csp, ViewValidator.cspProblem(csp) != nil { return nil }
        if let permissions, ViewValidator.permissionsProblem(permissions) != nil { return nil }
        self.init(
            name: name, plugin: plugin, title: json["title"]?.stringValue ?? name, html: html, csp: csp,
            permissions: permissions, prefersBorder: json["prefers_border"] == .bool(true))
    }
}

/// Who may call a skill (`skill_descriptor.audience`, since ABI 1.4; MCP Apps' `visibility`).
public struct SkillAudience: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Offered to models (an agent's, an MCP client's).
    public static let model = SkillAudience(rawValue: 1 << 0)
    /// Callable from its plugin's views, through the host.
    public static let view = SkillAudience(rawValue: 1 << 1)

    /// As MCP Apps name it in a tool's `_meta.ui.visibility`.
    public var visibility: [String] { (contains(.model) ? ["model"] : []) + (contains(.view) ? ["app"] : []) }
}

/// Checks a plugin's views (ABI 1.4) and the skills' references to them.
package enum ViewValidator {
    /// A v1.4 `skill_view` up to its `flags` (every later version is longer).
    static let minimumViewSize = 52
    static let maximumViews: UInt32 = 16
    /// The largest `skill_view.struct_size` read (a later header's record may be longer than today's, never this).
    static let maximumViewSize: UInt32 = 1024

    /// Whether a record of `size` bytes is read: at least the 1.4 record, at most `maximumViewSize`, a multiple of
    /// 8 (what any compiler makes of a record of pointers).
    static func isReadableSize(_ size: UInt32) -> Bool {
        Int(size) >= minimumViewSize && size <= maximumViewSize && size % 8 == 0
    }
    /// The largest page, in bytes.
    static let maximumPage = 512 << 10
    /// The longest title, in bytes.
    static let maximumTitle = 200
    /// The largest `csp` or `permissions` declaration, in bytes.
    static let maximumDeclaration = 16 << 10
    static let cspLists = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"]
    static let permissionNames = ["camera", "microphone", "geolocation", "clipboardWrite"]
    static let maximumOrigins = 32

    /// The views of plugin `plugin` (none when the struct has none), or the problems, one sentence each.
    static func validate(_ body: RawPlugin.Body, plugin: String) -> (views: [SkillView], problems: [PluginProblem]) {
        guard let count = body.viewCount else { return ([], []) }
        var problems: [PluginProblem] = []
        guard count <= maximumViews else {
            return ([], [.other("declares \(count) views; at most \(maximumViews) are supported")])
        }
        if count > 0, body.views.isEmpty {
            return ([], [.other("declares \(count) views but views is NULL; point it at the array, or set 0")])
        }
        var views: [SkillView] = []
        let stride = body.views.first?.structSize ?? 0
        for (index, raw) in body.views.enumerated() {
            func problem(_ reason: String) { problems.append(.other("views[\(index)]: \(reason)")) }
            guard let fields = raw.fields else {
                problem(
                    Int(raw.structSize) < minimumViewSize
                        ? "struct_size \(raw.structSize) is less than \(minimumViewSize); build with skill_sdk.h 1.4 or later"
                        : !isReadableSize(raw.structSize)
                            ? "struct_size \(raw.structSize) is not the size of a view record (a multiple of 8, at most "
                                + "\(maximumViewSize)); build with skill_sdk.h and SKILL_VIEW"
                            : "struct_size \(raw.structSize) differs from the first view's \(stride); build every view with the same header"
                )
                continue
            }
            guard fields.utf8 else {
                problem("its text (name, title, page, csp or permissions) is not UTF-8; write the page in UTF-8")
                continue
            }
            let name = fields.name ?? ""
            guard isValidName(name) else {
                problem("the name \"\(name.prefix(80))\" is not ^[a-z][a-z0-9_-]{0,63}$")
                continue
            }
            if views.contains(where: { $0.name == name }) { problem("the name \(name) is used twice") }
            let title = fields.title ?? ""
            if title.utf8.count > maximumTitle
                || title.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
            {
                problem(
                    "view \(name)'s title is longer than \(maximumTitle) bytes or holds control characters; keep it a "
                        + "short line")
            }
            let html = fields.html ?? ""
            if html.utf8.count > maximumPage {
                problem(
                    "view \(name)'s page is longer than \(maximumPage >> 10) KB; keep it small, its data comes through the bridge"
                )
            } else if html.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                problem("view \(name) has no page (html is NULL or empty)")
            }
            let csp = declaration(fields.csp, "csp", of: name, problem) { value in cspProblem(value) }
            let permissions = declaration(fields.permissions, "permissions", of: name, problem) { value in
                permissionsProblem(value)
            }
            if fields.flags & ~UInt32(1) != 0 {
                problem(
                    "view \(name)'s flags 0x\(String(fields.flags, radix: 16)) contain unknown bits; use SKILL_VIEW_PREFERS_BORDER"
                )
            }
            views.append(
                SkillView(
                    name: name, plugin: plugin, title: fields.title.flatMap { $0.isEmpty ? nil : $0 } ?? name,
                    html: html, csp: csp, permissions: permissions, prefersBorder: fields.flags & 1 != 0))
        }
        return (views, problems)
    }

    /// A declaration (`csp`, `permissions`) parsed and checked; nil when none or refused (with a problem).
    private static func declaration(
        _ text: String?, _ field: String, of view: String, _ problem: (String) -> Void,
        _ check: (JSONValue) -> String?
    ) -> JSONValue? {
        guard let text else { return nil }
        guard text.utf8.count <= maximumDeclaration else {
            problem("view \(view)'s \(field) is longer than \(maximumDeclaration >> 10) KB")
            return nil
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: text) } catch {
            problem("view \(view)'s \(field) is not JSON: \(error)")
            return nil
        }
        guard case .object = value else {
            problem("view \(view)'s \(field) is not a JSON object")
            return nil
        }
        if let reason = check(value) {
            problem("view \(view)'s \(field): \(reason)")
            return nil
        }
        return value
    }

    /// What is wrong with a `csp` declaration: only the four lists, each of origins.
    static func cspProblem(_ value: JSONValue) -> String? {
        guard case .object(let object) = value else { return "not an object" }
        for (key, list) in object.members {
            guard cspLists.contains(key) else {
                return "\(key.prefix(40)) is not one of \(cspLists.joined(separator: ", "))"
            }
            guard let origins = list.arrayValue, origins.count <= maximumOrigins else {
                return "\(key) is not a list of at most \(maximumOrigins) origins"
            }
            for origin in origins {
                guard let text = origin.stringValue, isOrigin(text) else {
                    return "\(key) holds \(origin.jsonText.prefix(80)), not an origin such as https://api.example.com"
                }
            }
        }
        return nil
    }

    /// What is wrong with a `permissions` declaration: only the four names, each `{}`.
    static func permissionsProblem(_ value: JSONValue) -> String? {
        guard case .object(let object) = value else { return "not an object" }
        for (key, setting) in object.members {
            guard permissionNames.contains(key) else {
                return "\(key.prefix(40)) is not one of \(permissionNames.joined(separator: ", "))"
            }
            guard case .object(let inner) = setting, inner.members.isEmpty else { return "\(key) must be {}" }
        }
        return nil
    }

    /// `scheme://host[:port]` — scheme http, https, ws or wss; a host of ASCII letters, digits, dots and dashes, a
    /// leading `*.` allowed — nothing a content security policy would read as more (no spaces, quotes, semicolons,
    /// commas, paths or keywords). The browser builds a view's policy from these alone.
    package static func isOrigin(_ text: String) -> Bool {
        guard text.utf8.count <= 200, let separator = text.range(of: "://") else { return false }
        guard ["http", "https", "ws", "wss"].contains(text[..<separator.lowerBound]) else { return false }
        var host = text[separator.upperBound...]
        if let colon = host.lastIndex(of: ":") {
            let port = host[host.index(after: colon)...]
            guard !port.isEmpty, port.count <= 5, port.utf8.allSatisfy({ (48...57).contains($0) }),
                let number = Int(port), number <= 65535
            else { return false }
            host = host[..<colon]
        }
        if host.hasPrefix("*.") {
            host = host.dropFirst(2)
            // Subdomains of a name, not of a whole top-level domain (`*.com`).
            guard host.contains(".") else { return false }
        }
        return !host.isEmpty && !host.hasPrefix(".") && !host.hasSuffix(".") && !host.contains("..")
            && host.utf8.allSatisfy {
                (97...122).contains($0) || (65...90).contains($0) || (48...57).contains($0) || $0 == 45 || $0 == 46
            }
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.utf8.first, name.utf8.count <= 64, (97...122).contains(first) else { return false }
        return name.utf8.allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 95 || $0 == 45 }
    }
}
