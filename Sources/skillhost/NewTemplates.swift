/// The files `skillhost new` writes, by language.
enum NewTemplates {
    /// `my-tools` → `my_tools`: the prefix of the skill ids.
    static func prefix(_ name: String) -> String { name.replacingOccurrences(of: "-", with: "_") }

    static func c(name: String, include: String, cpp: Bool, view: Bool = false) -> [(String, String)] {
        let id = prefix(name)
        let source = cpp ? "\(name).cpp" : "\(name).c"
        let code = """
            /* \(name) — a skillhost plugin with one typed skill and one JSON skill\(view ? " shown in a view" : ""). See README.md. */
            #include <\(cpp ? "cstdio" : "stdio.h")>
            #include "skill_sdk.h"
            #include "skill_json.h"\(view ? "\n#include \"view.h\" /* view_html: view.html as bytes (the Makefile makes it) */" : "")

            /* A typed skill: a plain C function. The host generates its JSON Schema from the signature below and
               calls it through libffi; wrong argument types are refused before it runs. */
            static double \(id)_add(double a, double b) { return a + b; }

            /* A JSON skill: its arguments arrive as a JSON object, already validated against its schema. */
            static int \(id)_greet(void *state, const skill_call_api *api, skill_call *call, const char *args) {
                char who[64], out[100];
                (void)state;
                if (skill_json_get_string(args, "name", who, sizeof who) < 0) return SKILL_ERR_INVALID_ARGS;
                api->set_result(call, out, (size_t)snprintf(out, sizeof out, "Hello, %s!", who));
                return SKILL_OK;
            }

            static const skill_descriptor skills[] = {
                SKILL_TYPED("\(id)_add", "Add", "Adds two numbers a and b.", "double \(id)_add(double a, double b)",
                            \(id)_add),
            \(view ? cGreetWithView(id) : cGreet(id))
            };

            \(view ? cViews(name) : "SKILL_PLUGIN(\"\(name)\", \"0.1.0\", \"\(name) skills\", skills)")

            """
        let compiler =
            cpp ? "CXX ?= c++\nCXXFLAGS ?= -O2 -std=c++17 -Wall -Wextra" : "CC ?= cc\nCFLAGS ?= -O2 -Wall -Wextra"
        let rule = cpp ? "$(CXX) $(CXXFLAGS)" : "$(CC) $(CFLAGS)"
        let makefile = """
            # Builds \(name).so against the skillhost SDK. SDK_CFLAGS: pkg-config's when skillsdk.pc is installed,
            # else the headers this project was created with (override: make SDK_CFLAGS=-I/path/to/include).
            \(compiler)
            SDK_CFLAGS ?= $(shell pkg-config --cflags skillsdk 2>/dev/null || echo -I\(include))

            \(name).so: \(source)\(view ? " view.h" : "")
            \t\(rule) -shared -fPIC -fvisibility=hidden $(SDK_CFLAGS) $< -o $@
            \(view ? viewRule : "")

            check: \(name).so
            \tskillhost check ./\(name).so

            install: \(name).so
            \tskillhost plugin install ./\(name).so

            clean:
            \trm -f \(name).so\(view ? " view.h" : "")

            .PHONY: check install clean

            """
        return [
            (source, code), ("Makefile", makefile),
            ("README.md", readme(name: name, build: "make", library: "\(name).so", id: id, view: view)),
        ] + (view ? [("view.html", NewViewTemplate.page(name: name, skill: "\(id)_greet"))] : [])
    }

    private static func cGreet(_ id: String) -> String {
        """
            SKILL_JSON("\(id)_greet", "Greet", "Greets someone by name.",
                       "{\\"type\\":\\"object\\",\\"properties\\":{\\"name\\":{\\"type\\":\\"string\\",\\"maxLength\\":60}},\\"required\\":[\\"name\\"]}",
                       SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, \(id)_greet),
        """
    }

    /// The greeting skill, shown in the view `greeting` (which models and the view may both call it from).
    private static func cGreetWithView(_ id: String) -> String {
        """
            SKILL_JSON_VIEW("\(id)_greet", "Greet", "Greets someone by name.",
                            "{\\"type\\":\\"object\\",\\"properties\\":{\\"name\\":{\\"type\\":\\"string\\",\\"maxLength\\":60}},\\"required\\":[\\"name\\"]}",
                            NULL, NULL, SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, \(id)_greet, "greeting", 0u),
        """
    }

    /// The plugin with its view: a page hosts that render MCP Apps show where the greeting's result is.
    private static func cViews(_ name: String) -> String {
        """
        /* The view (ABI 1.4): static; the greeting arrives through the host, and its form calls the skill through the
           host too (an ordinary call: rules, confirmations, records). */
        static const skill_view views[] = {
            SKILL_VIEW("greeting", "Greeting", view_html, NULL, NULL, 0u),
        };

        SKILL_PLUGIN_VIEWS("\(name)", "0.1.0", "\(name) skills", skills, NULL, NULL, NULL, 0u, NULL, NULL, views)
        """
    }

