import SkillJSON
import Testing

@testable import SkillHost

/// The one decision every path that runs a skill takes, and the one sentence per client for each refusal.
struct CallPipelineTests {
    static func info(_ id: String, _ risk: SkillRisk, kind: SkillKind = .json) -> SkillInfo {
        SkillInfo(
            id: id, title: id, description: id, plugin: "p", pluginVersion: "1", file: "f", risk: risk, flags: [],
            timeout: nil, inputSchema: ["type": "object"], schemaIsGenerated: false, kind: kind)
    }

    @Test func theMostSpecificRuleWinsAndDenyBreaksTies() {
        let delete = Self.info("notes_delete", .destructive)
        let add = Self.info("notes_add", .mutating)
        let rules = [PolicyRule("notes_delete", .deny), PolicyRule("notes_*", .allow)]
        for order in [rules, rules.reversed()] {
            let policy = Policy(rules: order)
            #expect(policy.decision(for: delete) == .deny, "the order rules are written in does not matter")
            #expect(policy.decision(for: add) == .allow)
        }
        // Equal specificity (four literal characters each): deny beats allow, both ways round.
        let tie = [PolicyRule("note*", .allow), PolicyRule("*lete", .deny)]
        for order in [tie, tie.reversed()] { #expect(Policy(rules: order).decision(for: delete) == .deny) }
    }

    @Test func rulesMayLookAtTheRiskAndTheArguments() throws {
        let delete = Self.info("notes_delete", .destructive)
        let low = try ArgumentCondition(["properties": ["id": ["maximum": 100]]])
        let rules = [
            PolicyRule("notes_delete", .allow, arguments: low), PolicyRule("*", .ask, risk: .destructive),
            PolicyRule("fs_*", .deny),
        ]
        for order in [rules, rules.reversed()] {
            let policy = Policy(rules: order)
            #expect(policy.verdict(for: delete, arguments: ["id": 5]) == .allow, "the arguments match")
            #expect(policy.verdict(for: delete, arguments: ["id": 500]) == .ask(required: true), "the next rule")
            #expect(policy.verdict(for: delete) == .ask(required: true), "unknown arguments: the rule does not apply")
            #expect(policy.verdict(for: Self.info("notes_add", .mutating)) == .ask(required: false), "risk differs")
        }
        // At equal skill patterns, more conditions are more specific; at equal conditions, deny beats allow.
        let narrower = Policy(rules: [
            PolicyRule("notes_delete", .deny), PolicyRule("notes_delete", .allow, arguments: low),
        ])
        #expect(narrower.verdict(for: delete, arguments: ["id": 5]) == .allow)
        let tie = Policy(rules: [
            PolicyRule("notes_delete", .allow, arguments: low),
            PolicyRule("notes_delete", .deny, arguments: try ArgumentCondition(["required": ["id"]])),
        ])
        #expect(
            tie.verdict(for: delete, arguments: ["id": 5])
                == .deny(
                    .denied(
                        skill: "notes_delete",
                        rule: #"{"skill": "notes_delete", "arguments": {"required":["id"]}, "then": "deny"}"#,
                        step: nil)))
        // A composite's verdict uses its steps' rules about every call; one about arguments waits for the step.
        let plan = CompositePlan(steps: [], lines: [], calls: ["notes_delete"], missing: [])
        let composite = Self.info("clean_up", .destructive, kind: .composite(plan))
        #expect(
            Policy(rules: [PolicyRule("notes_delete", .deny, arguments: low)]).verdict(for: composite)
                == .ask(required: true))
        #expect(rules[0].description == #"notes_delete (arguments {"properties":{"id":{"maximum":100}}}) → allow"#)
        #expect(rules[1].written == #"{"skill": "*", "risk": "destructive", "then": "ask"}"#)
        #expect(rules[2].written == #""fs_*": "deny""#)
    }

    @Test func aDenyWinsOnEveryPathAndNobodyMeansNoDestructiveCall() {
        let delete = Self.info("notes_delete", .destructive)
        let add = Self.info("notes_add", .mutating)
        let denying = CallPipeline(policy: Policy(rules: [PolicyRule("notes_*", .deny)]))
        let person = Confirmer.person { _, _ in .allowOnce }
        for confirmer in [person, .confirmed, .nobodyToAsk, .nobody(.mcpClient)] {
            #expect(
                denying.decide(delete, confirmer: confirmer)
                    == .refuse(.denied(skill: "notes_delete", rule: #""notes_*": "deny""#, step: nil)))
        }
        let plain = CallPipeline(policy: Policy())
        #expect(plain.decide(delete, confirmer: person) == .ask)
        #expect(plain.decide(delete, confirmer: .confirmed) == .run)
        #expect(
            plain.decide(delete, confirmer: .nobodyToAsk)
                == .refuse(.needsConfirmation(skill: "notes_delete", risk: .destructive)))
        #expect(
            plain.decide(add, confirmer: .nobodyToAsk) == .run, "mutating without a rule runs when no one can be asked")
        #expect(plain.decide(add, confirmer: person) == .ask)
        #expect(
            CallPipeline(policy: Policy(rules: [PolicyRule("notes_add", .ask)])).decide(add, confirmer: .nobodyToAsk)
                == .refuse(.needsConfirmation(skill: "notes_add", risk: .mutating)))
    }

    @Test func aCompositeIsDecidedWithTheSkillsItCalls() {
        let plan = CompositePlan(steps: [], lines: [], calls: ["notes_delete", "notes_add"], missing: [])
        let cleanUp = Self.info("clean_up", .readOnly, kind: .composite(plan))
        let denyingAStep = CallPipeline(policy: Policy(rules: [PolicyRule("notes_delete", .deny)]))
        #expect(
            denyingAStep.decide(cleanUp, confirmer: .confirmed)
                == .refuse(.denied(skill: "clean_up", rule: #""notes_delete": "deny""#, step: "notes_delete")))
        let askingAStep = CallPipeline(policy: Policy(rules: [PolicyRule("notes_add", .ask)]))
        #expect(askingAStep.decide(cleanUp, confirmer: Confirmer.person { _, _ in .deny }) == .ask)
        let allowingIt = CallPipeline(
            policy: Policy(rules: [PolicyRule("notes_add", .ask), PolicyRule("clean_up", .allow)]))
        #expect(allowingIt.decide(cleanUp, confirmer: .nobodyToAsk) == .run)
    }

    /// Each refusal has one sentence per client, written in one place.
    @Test func everyRefusalReadsTheSameOnEveryPathOfAClient() {
        let unknown = Refusal.unknown("calculater", among: ["calculator", "notes_add"])
        #expect(unknown == .unknownSkill(id: "calculater", suggestion: "calculator"))
        #expect(unknown.code == .unknownSkill)
        #expect(unknown.sentence(for: .embedder) == #"unknown skill "calculater" (did you mean "calculator"?)"#)
        #expect(unknown.sentence(for: .mcpClient) == "Unknown tool: calculater (did you mean calculator?)")
        let far = Refusal.unknown("zzz", among: ["calculator", "notes_add"])
        #expect(
            far.sentence(for: .commandLine) == #"unknown skill "zzz"; run skillhost list to see the available skills"#)
        #expect(far.sentence(for: .mcpClient) == "Unknown tool: zzz")
        #expect(
            far.sentence(for: .model(available: ["calculator", "notes_add"]))
                == #"unknown skill "zzz"; available skills: calculator, notes_add"#)

        let asks = Refusal.needsConfirmation(skill: "notes_delete", risk: .destructive)
        #expect(asks.code == .notPermitted)
        #expect(
            asks.sentence(for: .embedder)
                == "not run: notes_delete is destructive and there is no one to confirm it (allow it with a rule in the "
                + "configuration)")
        #expect(
            asks.sentence(for: .commandLine)
                == "not run: notes_delete is destructive; run it again with --yes to confirm, or allow it with a policy "
                + "rule in config.json")
        #expect(
            Refusal.needsConfirmation(skill: "notes_add", risk: .mutating).sentence(for: .mcpClient)
                == #"not run: notes_add is set to ask; allow it for MCP clients with a policy rule in config.json "#
                + #"("policy": {"notes_add": "allow"})"#)
        #expect(Refusal.declined(skill: "notes_add").sentence(for: .embedder) == "not run: the user declined this call")
        #expect(
            Refusal.declined(skill: "notes_add").sentence(for: .mcpClient) == "not run: the user declined notes_add")
        #expect(
            Refusal.cannotAskHere(skill: "wipe").sentence(for: .embedder)
                == "not run: wipe needs confirming, and a call on the calling thread cannot ask a person (confirm it "
                + "beforehand, or allow it with a policy rule)")
        #expect(
            Refusal.denied(skill: "clean_up", rule: #""notes_*": "deny""#, step: "notes_delete").sentence(
                for: .commandLine)
                == #"not run: clean_up calls notes_delete, and calls to notes_delete are denied by the configuration "#
                + #"(policy rule "notes_*": "deny")"#)
    }
}
