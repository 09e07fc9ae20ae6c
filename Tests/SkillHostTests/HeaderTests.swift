import Foundation
import TestSupport
import Testing

@testable import SkillHost

/// The public headers compile cleanly as C11 and C++17 with every warning an error, and the macros produce a
/// plugin the host accepts.
struct HeaderTests {
    static let source = """
        #include "skill_sdk.h"
        #include "skill_json.h"
        static double add(double a, double b) { return a + b; }
        static int run(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            char text[64], out[140];
            size_t length;
            double n = 0;
            int flag = 0;
            (void)s;
            if (skill_json_get_string(args, "text", text, sizeof text) < 0) return SKILL_ERR_INVALID_ARGS;
            (void)skill_json_get_number(args, "n", &n);
            (void)skill_json_get_bool(args, "flag", &flag);
            length = skill_json_write_string(out, sizeof out, text);
            api->set_result(call, out, length < sizeof out ? length : 0);
            return SKILL_OK;
        }
        static const skill_descriptor skills[] = {
            SKILL_TYPED("add", "Add", "Adds.", "double add(double a, double b)", add),
            SKILL_JSON("run", "Run", "Runs.", "{\\"type\\":\\"object\\"}", SKILL_RISK_MUTATING, SKILL_SERIAL, run),
        };
        SKILL_PLUGIN("header-test", "1.0.0", "compile test", skills)
        """

    @Test(arguments: [
        ("/usr/bin/cc", ["-x", "c", "-std=c11"]),
        ("/usr/bin/c++", ["-x", "c++", "-std=c++17"]),
    ])
    func compilesWithoutWarnings(compiler: String, language: [String]) throws {
        let folder = Paths.temporaryDirectory("header")
        let file = folder + "/plugin.src"
        try Self.source.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProcess(
            compiler,
            language + [
                "-Wall", "-Wextra", "-pedantic", "-Werror", "-fPIC", "-shared", "-fvisibility=hidden", "-I",
                Paths.sdkInclude, file, "-o", folder + "/plugin.so",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let symbols = try runProcess("/usr/bin/nm", ["-D", "--defined-only", folder + "/plugin.so"])
        let exported = symbols.stdout.split(separator: "\n").filter { $0.contains(" T ") }.map {
            $0.split(separator: " ").last.map(String.init) ?? ""
        }
        #expect(exported == ["skill_plugin_entry"], "only the entry point is exported")
    }

    /// ABI 1.2's `skill_fail` (an inline function in the header) compiles in every dialect a plugin may be written
    /// in, with every warning an error: C89 has no `inline`, and C++'s `-Wold-style-cast` refuses a C cast.
    @Test(arguments: [
        ("/usr/bin/cc", ["-x", "c", "-std=c89"]), ("/usr/bin/cc", ["-x", "c", "-std=gnu89"]),
        ("/usr/bin/cc", ["-x", "c", "-std=c99"]), ("/usr/bin/cc", ["-x", "c", "-std=c17"]),
        ("/usr/bin/c++", ["-x", "c++", "-std=c++98", "-Wold-style-cast"]),
        ("/usr/bin/c++", ["-x", "c++", "-std=c++20", "-Wold-style-cast"]),
    ])
    func skillFailCompilesInEveryDialect(compiler: String, language: [String]) throws {
        let folder = Paths.temporaryDirectory("header-fail")
        try """
        #include "skill_sdk.h"
        double halve(double n, skill_error *error);
        double halve(double n, skill_error *error) {
            if (n < 0) skill_fail(error, SKILL_ERR_INVALID_ARGS, "n must not be negative");
            return n / 2;
        }
        """.write(toFile: folder + "/fail.src", atomically: true, encoding: .utf8)
        let result = try runProcess(
            compiler,
            language + [
                "-Wall", "-Wextra", "-pedantic", "-Werror", "-c", "-I", Paths.sdkInclude, folder + "/fail.src", "-o",
                folder + "/fail.o",
            ])
        #expect(result.status == 0, "\(language): \(result.stderr)")
    }

    static let frozenV1_0 = Paths.fixtures + "/abi-v1.0"

    /// The host's minimum struct sizes are the v1.0 sizes — literals, never `sizeof` of today's structs, so a
    /// later minor version that adds fields still accepts every v1.0 plugin.
    @Test func theMinimumSizesAreThoseOfV1_0() throws {
        let folder = Paths.temporaryDirectory("abi-sizes")
        try """
        #include <stdio.h>
        #include "skill_sdk.h"
        int main(void) { printf("%zu %zu\\n", sizeof(skill_plugin), sizeof(skill_descriptor)); return 0; }
        """.write(toFile: folder + "/sizes.c", atomically: true, encoding: .utf8)
        let build = try runProcess(
            "/usr/bin/cc", ["-I", Self.frozenV1_0, folder + "/sizes.c", "-o", folder + "/sizes"])
        #expect(build.status == 0, "\(build.stderr)")
        let sizes = try runProcess(folder + "/sizes", []).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(
            sizes == "\(DescriptorValidator.minimumPluginSize) \(DescriptorValidator.minimumDescriptorSize)",
            "the frozen v1.0 header's sizes")
    }

    /// A plugin compiled against the frozen v1.0 header loads and answers in this host.
    @Test func aPluginBuiltAgainstTheFrozenV1_0HeaderLoads() async throws {
        let folder = Paths.temporaryDirectory("abi-v1.0-plugin")
        let plugin = try Fixture.compile(
            Self.source, name: "legacy", into: folder, flags: ["-shared", "-fPIC", "-I", Self.frozenV1_0])
        let registry = try makeRegistry()
        defer { registry.shutdown() }
        _ = try registry.load(file: plugin).get()
        let sum = await registry.invoke("add", arguments: #"{"a":1.5,"b":2}"#)
        #expect(sum.result == .double(3.5))
        let run = await registry.invoke("run", arguments: #"{"text":"hi"}"#)
        #expect(run.status == .ok, "\(run.error ?? "")")
        #expect(run.result == .string("hi"))
    }
}
