import Foundation
import TestSupport
import Testing

/// The first ten minutes of a new user: install into a prefix, run the installed binary from elsewhere, build a
/// plugin against the installed SDK in C (pkg-config and the scaffold), C++ and Swift (SwiftPM and plain swiftc),
/// install it as a user does, and uninstall everything again.
struct InstallTests {
    let home = Paths.temporaryDirectory("install-home")

    var environment: [String: String] {
        var environment = cliEnvironment(home: home)
        environment["PKG_CONFIG_PATH"] = nil
        return environment
    }

    /// Runs `command` with `sh -c` in `folder` (off the cooperative pool: builds take seconds).
    func shell(_ command: String, in folder: String, _ extra: [String: String] = [:]) async throws -> ProcessResult {
        var environment = self.environment
        for (key, value) in extra { environment[key] = value }
        return try await runProcessOffPool("/bin/sh", ["-c", "cd '\(folder)' && \(command)"], environment: environment)
    }

    @Test(.timeLimit(.minutes(20))) func theInstalledHostBuildsAndRunsPluginsInEveryLanguage() async throws {
        let prefix = Paths.temporaryDirectory("prefix")
        let installed = try await shell(
            "'\(Paths.root.path)/Scripts/install.sh' '\(Paths.products)' '\(prefix)'", in: Paths.root.path)
        #expect(installed.status == 0, "\(installed.stderr)")
        let skillhost = prefix + "/bin/skillhost"
        for file in [
            "bin/skillhost", "bin/skillhost-sandbox", "bin/skillhost-worker",
            "lib/skillhost/plugins/libskill-calculator.so",
            "include/skillhost/skill_sdk.h",
            "include/skillhost/module.modulemap", "lib/pkgconfig/skillsdk.pc", "share/man/man1/skillhost.1",
            "share/skillhost/swift/SkillSDK/Package.swift",
        ] {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) is installed")
        }

