/// The files `skillhost new` writes, by language.
enum NewTemplates {
    /// `my-tools` → `my_tools`: the prefix of the skill ids.
    static func prefix(_ name: String) -> String { name.replacingOccurrences(of: "-", with: "_") }

    static func c(name: String, include: String, cpp: Bool) -> [(String, String)] {
        let id = prefix(name)
        let source = cpp ? "\(name).cpp" : "\(name).c"
        let code = """
            /* \(name) — a skillhost plugin with one typed skill and one JSON skill. See README.md. */
            #include <\(cpp ? "cstdio" : "stdio.h")>
            #include "skill_sdk.h"
            #include "skill_json.h"

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
                SKILL_JSON("\(id)_greet", "Greet", "Greets someone by name.",
                           "{\\"type\\":\\"object\\",\\"properties\\":{\\"name\\":{\\"type\\":\\"string\\",\\"maxLength\\":60}},\\"required\\":[\\"name\\"]}",
                           SKILL_RISK_READ_ONLY, SKILL_IDEMPOTENT, \(id)_greet),
            };

            SKILL_PLUGIN("\(name)", "0.1.0", "\(name) skills", skills)

            """
        let compiler =
            cpp ? "CXX ?= c++\nCXXFLAGS ?= -O2 -std=c++17 -Wall -Wextra" : "CC ?= cc\nCFLAGS ?= -O2 -Wall -Wextra"
        let rule = cpp ? "$(CXX) $(CXXFLAGS)" : "$(CC) $(CFLAGS)"
        let makefile = """
            # Builds \(name).so against the skillhost SDK. SDK_CFLAGS: pkg-config's when skillsdk.pc is installed,
            # else the headers this project was created with (override: make SDK_CFLAGS=-I/path/to/include).
            \(compiler)
            SDK_CFLAGS ?= $(shell pkg-config --cflags skillsdk 2>/dev/null || echo -I\(include))

            \(name).so: \(source)
            \t\(rule) -shared -fPIC -fvisibility=hidden $(SDK_CFLAGS) $< -o $@

            check: \(name).so
            \tskillhost check ./\(name).so

            install: \(name).so
            \tskillhost plugin install ./\(name).so

            clean:
            \trm -f \(name).so

            .PHONY: check install clean

            """
        return [
            (source, code), ("Makefile", makefile),
            ("README.md", readme(name: name, build: "make", library: "\(name).so", id: id)),
        ]
    }

    static func swift(name: String, package: String) -> [(String, String)] {
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
                }
            }

            @_cdecl("skill_plugin_entry")
            public func skillPluginEntry() -> UnsafePointer<skill_plugin>? {
                SwiftSkillPlugin.export(
                    name: "\(name)", version: "0.1.0", description: "\(name) skills", skills: [Add.self, Greet.self])
            }

            """
        return [
            ("Package.swift", manifest), ("Sources/\(target)/\(target).swift", code),
            (
                "README.md",
                readme(name: name, build: "swift build -c release", library: ".build/release/lib\(name).so", id: id)
            ),
        ]
    }

    /// Commands with their comments in one column, two spaces after the longest command (the names in them vary,
    /// so a fixed column left them ragged).
    static func aligned(_ lines: [(command: String, comment: String)]) -> String {
        let width = lines.map(\.command.count).max() ?? 0
        return lines.map { line in
            line.command + String(repeating: " ", count: width - line.command.count + 2) + "# " + line.comment
        }.joined(separator: "\n")
    }

    static func readme(name: String, build: String, library: String, id: String) -> String {
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

            """
    }
}
