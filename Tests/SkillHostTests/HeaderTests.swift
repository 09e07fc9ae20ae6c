import Foundation
import TestSupport
import Testing

/// The public headers compile cleanly as C11 and C++17 with every warning an error, and the macros produce a
/// plugin the host accepts.
struct HeaderTests {
    static let source = """
        #include "skill_sdk.h"
        #include "skill_json.h"
        static double add(double a, double b) { return a + b; }
        static int run(void *s, const skill_call_api *api, skill_call *call, const char *args) {
            char text[64];
            double n = 0;
            int flag = 0;
            (void)s;
            if (skill_json_get_string(args, "text", text, sizeof text) < 0) return SKILL_ERR_INVALID_ARGS;
            (void)skill_json_get_number(args, "n", &n);
            (void)skill_json_get_bool(args, "flag", &flag);
            api->set_result(call, text, skill_json_write_string(NULL, 0, text));
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
}
