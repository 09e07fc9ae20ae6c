// swift-tools-version:6.0
import PackageDescription

/// Flags every bundled C plugin builds with: only `skill_plugin_entry` is exported (rule 1 of
/// SkillSDK/include/skill_sdk.h).
let pluginCSettings: [CSetting] = [.unsafeFlags(["-fvisibility=hidden", "-Wall", "-Wextra"])]

/// Every library module: a public type must say whether it is Sendable (`.ci/run` fails on the warning).
let librarySwiftSettings: [SwiftSetting] = [.unsafeFlags(["-Xfrontend", "-require-explicit-sendable"])]

let package = Package(
    name: "skillhost",
    products: [
        .executable(name: "skillhost", targets: ["skillhost"]),
        .executable(name: "skillhost-bench", targets: ["skillhost-bench"]),
        // Confines itself as the host planned, then becomes a skill folder's script (no Swift runtime to start).
        .executable(name: "skillhost-sandbox", targets: ["SandboxLauncher"]),
        .library(name: "SkillHost", targets: ["SkillHost"]),
        .library(name: "SkillSDKSwift", targets: ["SkillSDKSwift"]),
        // Bundled plugins: built next to the executable as libskill-<name>.so and loaded from there by default.
        .library(name: "skill-calculator", type: .dynamic, targets: ["PluginCalculator"]),
        .library(name: "skill-units", type: .dynamic, targets: ["PluginUnits"]),
        .library(name: "skill-text", type: .dynamic, targets: ["PluginText"]),
        .library(name: "skill-clock", type: .dynamic, targets: ["PluginClock"]),
        .library(name: "skill-notes", type: .dynamic, targets: ["PluginNotes"]),
    ],
    targets: [
        // The C ABI: SkillSDK/include/skill_sdk.h (+ the optional skill_json.h helpers).
        .target(name: "SkillSDK", path: "SkillSDK", exclude: ["Swift"], sources: ["src"], publicHeadersPath: "include"),
        // The Swift helper for plugin authors who write skills in Swift.
        .target(name: "SkillSDKSwift", dependencies: ["SkillSDK"], path: "SkillSDK/Swift"),
        .systemLibrary(name: "CFFI", path: "Sources/CFFI", pkgConfig: "libffi", providers: [.apt(["libffi-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "CTerminal"),
        // cmark-gfm (Debian libcmark-gfm-dev and libcmark-gfm-extensions-dev) for the shell's markdown answers.
        .systemLibrary(
            name: "CMarkGFM", path: "Sources/CMarkGFM", pkgConfig: "libcmark-gfm",
            providers: [.apt(["libcmark-gfm-dev", "libcmark-gfm-extensions-dev"])]),
        // libseccomp (Debian libseccomp-dev) for the workers' system-call filter.
        .systemLibrary(
            name: "CSeccomp", path: "Sources/CSeccomp", pkgConfig: "libseccomp", providers: [.apt(["libseccomp-dev"])]),
        .target(name: "CProcess", dependencies: ["CSeccomp", "SkillSDK"]),
        .executableTarget(name: "SandboxLauncher", dependencies: ["CProcess"]),
        // The worker process without the Swift runtime: loads one plugin and answers its host (protocol.md there).
        // Linked without the Swift runtime it never calls (Scripts/link-without-swift-runtime says why).
        .executableTarget(
            name: "skillhost-worker", dependencies: ["CProcess", "SkillSDK", "CFFI"], exclude: ["protocol.md"],
            linkerSettings: [
                .linkedLibrary("ffi"),
                .unsafeFlags(["-ld-path=\(Context.packageDirectory)/Scripts/link-without-swift-runtime"]),
            ]),
        // The HTTP server of `skillhost mcp --http` over libmicrohttpd (Debian libmicrohttpd-dev, which brings
        // GnuTLS for HTTPS and the hashes of bearer tokens).
        .target(name: "CHTTP", linkerSettings: [.linkedLibrary("microhttpd"), .linkedLibrary("gnutls")]),
        // The HTTP client (the model server, MCP servers by URL) over libcurl's easy interface (Debian
        // libcurl4-openssl-dev), with backpressure so a server that never stops sending costs a bounded window.
        .target(name: "CHTTPClient", linkerSettings: [.linkedLibrary("curl")]),
        .target(name: "SkillJSON", swiftSettings: librarySwiftSettings),
        // libyaml (Debian libyaml-dev) for the front matter of Agent Skills folders (SKILL.md).
        .systemLibrary(name: "CYAML", path: "Sources/CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // Package plumbing the modules share, none of it API: the HTTP client and server (with the guards every
        // server applies), SSE, redaction of secrets, spinning waits.
        .target(
            name: "Support", dependencies: ["CHTTPClient", "CHTTP", "CProcess"], swiftSettings: librarySwiftSettings),
        // CProcess: posix_spawn into a process group and worker setup, for process isolation.
        .target(
            name: "JSONRPC", dependencies: ["SkillJSON", "CProcess", "Support"], swiftSettings: librarySwiftSettings),
        .target(
            name: "SkillHost", dependencies: ["SkillJSON", "JSONRPC", "SkillSDK", "CFFI", "CProcess", "Support"],
            swiftSettings: librarySwiftSettings),
        .target(
            name: "Agent", dependencies: ["SkillHost", "SkillJSON", "Support"], swiftSettings: librarySwiftSettings),
        // Skill folders of the Agent Skills format: read, judged, found, and offered as skills.
        .target(
            name: "SkillFolders", dependencies: ["CYAML", "SkillJSON", "SkillHost", "Support"],
            swiftSettings: librarySwiftSettings
        ),
        .target(
            name: "MCP", dependencies: ["SkillHost", "SkillJSON", "JSONRPC", "CHTTP", "Support", "SkillFolders"],
            swiftSettings: librarySwiftSettings),
        // The session as state any front end renders (the terminal shell, the browser): cards, turn state, trace.
        .target(
            name: "SessionUI", dependencies: ["Agent", "History", "SkillHost", "SkillJSON"],
            swiftSettings: librarySwiftSettings),
        // The conversations, in one SQLite file the shell and the browser front end share.
        .target(
            name: "History", dependencies: ["Agent", "SkillHost", "SkillJSON", "CSQLite"],
            swiftSettings: librarySwiftSettings),
        .target(
            name: "Shell",
            dependencies: [
                "SessionUI", "History", "Agent", "SkillHost", "SkillJSON", "CTerminal", "CMarkGFM", "SkillFolders",
                "Support",
            ],
            swiftSettings: librarySwiftSettings),
        // The browser front end: the session served over HTTP to a page compiled into the binary.
        .target(
            name: "Web",
            dependencies: ["SessionUI", "History", "Agent", "SkillHost", "SkillJSON", "Support", "CMarkGFM"],
            swiftSettings: librarySwiftSettings),
        .executableTarget(
            name: "skillhost",
            dependencies: [
                "Shell", "History", "SessionUI", "Web", "MCP", "Agent", "SkillHost", "SkillJSON", "JSONRPC", "CProcess",
                "SkillFolders",
            ]),
        .executableTarget(
            name: "skillhost-bench",
            dependencies: [
                "Agent", "SessionUI", "SkillHost", "SkillJSON", "CFFI", "TestSupport", "MCP", "Support", "SkillFolders",
            ],
            swiftSettings: [.unsafeFlags(["-Ounchecked"])]),

        .target(
            name: "PluginCalculator", dependencies: ["SkillSDK"], path: "Plugins/calculator", publicHeadersPath: ".",
            cSettings: pluginCSettings, linkerSettings: [.linkedLibrary("m")]),
        .target(
            name: "PluginUnits", dependencies: ["SkillSDK"], path: "Plugins/units", publicHeadersPath: ".",
            cSettings: pluginCSettings, linkerSettings: [.linkedLibrary("m")]),
        .target(
            name: "PluginText", dependencies: ["SkillSDK"], path: "Plugins/text", publicHeadersPath: ".",
            cSettings: pluginCSettings),
        .target(name: "PluginClock", dependencies: ["SkillSDKSwift"], path: "Plugins/clock"),
        .target(
            name: "PluginNotes", dependencies: ["SkillSDK"], path: "Plugins/notes", publicHeadersPath: ".",
            cSettings: pluginCSettings, linkerSettings: [.linkedLibrary("sqlite3")]),

        .target(name: "TestSupport", dependencies: ["SkillHost", "SkillJSON", "Agent"], path: "Tests/TestSupport"),
        // Linked into the test bundle only (never the bench): points the suite's HOME and XDG folders at an empty
        // folder and fails the run if any test writes there.
        .target(name: "CTestSandbox", path: "Tests/CTestSandbox"),
        .testTarget(name: "SkillJSONTests", dependencies: ["SkillJSON"], resources: [.copy("Conformance")]),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "SkillJSON"]),
        .testTarget(name: "SkillFoldersTests", dependencies: ["SkillFolders", "TestSupport", "CTestSandbox"]),
        .testTarget(
            name: "SkillHostTests",
            dependencies: [
                "SkillHost", "SkillFolders", "SkillJSON", "JSONRPC", "TestSupport", "CTestSandbox", "Support",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "AgentTests",
            dependencies: ["Agent", "SkillHost", "SkillJSON", "TestSupport", "CTestSandbox", "Support"]),
        .testTarget(
            name: "MCPTests",
            dependencies: ["MCP", "Agent", "SkillHost", "SkillJSON", "Support", "TestSupport", "CTestSandbox"]),
        .testTarget(
            name: "WebTests",
            dependencies: [
                "Web", "History", "Agent", "SkillHost", "SkillJSON", "Support", "TestSupport", "CTestSandbox",
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "ShellTests",
            dependencies: [
                "Shell", "History", "SessionUI", "Agent", "SkillHost", "SkillJSON", "TestSupport", "CTestSandbox",
            ]),
    ]
)
