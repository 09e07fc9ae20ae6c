/// Deterministic synthetic skills (plausible names and descriptions that share vocabulary with the real ones) and
/// a labelled set of requests for the bundled skills: skill selection measured among a thousand others (the
/// bench and the tests).
package enum SyntheticSkills {
    package static let verbs = [
        "convert", "calculate", "count", "summarize", "list", "create", "delete", "update", "search", "fetch",
        "format", "translate", "schedule", "send", "compare", "estimate", "parse", "validate", "export", "import",
    ]
    package static let objects = [
        "currency", "invoice", "mortgage", "calendar event", "email", "time entry", "weather forecast", "stock price",
        "recipe", "playlist", "ticket", "contact", "file", "image", "word list", "temperature log", "distance route",
        "package", "meeting", "expense", "timezone meeting slot", "unit price", "text snippet", "prime ticket",
    ]
    package static let places = [
        "in the CRM", "for a project", "from a spreadsheet", "in the cloud drive", "for the team", "on the server",
        "from a URL", "in the database", "for a customer", "in a git repository",
    ]

    package static func make(_ count: Int) -> [(String, String, String)] {
        var generator = SplitMix(seed: 42)
        return (0..<count).map { index in
            let verb = verbs[Int(generator.next() % UInt64(verbs.count))]
            let object = objects[Int(generator.next() % UInt64(objects.count))]
            let place = places[Int(generator.next() % UInt64(places.count))]
            let id = "\(verb)_\(object.replacingOccurrences(of: " ", with: "_"))_\(index)"
            return (
                id, "\(verb.capitalized) \(object)",
                "\(verb.capitalized)s a \(object) \(place). Returns the result as JSON."
            )
        }
    }

    package static let labelled: [(String, String)] = [
        ("what is (23+7)*2", "calculator"), ("calculate 17% of 240", "calculator"),
        ("evaluate sqrt(2) times pi", "calculator"), ("convert 5 km to miles", "convert_length"),
        ("how many feet are in 3 meters", "convert_length"),
        ("convert 70 fahrenheit to celsius", "convert_temperature"),
        ("temperature 300 kelvin in celsius", "convert_temperature"), ("how many pounds is 3 kg", "convert_mass"),
        ("convert 12 ounces to grams", "convert_mass"), ("greatest common divisor of 84 and 36", "gcd"),
        ("is 7919 a prime number", "is_prime"), ("make a url slug from My Blog Post", "slugify"),
        ("what time is it in Tokyo", "clock_now"), ("current time in Europe/Paris", "clock_now"),
        ("convert 15:00 from Paris time to New York time", "clock_convert"),
        ("what day of the week was 2000-01-01", "clock_weekday"), ("count the words in this text", "text_stats"),
        ("how many sentences does this paragraph have", "text_stats"),
        ("summarize this article in 2 sentences", "text_summary"),
        ("give me a short summary of the text", "text_summary"),
        ("degrees celsius to fahrenheit for 21", "celsius_to_fahrenheit"),
        ("what is 98.6 fahrenheit in celsius", "fahrenheit_to_celsius"),
        ("how many characters are in this string", "text_stats"),
        ("weekday of 2026-12-25", "clock_weekday"),
    ]
}

/// A small deterministic random number generator.
package struct SplitMix {
    var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
