import Agent
import SkillHost
import SkillJSON

/// What an empty conversation shows: what this is, who answers (a model, by its name, or the offline router — and
/// then how to add a model), and a few requests that work with the skills loaded now.
enum WebWelcome {
    /// Requests the bundled skills answer (the offline router too), by the skill they need.
    static let examples: [(skill: String, request: String)] = [
        ("calculator", "what is (23+7)*2"),
        ("clock_now", "what time is it in Tokyo"),
        ("convert_length", "convert 10 km to miles"),
        ("notes_add", #"add a note titled "call the plumber""#),
        ("notes_list", "show me my notes"),
        ("text_stats", "how many words are in: the quick brown fox"),
    ]

    static func json(
        provider: any ModelProvider, providers: [any ModelProvider], skills: [SkillInfo], disabled: Set<String>
    ) -> JSONValue {
        let loaded = Set(skills.map(\.id)).subtracting(disabled)
        let offline = provider is OfflineRouter
        return [
            "answering": .string(offline ? "the offline router" : provider.displayName),
            "model": .string(provider.displayName),
            "models": .array(providers.map { .string($0.displayName) }),
            "offline": .bool(offline),
            "how_to_add": providers.count == 1
                ? .string(
                    "No model is configured, so the offline router answers: it calls one skill a request names. "
                        + "For a model, set OPENAI_BASE_URL and SKILLHOST_MODEL (any OpenAI-compatible server), "
                        + "or \"base_url\" and \"model\" in config.json, and start skillhost web again.")
                : .null,
            "skills": .int(Int64(loaded.count)),
            "examples": .array(examples.filter { loaded.contains($0.skill) }.prefix(4).map { .string($0.request) }),
        ]
    }
}
