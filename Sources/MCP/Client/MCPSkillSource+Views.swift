import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// The views (MCP Apps) of a server skillhost consumes: each tool's `_meta.ui` (its `ui://` resource and who may
/// call it), and the resources themselves, read once per refresh through `resources/read` and bounded. A view that
/// breaks a rule is left out — its tools work without it — and said once in the log.
extension MCPSkillSource {
    /// The largest page a server's view may be (a plugin's is at most 512 KB; an app bundling its SDK is larger).
    static let maximumViewPage = 4 << 20
    /// The views read of one server.
    static let maximumViews = 16

    /// The view a tool declares (`_meta.ui.resourceUri`, else the older flat key), when it is a `ui://` address.
    static func viewURI(_ tool: JSONValue) -> String? {
        let uri = tool["_meta"]?["ui"]?["resourceUri"]?.stringValue ?? tool["_meta"]?["ui/resourceUri"]?.stringValue
        guard let uri, uri.hasPrefix("ui://"), uri.utf8.count <= 512 else { return nil }
        return uri
    }

    /// Who may call a tool (`_meta.ui.visibility`; both when it says nothing): a tool only for its views is never
    /// offered to a model.
    static func audience(_ tool: JSONValue) -> SkillAudience {
        guard let visibility = tool["_meta"]?["ui"]?["visibility"]?.arrayValue else { return [.model, .view] }
        var audience: SkillAudience = []
        if visibility.contains("model") { audience.insert(.model) }
        if visibility.contains("app") { audience.insert(.view) }
        return audience
    }

    /// Reads the views `tools` name, each once (at most `maximumViews`), by address.
    func readViews(_ tools: [JSONValue], _ connection: MCPClientSession) async -> [String: SkillView] {
        var addresses: [String] = []
        for tool in tools {
            if let uri = Self.viewURI(tool), !addresses.contains(uri) { addresses.append(uri) }
        }
        var views: [String: SkillView] = [:]
        for uri in addresses.prefix(Self.maximumViews) {
            switch await readView(uri, connection) {
            case .success(let view): views[uri] = view
            case .failure(let refusal):
                log(LogRecord(level: .warning, source: sourceName, message: refusal.sentence))
            }
        }
        return views
    }

    struct ViewRefusal: Error {
        let sentence: String
    }

    private func readView(_ uri: String, _ connection: MCPClientSession) async -> Result<SkillView, ViewRefusal> {
        let without = "; its tools are shown without it"
        let result: JSONValue
        do throws(MCPClientError) {
            result = try await connection.request(
                "resources/read", JSONObject([(key: "uri", value: .string(uri))]), timeout: configuration.startTimeout)
        } catch {
            return .failure(
                ViewRefusal(sentence: "MCP server \(name) could not read its view \(uri): \(error.message)\(without)"))
        }
        let contents = result["contents"]?.arrayValue ?? []
        guard contents.count == 1, let content = contents.first else {
            return .failure(
                ViewRefusal(
                    sentence:
                        "MCP server \(name) gave \(contents.count) contents for its view \(uri), not one\(without)"
                ))
        }
        let type = content["mimeType"]?.stringValue ?? "no type"
        guard type == "text/html;profile=mcp-app" else {
            return .failure(
                ViewRefusal(
                    sentence:
                        "MCP server \(name)'s view \(uri) is \(type.prefix(80)), not text/html;profile=mcp-app\(without)"
                ))
        }
        // The page's size before it is decoded: a blob's from its length.
        let text = content["text"]?.stringValue
        let blob = content["blob"]?.stringValue
        let size = text?.utf8.count ?? (blob?.utf8.count ?? 0) / 4 * 3
        guard size <= Self.maximumViewPage else {
            let megabytes = String(format: "%.1f", Double(size) / 1_048_576)
            return .failure(
                ViewRefusal(
                    sentence: "MCP server \(name)'s view \(uri) is \(megabytes) MB; a view is at most "
                        + "\(Self.maximumViewPage >> 20) MB\(without)"))
        }
        guard
            let html = text ?? blob.flatMap({ Data(base64Encoded: $0) }).flatMap({ String(data: $0, encoding: .utf8) })
        else {
            return .failure(
                ViewRefusal(
                    sentence: "MCP server \(name)'s view \(uri) is neither text nor base64 of UTF-8 text\(without)"))
        }
        // What the server declares arrives unchecked: the browser builds the frame's policy only from entries that
        // are origins (WebAppPolicy), and grants only the permissions it knows.
        let ui = content["_meta"]?["ui"]
        let csp = ui?["csp"].flatMap { $0.objectValue == nil ? nil : $0 }
        let permissions = ui?["permissions"].flatMap { $0.objectValue == nil ? nil : $0 }
        return .success(
            SkillView(
                resource: uri, plugin: sourceName, title: String(uri.dropFirst("ui://".count).prefix(200)), html: html,
                csp: csp, permissions: permissions, prefersBorder: ui?["prefersBorder"] == .bool(true)))
    }
}
