/// The view `skillhost new --with-view` writes: a small MCP App (2026-01-26) that shows the greeting's result and
/// greets again through the host. It holds no data of its own: what it shows arrives through the bridge.
enum NewViewTemplate {
    static func page(name: String, skill: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(name)</title>
        <style>
          body { margin: 8px; font: 14px/1.4 system-ui, sans-serif; background: transparent; color: #1d1d1f; }
          @media (prefers-color-scheme: dark) { body { color: #e8e8ea; } }
          form { display: flex; gap: 6px; margin-top: 6px; }
        </style>
        </head>
        <body>
        <p id="greeting" role="status">…</p>
        <form id="again">
          <input id="name" aria-label="Another name" placeholder="Another name" maxlength="60">
          <button>Greet</button>
        </form>
        <script>
        // An MCP App: the host sends the call's result (ui/notifications/tool-result); the form calls \(skill)
        // through the host, which decides on it as on any call.
        let next = 1;
        const waiting = new Map();
        const send = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
        function request(method, params) {
          const id = next++;
          send({ id, method, params });
          return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
        }
        function show(result) {
          const value = result?.structuredContent?.result ?? result?.content?.[0]?.text ?? "";
          document.querySelector("#greeting").textContent = String(value);
          send({ method: "ui/notifications/size-changed", params: { height: document.documentElement.scrollHeight } });
        }
        window.addEventListener("message", ({ source, data }) => {
          if (source !== window.parent || data?.jsonrpc !== "2.0") return;
          if (data.id !== undefined && !data.method) {
            const pending = waiting.get(data.id);
            waiting.delete(data.id);
            if (pending) data.error ? pending.reject(new Error(data.error.message)) : pending.resolve(data.result);
          } else if (data.method === "ui/notifications/tool-result") {
            show(data.params);
          } else if (data.method === "ui/resource-teardown") {
            send({ id: data.id, result: {} });
          }
        });
        document.querySelector("#again").addEventListener("submit", async (submitted) => {
          submitted.preventDefault();
          const name = document.querySelector("#name").value.trim();
          if (name) show(await request("tools/call", { name: "\(skill)", arguments: { name } }));
        });
        request("ui/initialize", {
          protocolVersion: "2026-01-26", appInfo: { name: "\(name)", version: "0.1.0" }, appCapabilities: {},
        }).then(() => send({ method: "ui/notifications/initialized" }));
        </script>
        </body>
        </html>

        """
    }
}
