import Foundation
import SkillFolders
import SkillHost
import SkillJSON

// What Agent Skills folders cost: scanning 1,000 skill folders, activating a skill (its instructions and file
// list), and a confined script run against the same script run directly.
//
//   .build/release/skillhost-bench --skill-folders-only [--runs R]

func skillFolderBenchmarks(_ options: Options) async throws {
    let root = workFolder + "/skill-folders"
    try? FileManager.default.removeItem(atPath: root)
    let body = String(repeating: "Step: do the thing carefully, then check it.\n", count: 40)
    for index in 0..<1000 {
        let name = "skill-\(index)"
        let folder = root + "/" + name
        try FileManager.default.createDirectory(atPath: folder + "/scripts", withIntermediateDirectories: true)
        try """
        ---
        name: \(name)
        description: Does task number \(index) well. Use when the user asks for task \(index).
        license: MIT
        metadata:
          author: bench
          version: "1.0"
        ---
        # Skill \(index)
        \(body)
        """.write(toFile: folder + "/SKILL.md", atomically: true, encoding: .utf8)
        try "#!/bin/sh\necho hello\n".write(toFile: folder + "/scripts/hello.sh", atomically: true, encoding: .utf8)
        chmod(folder + "/scripts/hello.sh", 0o755)
    }
    let runs = max(1, options.runs)
    var scans: [Double] = []
    var found = 0
    for _ in 0..<max(5, runs * 2) {
        let start = now()
        found = SkillFolderScan.scan([SkillFolderRoot(root, scope: .user)]).skills.count
        scans.append(Double(now() - start))
    }
    let tools = SkillFolderTools(roots: [SkillFolderRoot(root, scope: .user)], settings: .init())
    var activations: [Run] = []
    for _ in 0..<runs {
        var samples: [Double] = []
        for index in 0..<1000 {
            let start = now()
            guard case .success = tools.activation("skill-\((index * 7919) % 1000)") else { fatalError("activation") }
            samples.append(Double(now() - start))
        }
        activations.append(Run(samples: samples))
    }
    // The same script: directly, and through the binary's sandbox role as skill_run starts it.
    let script = root + "/skill-0/scripts/hello.sh"
    let launcher = bundledPluginFolder() + "/skillhost"
    var sandbox = Sandbox()
    sandbox.read = [root + "/skill-0"]
    sandbox.directory = root + "/skill-0"
    let environment = ChildEnvironment.minimal()
    let fast = bundledPluginFolder() + "/skillhost-sandbox"
    guard case .success(let plan) = SandboxPlan.make(sandbox, command: script, arguments: []) else {
        fatalError("no plan")
    }
    var direct: [Run] = []
    var confined: [Run] = []
    var roleConfined: [Run] = []
    for _ in 0..<runs {
        var plain: [Double] = []
        var boxed: [Double] = []
        var role: [Double] = []
        for _ in 0..<40 {
            var start = now()
            _ = BoundedProcess.run(
                script, [], environment: environment, input: nil, timeout: .seconds(10), outputLimit: 1 << 16)
            plain.append(Double(now() - start))
            start = now()
            let ending = BoundedProcess.run(
                fast, plan.launcherArguments([]), environment: environment, input: nil, timeout: .seconds(10),
                outputLimit: 1 << 16)
            boxed.append(Double(now() - start))
            guard case .success(let result) = ending, result.status == 0 else { fatalError("confined run failed") }
            start = now()
            _ = BoundedProcess.run(
                launcher, sandbox.launcherArguments(command: script, arguments: []), environment: environment,
                input: nil, timeout: .seconds(10), outputLimit: 1 << 16)
            role.append(Double(now() - start))
        }
        direct.append(Run(samples: plain))
        confined.append(Run(samples: boxed))
        roleConfined.append(Run(samples: role))
    }
    let sorted = scans.sorted()
    print(
        String(
            format: "scan of %d skill folders (%d runs): median %.1f ms, min %.1f ms, max %.1f ms", found,
            scans.count, sorted[sorted.count / 2] / 1e6, (sorted.first ?? 0) / 1e6, (sorted.last ?? 0) / 1e6))
    print("")
    print("| measurement | median | p10 | p90 | spread of medians |")
    print("|---|---|---|---|---|")
    print(Row(name: "activate a skill (instructions + file list), 1000 × \(runs)", runs: activations).line)
    print(Row(name: "a script run directly, 40 × \(runs)", runs: direct).line)
    print(Row(name: "the same script confined by skillhost-sandbox (skill_run), 40 × \(runs)", runs: confined).line)
    print(Row(name: "confined by the binary's sandbox role (the fallback), 40 × \(runs)", runs: roleConfined).line)
}