    /// make's rule for view.h: view.html as an array of bytes, NUL-terminated, and `view_html` the page as a C
    /// string (od is in every POSIX system; unsigned bytes: C++ refuses to narrow one over 127 into a char).
    private static let viewRule = """

        view.h: view.html
        \t{ printf 'static const unsigned char view_html_bytes[] = {'; od -An -v -tx1 view.html | sed 's/\\([0-9a-f][0-9a-f]\\)/0x\\1,/g'; printf '0};\\n#define view_html ((const char *)view_html_bytes)\\n'; } > $@
        """

    static func swift(name: String, package: String, view: Bool = false) -> [(String, String)] {
        let id = prefix(name)
        let target = "Plugin" + id.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
        let manifest = """
            // swift-tools-version:6.0
            import PackageDescription

            // \(name): a skillhost plugin in Swift. The SDK is a package of its own (identity "skillsdk"), installed
            // by skillhost's make install; swift build -c release makes .build/release/lib\(name).so.
            let package = Package(
                name: "\(name)",
                products: [.library(name: "\(name)", type: .dynamic, targets: ["\(target)"])],
                dependencies: [.package(path: "\(package)")],
                targets: [
                    .target(name: "\(target)", dependencies: [.product(name: "SkillSDKSwift", package: "SkillSDK")])
                ]
            )

            """
        let code = """
            import SkillSDKSwift

            /// Adds two numbers: arguments decoded from the validated JSON, the result encoded as JSON.
            struct Add: SwiftSkill {
                struct Arguments: Decodable { let a: Double; let b: Double }
                static let id = "\(id)_add"
                static let title = "Add"
                static let description = "Adds two numbers a and b."
                static let inputSchema =
                    #"{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}"#
                static func call(_ arguments: Arguments, context: SkillContext) throws -> Double {
                    arguments.a + arguments.b
                }
            }

            /// Greets someone by name.
            struct Greet: SwiftSkill {
                struct Arguments: Decodable { let name: String }
                static let id = "\(id)_greet"
                static let title = "Greet"
                static let description = "Greets someone by name."
                static let inputSchema =
                    #"{"type":"object","properties":{"name":{"type":"string","maxLength":60}},"required":["name"]}"#
                static func call(_ arguments: Arguments, context: SkillContext) throws -> String {
                    "Hello, \\(arguments.name)!"
                }\(view ? "\n    /// Shows its result in the plugin's view (below).\n    static let view: String? = \"greeting\"" : "")
            }
            \(view ? swiftView(name: name, skill: "\(id)_greet") : "")
            @_cdecl("skill_plugin_entry")
            public func skillPluginEntry() -> UnsafePointer<skill_plugin>? {
                SwiftSkillPlugin.export(
                    name: "\(name)", version: "0.1.0", description: "\(name) skills", skills: [Add.self, Greet.self]\(view ? ",\n        views: [SwiftSkillView(name: \"greeting\", title: \"Greeting\", html: page)]" : ""))
            }

            """
        return [
            ("Package.swift", manifest), ("Sources/\(target)/\(target).swift", code),
            (
                "README.md",
                readme(
                    name: name, build: "swift build -c release", library: ".build/release/lib\(name).so", id: id,
                    view: view)
            ),
        ]
    }

    /// The view in Swift: the page as a raw string (static; its data arrives through the host).
    private static func swiftView(name: String, skill: String) -> String {
        let page = NewViewTemplate.page(name: name, skill: skill)
        return "\n/// The view (an MCP App, ABI 1.4) \\(Greet.id) shows its result in.\nlet page = ##\"\"\"\n" + page
            + "\"\"\"##\n"
    }

    /// Commands with their comments in one column, two spaces after the longest command (the names in them vary,
    /// so a fixed column left them ragged).
    static func aligned(_ lines: [(command: String, comment: String)]) -> String {
        let width = lines.map(\.command.count).max() ?? 0
        return lines.map { line in
            line.command + String(repeating: " ", count: width - line.command.count + 2) + "# " + line.comment
        }.joined(separator: "\n")
    }

    static func readme(name: String, build: String, library: String, id: String, view: Bool = false) -> String {
        let commands = aligned([
            (build, "builds \(library)"), ("skillhost check \(library)", "validates it as the host loads it"),
            ("skillhost plugin install \(library)", "into $XDG_DATA_HOME/skillhost/plugins"),
            ("skillhost call \(id)_add '{\"a\": 2, \"b\": 3}'", "5"),
            ("skillhost call \(id)_greet '{\"name\": \"Ada\"}'", "Hello, Ada!"),
        ])
        return """
            # \(name)

            A skillhost plugin with two skills: `\(id)_add` and `\(id)_greet`.

            ```sh
            \(commands)
            ```

            A running skillhost (the shell, `skillhost mcp`) picks the plugin up as soon as it is installed.
            \(view ? "\n`\(id)_greet` shows its result in a view, `view.html` (an MCP App): `skillhost check` lists it as `ui://\(name)/greeting`, and `skillhost mcp` serves it to hosts that render apps. It holds no data: the result arrives through the host, and its form calls `\(id)_greet` through the host too.\n" : "")
            """
    }
}
