import SkillHost
import SkillJSON

/// How a `.skillrec` writes what it keeps, and reads it back: messages, model chunks, tool definitions, limits.
enum RecordFormat {
    static func message(_ message: Message) -> JSONValue {
        var object = JSONObject([
            (key: "role", value: .string(message.role.rawValue)), (key: "content", value: .string(message.content)),
        ])
        if !message.toolCalls.isEmpty {
            object["tool_calls"] = .array(
                message.toolCalls.map {
                    ["id": .string($0.id), "name": .string($0.name), "arguments": .string($0.arguments)]
                })
        }
        if let id = message.toolCallID { object["tool_call_id"] = .string(id) }
        if message.isError { object["is_error"] = true }
        return .object(object)
    }

    static func message(_ value: JSONValue) -> Message? {
        guard let role = value["role"]?.stringValue.flatMap(Role.init(rawValue:)),
            let content = value["content"]?.stringValue
        else { return nil }
        let calls = (value["tool_calls"]?.arrayValue ?? []).compactMap { call -> ToolCall? in
            guard let id = call["id"]?.stringValue, let name = call["name"]?.stringValue,
                let arguments = call["arguments"]?.stringValue
            else { return nil }
            return ToolCall(id: id, name: name, arguments: arguments)
        }
        return Message(
            role: role, content: content, toolCalls: calls, toolCallID: value["tool_call_id"]?.stringValue,
            isError: value["is_error"] == true)
    }

    /// A request's conversation as the record compares it: without the plugins' state (a system message after the
    /// first), which is read anew on every run.
    static func conversation(_ messages: [Message]) -> [Message] {
        messages.enumerated().filter { $0.offset == 0 || $0.element.role != .system }.map(\.element)
    }

    /// Where a request's conversation departs from the previous request's: the previous one's length when it
    /// only adds messages, else 0 (it was cut back: the whole conversation is new). A request is recorded, and
    /// compared in a replay, as the messages from there on.
    static func from<Element: Equatable>(_ previous: [Element], to current: [Element]) -> Int {
        current.count >= previous.count && zip(current, previous).allSatisfy { $0 == $1 } ? previous.count : 0
    }

    static func chunk(_ chunk: ModelChunk) -> JSONValue {
        switch chunk {
        case .text(let text): return ["text": .string(text)]
        case .toolCall(let call):
            return [
                "tool_call": ["id": .string(call.id), "name": .string(call.name), "arguments": .string(call.arguments)]
            ]
        case .usage(let usage):
            return [
                "usage": ["prompt": .int(Int64(usage.promptTokens)), "completion": .int(Int64(usage.completionTokens))]
            ]
        case .noSkillMatched: return ["no_match": true]
        }
    }

    static func chunk(_ value: JSONValue) -> ModelChunk? {
        if let text = value["text"]?.stringValue { return .text(text) }
        if let call = value["tool_call"], let id = call["id"]?.stringValue, let name = call["name"]?.stringValue,
            let arguments = call["arguments"]?.stringValue
        {
            return .toolCall(ToolCall(id: id, name: name, arguments: arguments))
        }
        if let usage = value["usage"], let prompt = usage["prompt"], let completion = usage["completion"] {
            return .usage(
                Usage(
                    promptTokens: prompt.count(upTo: Usage.maximum),
                    completionTokens: completion.count(upTo: Usage.maximum)))
        }
        if value["no_match"] == true { return .noSkillMatched }
        return nil
    }

    static func tool(_ tool: ToolDefinition) -> JSONValue {
        [
            "name": .string(tool.name), "title": .string(tool.title), "description": .string(tool.description),
            "parameters": tool.parameters, "risk": .string(tool.risk.rawValue),
        ]
    }

    /// The skill a recorded tool stands for in a replay with recorded skills (nothing of it runs).
    static func skill(_ value: JSONValue) -> SkillInfo? {
        guard let name = value["name"]?.stringValue else { return nil }
        let risk = value["risk"]?.stringValue.flatMap(SkillRisk.init(rawValue:)) ?? .mutating
        return SkillInfo(
            id: name, title: value["title"]?.stringValue ?? name, description: value["description"]?.stringValue ?? "",
            plugin: "record", pluginVersion: "", file: "record", risk: risk, flags: [], timeout: nil,
            inputSchema: value["parameters"] ?? ["type": "object"], schemaIsGenerated: false, kind: .external)
    }

    /// The limits that decide where a turn stops: steps, and the budgets but for wall time (a replay runs at
    /// another speed; a turn a wall-time budget stopped may replay further).
    static func limits(_ configuration: AgentConfiguration) -> JSONValue {
        func limits(_ limits: BudgetLimits) -> JSONValue {
            var object = JSONObject()
            if let tokens = limits.tokens { object["tokens"] = .int(Int64(tokens)) }
            if let calls = limits.toolCalls { object["tool_calls"] = .int(Int64(calls)) }
            if let cost = limits.cost { object["cost"] = .double(cost) }
            return .object(object)
        }
        var object = JSONObject([
            (key: "steps", value: .int(Int64(configuration.stepLimit))),
            (key: "turn", value: limits(configuration.budgets.turn)),
            (key: "session", value: limits(configuration.budgets.session)),
        ])
        if let price = configuration.budgets.price {
            object["price"] = ["input": .double(price.input), "output": .double(price.output)]
        }
        return .object(object)
    }

    /// A configuration with the recorded limits (what the header lacks stays as `base` has it, with no wall-time
    /// budgets).
    static func configuration(_ limits: JSONValue?, base: AgentConfiguration) -> AgentConfiguration {
        var configuration = base
        configuration.budgets.turn.seconds = nil
        configuration.budgets.session.seconds = nil
        guard let limits else { return configuration }
        // A record is a stranger's file: its numbers are range-checked before they become integers (1e300 trapped).
        func count(_ value: JSONValue?) -> Int? {
            guard let number = value?.doubleValue, number.isFinite, number >= 0, number <= 1e12 else { return nil }
            return Int(number)
        }
        if let steps = count(limits["steps"]), steps >= 1 { configuration.stepLimit = min(steps, 1000) }
        func read(_ value: JSONValue?) -> BudgetLimits {
            BudgetLimits(
                tokens: count(value?["tokens"]), toolCalls: count(value?["tool_calls"]),
                cost: value?["cost"]?.doubleValue.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil })
        }
        configuration.budgets.turn = read(limits["turn"])
        configuration.budgets.session = read(limits["session"])
        if let input = limits["price"]?["input"]?.doubleValue, let output = limits["price"]?["output"]?.doubleValue {
            configuration.budgets.price = (input, output)
        } else {
            configuration.budgets.price = nil
        }
        return configuration
    }
}