        // From another folder: the bundled plugins are found through the binary's own path.
        let elsewhere = Paths.temporaryDirectory("elsewhere")
        let list = try await shell("'\(skillhost)' list", in: elsewhere)
        #expect(list.stdout.hasPrefix("20 skills from 5 plugins"), "\(list.stdout)")
        #expect(list.stdout.contains("Folders: \(prefix)/lib/skillhost/plugins (bundled)"))
        #expect(!list.stdout.contains("warning:"))
        #expect(
            try await shell("'\(skillhost)' call calculator '{\"expression\": \"6*7\"}'", in: elsewhere).stdout
                == "42\n")

        // C with pkg-config, one line.
        let pkg = ["PKG_CONFIG_PATH": prefix + "/lib/pkgconfig"]
        #expect(
            try await shell("pkg-config --cflags skillsdk", in: elsewhere, pkg).stdout
                == "-I\(prefix)/include/skillhost \n")
        try """
        #include "skill_sdk.h"
        static double twice(double x) { return 2 * x; }
        static const skill_descriptor skills[] = { SKILL_TYPED("twice", "Twice", "Doubles x.", "double twice(double x)", twice) };
        SKILL_PLUGIN("twice", "1.0.0", "x", skills)
        """.write(toFile: elsewhere + "/twice.c", atomically: true, encoding: .utf8)
        let built = try await shell(
            "cc -shared -fPIC -fvisibility=hidden $(pkg-config --cflags skillsdk) twice.c -o twice.so", in: elsewhere,
            pkg)
        #expect(built.status == 0, "\(built.stderr)")
        #expect(try await shell("'\(skillhost)' plugin install twice.so", in: elsewhere).status == 0)
        #expect(try await shell("'\(skillhost)' call twice '{\"x\": 21}'", in: elsewhere).stdout == "42\n")

        // The scaffold, in the three languages: it builds, passes check, installs and answers; with a view (an MCP
        // App, ABI 1.4) in C and in Swift (the Swift one is the one built below with plain swiftc too).
        for (language, view) in [("c", false), ("cpp", false), ("swift", true), ("c", true), ("cpp", true)] {
            let name = "hello-\(language)" + (view && language != "swift" ? "-view" : "")
            let id = name.replacingOccurrences(of: "-", with: "_")
            let created = try await shell(
                "'\(skillhost)' new \(name) --lang \(language)" + (view ? " --with-view" : ""), in: elsewhere)
            #expect(created.status == 0, "\(created.stderr)")
            let project = elsewhere + "/" + name
            let build = language == "swift" ? "swift build -c release" : "make"
            let made = try await shell(build, in: project)
            #expect(made.status == 0, "\(language): \(made.stdout.suffix(2000)) \(made.stderr.suffix(2000))")
            let library = language == "swift" ? ".build/release/lib\(name).so" : "\(name).so"
            let check = try await shell("'\(skillhost)' check \(library)", in: project)
            #expect(check.status == 0, "\(language): \(check.stdout)")
            #expect(!check.stdout.contains("warning:"), "\(language): \(check.stdout)")
            #expect(
                check.stdout.contains("\nview: ui://\(name)/greeting — Greeting, ") == view,
                "\(language): \(check.stdout)")
            #expect(check.stdout.contains("  shows its results in ui://\(name)/greeting\n") == view)
            #expect(try await shell("'\(skillhost)' plugin install \(library)", in: project).status == 0)
            #expect(
                try await shell("'\(skillhost)' call \(id)_add '{\"a\": 2, \"b\": 3}'", in: elsewhere).stdout == "5\n")
            #expect(
                try await shell("'\(skillhost)' call \(id)_greet '{\"name\": \"Ada\"}'", in: elsewhere).stdout
                    == "Hello, Ada!\n")
            let readme = try String(contentsOfFile: project + "/README.md", encoding: .utf8)
            #expect(readme.contains(build) && readme.contains("skillhost check") && readme.contains("plugin install"))
        }

        // Plain swiftc: the helper as a static library and module, then the plugin against the module map.
        let helper = prefix + "/share/skillhost/swift/SkillSDK/Sources/SkillSDKSwift"
        try FileManager.default.copyItem(
            atPath: elsewhere + "/hello-swift/Sources/PluginHelloSwift/PluginHelloSwift.swift",
            toPath: elsewhere + "/plain.swift")
        var plain = try String(contentsOfFile: elsewhere + "/plain.swift", encoding: .utf8)
        plain = plain.replacingOccurrences(of: "hello_swift", with: "plain").replacingOccurrences(
            of: "\"hello-swift\"", with: "\"plain\"")
        try plain.write(toFile: elsewhere + "/plain.swift", atomically: true, encoding: .utf8)
        let swiftc = try await shell(
            "mkdir -p sdk && swiftc -emit-library -static -emit-module -parse-as-library -module-name SkillSDKSwift "
                + "-I '\(prefix)/include/skillhost' '\(helper)'/*.swift -emit-module-path sdk/SkillSDKSwift.swiftmodule "
                + "-o sdk/libSkillSDKSwift.a && swiftc -emit-library -I sdk -I '\(prefix)/include/skillhost' plain.swift "
                + "sdk/libSkillSDKSwift.a -o plain.so",
            in: elsewhere)
        #expect(swiftc.status == 0, "\(swiftc.stderr.suffix(2000))")
        #expect(try await shell("'\(skillhost)' plugin install plain.so", in: elsewhere).status == 0)
        #expect(try await shell("'\(skillhost)' call plain_add '{\"a\": 1, \"b\": 1}'", in: elsewhere).stdout == "2\n")

        // Managing plugins: a broken file is refused with its reasons; remove takes one away.
        try "not a library".write(toFile: elsewhere + "/broken.so", atomically: true, encoding: .utf8)
        let broken = try await shell("'\(skillhost)' plugin install broken.so", in: elsewhere)
        #expect(broken.status == 1)
        #expect(
            broken.stderr
                == "skillhost: broken.so: not installed, 1 problem:\n  - is not a shared library (no ELF header); build "
                + "it with cc -shared -fPIC\n")
        let removed = try await shell("'\(skillhost)' plugin remove twice", in: elsewhere)
        #expect(removed.stdout.hasPrefix("removed twice 1.0.0"), "\(removed.stderr)")
        let plugins = try await shell("'\(skillhost)' plugin list", in: elsewhere)
        #expect(plugins.stdout.hasPrefix("11 plugins\n"), "\(plugins.stdout)")
        #expect(!plugins.stdout.contains("twice"))
        let bundled = try await shell("'\(skillhost)' plugin remove calculator", in: elsewhere)
        #expect(bundled.stderr.contains("calculator is not in the user plugins folder"))

        // Uninstall leaves nothing behind.
        let uninstalled = try await shell("'\(Paths.root.path)/Scripts/uninstall.sh' '\(prefix)'", in: elsewhere)
        #expect(uninstalled.status == 0, "\(uninstalled.stderr)")
        let left = FileManager.default.enumerator(atPath: prefix)?.allObjects ?? []
        #expect(left.isEmpty, "\(left)")
    }

    static func isTextFileBusy(_ error: NSError) -> Bool {
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
        return (error.domain == NSPOSIXErrorDomain && error.code == Int(ETXTBSY))
            || (underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(ETXTBSY))
    }

    /// A binary copied away from its plugins says why nothing is there.
    @Test func aBinaryWithoutItsPluginsSaysSo() async throws {
        let folder = Paths.temporaryDirectory("lonely")
        try FileManager.default.copyItem(atPath: Paths.skillhost, toPath: folder + "/skillhost")
        // A child another test forks while the copy is open for writing keeps it open until that child execs: the
        // copy cannot run ("Text file busy") for that moment.
        var attempts = 0
        var list: ProcessResult
        while true {
            do {
                list = try await runProcessOffPool(folder + "/skillhost", ["list"], environment: environment)
                break
            } catch let error as NSError where attempts < 50 && Self.isTextFileBusy(error) {
                attempts += 1
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        #expect(list.stdout.hasPrefix("0 skills from 0 plugins"))
        let notice =
            "no bundled plugins in \(folder) (libskill-*.so): install skillhost with make install, which puts them in "
            + "<prefix>/lib/skillhost/plugins beside <prefix>/bin/skillhost"
        #expect(list.stdout.contains("warning: " + notice), "\(list.stdout)")
        let call = try await runProcessOffPool(
            folder + "/skillhost", ["call", "calculator", #"{"expression":"1"}"#], environment: environment)
        #expect(call.status == 1)
        #expect(call.stderr.contains("note: " + notice), "\(call.stderr)")
    }
}
