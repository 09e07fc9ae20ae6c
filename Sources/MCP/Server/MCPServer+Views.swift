import Foundation
import SkillFolders
import SkillHost
import SkillJSON

/// The plugins' views (ABI 1.4) as MCP Apps: each a `ui://PLUGIN/NAME` resource of type `text/html;profile=mcp-app`,
/// with its declared `csp` and `permissions` under `_meta.ui`; a skill that shows its results in one names it in its
/// tool's `_meta.ui.resourceUri` (and the flat key older hosts read), with who may call it as `visibility`.
extension MCPServer {
    static let viewScheme = "ui://"
    static let appType = "text/html;profile=mcp-app"

    /// The extension a client announces when it renders MCP Apps.
    static let appsExtension = "io.modelcontextprotocol/ui"

    /// Whether `capabilities` (a client's) announce that it renders MCP Apps: the extension with the app type.
    static func hostsApps(_ capabilities: JSONValue?) -> Bool {
        let types = capabilities?["extensions"]?[appsExtension]?["mimeTypes"]?.arrayValue ?? []
        return types.contains(.string(appType))
    }

    /// Whether the client of `request` renders MCP Apps: a 2026-07-28 request's own capabilities, an HTTP session's
    /// or the stdio client's `initialize`.
    func hostsApps(_ request: MCPRequest, _ exchange: MCPExchange) -> Bool {
        if request.stateless {
            return Self.hostsApps(request.params["_meta"]?[MCPProtocol.Meta.clientCapabilities])
        }
        if let session = exchange.hostsApps { return session }
        return exchange.isStdio && state.withLock { $0.hostsApps }
    }

    /// The tools a client is offered: a skill only its plugin's views may call goes only to a client that renders
    /// apps (it keeps it from its model, as `visibility` says); another client's model would be offered it.
    func offeredTools(_ request: MCPRequest, _ exchange: MCPExchange) -> [SkillInfo] {
        let approved = registry.offered(registry.skills)
        guard !hostsApps(request, exchange) else { return approved }
        return approved.filter { $0.audience.contains(.model) }
    }

    /// The views of the skills offered, each once.
    /// Skill folders' views too (`ui://skills/NAME`): listed and read, though no tool names them (a host cannot
    /// tie a folder's view to the one `skill_run` tool; skillhost's browser does).
    /// An MCP server's views are not served on: their addresses are the server's to choose, and one could take
    /// another's (`ui://notes/list`); skillhost's browser shows them beside their own tools only.
    func views() -> [SkillView] {
        var seen: Set<String> = []
        let own = registry.offered(registry.skills).filter { $0.kind != .external }.compactMap(\.view)
        return (own + (skillFolders?.views() ?? [])).filter { seen.insert($0.uri).inserted }
    }

    /// `resources/list`'s view part.
    func viewResourceList() -> [JSONValue] {
        views().map { view in
            [
                "uri": .string(view.uri), "name": .string("\(view.plugin)-\(view.name)"), "title": .string(view.title),
                "description": .string(
                    "An MCP App of plugin \(view.plugin): the view its skills show their results in."),
                "mimeType": .string(Self.appType), "_meta": ["ui": view.resourceMeta],
            ]
        }
    }

    /// `resources/read` of a `ui://` URI: the page, with its declared CSP and permissions; nil for no such view.
    func readViewResource(_ uri: String) -> JSONValue? {
        // A folder's page is read from its folder alone, not every folder's to find it.
        let folder = "ui://\(SkillFolderTools.source)/"
        let found =
            uri.hasPrefix(folder)
            ? (try? skillFolders?.view(named: String(uri.dropFirst(folder.count)))?.get())
            : registry.offered(registry.skills).first { $0.kind != .external && $0.view?.uri == uri }?.view
        guard let view = found, view.uri == uri else { return nil }
        return [
            "contents": [
                [
                    "uri": .string(uri), "mimeType": .string(Self.appType), "text": .string(view.html),
                    "_meta": ["ui": view.resourceMeta],
                ]
            ]
        ]
    }

    /// A tool's `_meta` for MCP Apps: its view and who may call it; nil for a skill with neither.
    static func viewMeta(_ skill: SkillInfo) -> JSONValue? {
        // An MCP server's view is not served on (`views`): its tool names none.
        let view = skill.kind == .external ? nil : skill.view
        guard view != nil || skill.audience != [.model, .view] else { return nil }
        var ui = JSONObject()
        if let view { ui["resourceUri"] = .string(view.uri) }
        ui["visibility"] = .array(skill.audience.visibility.map { .string($0) })
        var meta = JSONObject([(key: "ui", value: .object(ui))])
        if let view { meta["ui/resourceUri"] = .string(view.uri) }
        return .object(meta)
    }
}
