import CHTTP
import Foundation
import SkillHost
import SkillJSON
import Synchronization

/// Confirming a call through the client's user, the 2026-07-28 way (multi round-trip requests): where the policy
/// would ask and the client declares `elicitation`, `tools/call` answers `input_required` with a yes/no form and a
/// signed `requestState`; the client's retry carries the user's answer and the state back, and the call runs only
/// if the state is one this server issued — for this skill, these arguments, this principal, within 5 minutes —
/// and the user accepted.
///
/// The state is HMAC-SHA-256 signed with `key`: random per process unless configured (`SKILLHOST_MCP_STATE_KEY`),
/// so instances behind a load balancer share one. An accepted state is redeemed once: each carries a random nonce,
/// and the nonces of accepted states are remembered until they expire (by this process: behind a load balancer a
/// replay to another instance is not seen).
final class MCPConfirmation: Sendable {
    private let key: [UInt8]
    /// How long an issued state is honoured.
    static let lifetime: TimeInterval = 300
    /// Nonces of accepted states, with their expiry; at most `spentLimit` (the oldest are forgotten first).
    private let spent = Mutex<[String: Int]>([:])
    static let spentLimit = 10_000

    init(key: [UInt8]? = nil) {
        if let key, !key.isEmpty {
            self.key = key
        } else if let configured = ProcessInfo.processInfo.environment["SKILLHOST_MCP_STATE_KEY"], !configured.isEmpty {
            self.key = Array(configured.utf8)
        } else {
            var random = [UInt8](repeating: 0, count: 32)
            _ = skillhost_random_bytes(&random, random.count)
            self.key = random
        }
    }

    enum Answer: Sendable {
        /// Ask the user: the `input_required` result.
        case ask(JSONValue)
        case confirmed
        /// The user said no: the tool result's sentence.
        case declined(String)
        /// A state this server did not issue for this call: the error's sentence.
        case invalid(String)
    }

    /// Whether the client declares it can ask its user (elicitation).
    func canAsk(_ params: JSONValue) -> Bool {
        params["_meta"]?[MCPProtocol.Meta.clientCapabilities]?["elicitation"]?.objectValue != nil
    }

    /// The answer to the call pipeline's question about `skill` with `arguments` (validated: the call that runs),
    /// from what the request carries: ask the user (no state or no response yet), yes (a state this server issued
    /// for this call and the user's yes), no, or a state that cannot be used.
    func answer(to skill: SkillInfo, arguments: JSONValue, params: JSONValue, principal: String) -> Answer {
        let subject = Self.subject(skill: skill.id, arguments: arguments, principal: principal)
        guard let state = params["requestState"]?.stringValue else {
            return .ask(inputRequired(skill: skill, arguments: arguments, subject: subject))
        }
        guard let (nonce, expiry) = verify(state, subject: subject) else {
            return .invalid(
                "requestState is not one this server issued for this call of \(skill.id) (or it expired after "
                    + "\(Int(Self.lifetime / 60)) minutes); call the tool again without it")
        }
        guard let response = params["inputResponses"]?["confirm"] else {
            return .ask(inputRequired(skill: skill, arguments: arguments, subject: subject))
        }
        guard response["action"]?.stringValue == "accept", response["content"]?["confirm"] == .bool(true) else {
            return .declined(Refusal.declined(skill: skill.id).sentence(for: .mcpClient))
        }
        guard redeem(nonce, expiry: expiry) else {
            return .invalid(
                "requestState was already used: one yes runs \(skill.id) once; call the tool again without it to ask "
                    + "the user again")
        }
        return .confirmed
    }

    private func inputRequired(skill: SkillInfo, arguments: JSONValue, subject: [UInt8]) -> JSONValue {
        let kind = skill.risk == .destructive ? "destructive" : "set to ask"
        var question = "Run \(skill.id) (\(kind)) with \(arguments.jsonText)?"
        // A composite is confirmed once, for its whole plan.
        if let plan = skill.kind.compositePlan {
            question +=
                " It runs \(plan.lines.count) step\(plan.lines.count == 1 ? "" : "s"): "
                + plan.lines.joined(separator: "; ")
        }
        let form: JSONValue = [
            "type": "object",
            "properties": [
                "confirm": ["type": "boolean", "title": .string("Run \(skill.id)"), "description": .string(question)]
            ],
            "required": ["confirm"],
        ]
        return [
            "resultType": "input_required",
            "inputRequests": [
                "confirm": [
                    "method": "elicitation/create",
                    "params": ["mode": "form", "message": .string(question), "requestedSchema": form],
                ]
            ],
            "requestState": .string(issue(subject: subject)),
        ]
    }

    /// What a state is bound to: the skill, the arguments' text and the principal, hashed.
    private static func subject(skill: String, arguments: JSONValue, principal: String) -> [UInt8] {
        let text = Array("\(skill)\u{0}\(arguments.jsonText)\u{0}\(principal)".utf8)
        var digest = [UInt8](repeating: 0, count: 32)
        _ = skillhost_sha256(text, text.count, &digest)
        return digest
    }

    /// Marks an accepted state's nonce as used; false when it already was (a replay).
    private func redeem(_ nonce: String, expiry: Int, now: Date = Date()) -> Bool {
        spent.withLock { spent in
            guard spent[nonce] == nil else { return false }
            if spent.count >= Self.spentLimit {
                let current = Int(now.timeIntervalSince1970)
                spent = spent.filter { $0.value >= current }
                while spent.count >= Self.spentLimit, let oldest = spent.min(by: { $0.value < $1.value }) {
                    spent[oldest.key] = nil
                }
            }
            spent[nonce] = expiry
            return true
        }
    }

    /// `<expiry>.<nonce>.<mac>`: the expiry in seconds since 1970, 16 random bytes, and the MAC over both and the
    /// subject (base64url).
    private func issue(subject: [UInt8], now: Date = Date()) -> String {
        let expiry = String(Int(now.timeIntervalSince1970 + Self.lifetime))
        var random = [UInt8](repeating: 0, count: 16)
        _ = skillhost_random_bytes(&random, random.count)
        let nonce = Self.base64url(random)
        return expiry + "." + nonce + "." + Self.base64url(mac(expiry: expiry + "." + nonce, subject: subject))
    }

    /// The state's nonce and expiry when this server issued it for `subject` and it has not expired.
    private func verify(_ state: String, subject: [UInt8], now: Date = Date()) -> (nonce: String, expiry: Int)? {
        let parts = state.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let expiry = Int(parts[0]), Double(expiry) >= now.timeIntervalSince1970 else {
            return nil
        }
        let expected = Array(Self.base64url(mac(expiry: parts[0] + "." + parts[1], subject: subject)).utf8)
        let given = Array(parts[2].utf8)
        guard given.count == expected.count, skillhost_equal_constant_time(given, expected, given.count) == 1 else {
            return nil
        }
        return (String(parts[1]), expiry)
    }

    private func mac(expiry: String, subject: [UInt8]) -> [UInt8] {
        let data = Array(expiry.utf8) + [0] + subject
        var mac = [UInt8](repeating: 0, count: 32)
        _ = skillhost_hmac_sha256(key, key.count, data, data.count, &mac)
        return mac
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        ).replacingOccurrences(of: "=", with: "")
    }
}
