import Foundation

/// Finds IANA time zones named in a request: written out (`Asia/Tokyo`, `UTC`), as a city tzdata itself names
/// (`Tokyo`, `New York`, `São Paulo` — every `Region/City` zone the system knows), or as a common city or country
/// tzdata has no zone for (`San Francisco`, `Japan`, `India`).
enum ZoneNames {
    struct Mention: Equatable {
        let zone: String
        /// Where it starts, in words of the folded request (for ordering "from … to …").
        let position: Int
    }

    /// Cities and countries people name that are not zone names themselves, with their zone.
    static let exemplars: [String: String] = [
        "japan": "Asia/Tokyo", "osaka": "Asia/Tokyo", "kyoto": "Asia/Tokyo", "china": "Asia/Shanghai",
        "beijing": "Asia/Shanghai", "shenzhen": "Asia/Shanghai", "guangzhou": "Asia/Shanghai",
        "india": "Asia/Kolkata", "mumbai": "Asia/Kolkata", "delhi": "Asia/Kolkata", "new delhi": "Asia/Kolkata",
        "bangalore": "Asia/Kolkata", "bengaluru": "Asia/Kolkata", "chennai": "Asia/Kolkata",
        "hyderabad": "Asia/Kolkata", "uk": "Europe/London", "united kingdom": "Europe/London",
        "england": "Europe/London", "britain": "Europe/London", "great britain": "Europe/London",
        "scotland": "Europe/London", "wales": "Europe/London", "edinburgh": "Europe/London",
        "manchester": "Europe/London", "ireland": "Europe/Dublin", "france": "Europe/Paris", "lyon": "Europe/Paris",
        "germany": "Europe/Berlin", "munich": "Europe/Berlin", "frankfurt": "Europe/Berlin",
        "hamburg": "Europe/Berlin", "spain": "Europe/Madrid", "barcelona": "Europe/Madrid", "italy": "Europe/Rome",
        "milan": "Europe/Rome", "netherlands": "Europe/Amsterdam", "holland": "Europe/Amsterdam",
        "belgium": "Europe/Brussels", "switzerland": "Europe/Zurich", "geneva": "Europe/Zurich",
        "austria": "Europe/Vienna", "sweden": "Europe/Stockholm", "norway": "Europe/Oslo",
        "denmark": "Europe/Copenhagen", "finland": "Europe/Helsinki", "poland": "Europe/Warsaw",
        "portugal": "Europe/Lisbon", "greece": "Europe/Athens", "turkey": "Europe/Istanbul",
        "ankara": "Europe/Istanbul", "russia": "Europe/Moscow", "st petersburg": "Europe/Moscow",
        "saint petersburg": "Europe/Moscow", "ukraine": "Europe/Kyiv", "kiev": "Europe/Kyiv", "egypt": "Africa/Cairo",
        "south africa": "Africa/Johannesburg", "cape town": "Africa/Johannesburg", "nigeria": "Africa/Lagos",
        "kenya": "Africa/Nairobi", "israel": "Asia/Jerusalem", "tel aviv": "Asia/Jerusalem", "uae": "Asia/Dubai",
        "abu dhabi": "Asia/Dubai", "saudi arabia": "Asia/Riyadh", "iran": "Asia/Tehran", "pakistan": "Asia/Karachi",
        "bangladesh": "Asia/Dhaka", "thailand": "Asia/Bangkok", "vietnam": "Asia/Ho_Chi_Minh",
        "hanoi": "Asia/Bangkok", "indonesia": "Asia/Jakarta", "philippines": "Asia/Manila",
        "malaysia": "Asia/Kuala_Lumpur", "korea": "Asia/Seoul", "south korea": "Asia/Seoul", "taiwan": "Asia/Taipei",
        "australia": "Australia/Sydney", "canberra": "Australia/Sydney", "new zealand": "Pacific/Auckland",
        "wellington": "Pacific/Auckland", "usa": "America/New_York", "united states": "America/New_York",
        "nyc": "America/New_York", "boston": "America/New_York", "washington": "America/New_York",
        "washington dc": "America/New_York", "miami": "America/New_York", "atlanta": "America/New_York",
        "philadelphia": "America/New_York", "dallas": "America/Chicago", "houston": "America/Chicago",
        "austin": "America/Chicago", "san francisco": "America/Los_Angeles", "sf": "America/Los_Angeles",
        "seattle": "America/Los_Angeles", "portland": "America/Los_Angeles", "las vegas": "America/Los_Angeles",
        "san diego": "America/Los_Angeles", "california": "America/Los_Angeles",
        "silicon valley": "America/Los_Angeles", "hawaii": "Pacific/Honolulu", "alaska": "America/Anchorage",
        "canada": "America/Toronto", "ottawa": "America/Toronto", "montreal": "America/Toronto",
        "mexico": "America/Mexico_City", "brazil": "America/Sao_Paulo", "rio": "America/Sao_Paulo",
        "rio de janeiro": "America/Sao_Paulo", "argentina": "America/Argentina/Buenos_Aires",
        "buenos aires": "America/Argentina/Buenos_Aires", "chile": "America/Santiago", "colombia": "America/Bogota",
        "peru": "America/Lima", "iceland": "Atlantic/Reykjavik", "utc": "UTC", "gmt": "GMT", "zulu": "UTC",
    ]

    /// tzdata city names that are also everyday words: only taken when capitalised in the request.
    static let ambiguous: Set<String> = [
        "christmas", "easter", "center", "wake", "midway", "troll", "casey", "davis", "palmer", "mawson", "vostok",
        "darwin", "jersey", "regina", "nome", "hope", "marengo", "knox", "monticello", "beulah", "salem", "chatham",
        "faroe", "johnston", "macquarie", "guernsey", "norfolk", "mayotte", "reunion", "pitcairn", "efate", "yap",
        "truk", "chuuk", "dili", "aden", "famagusta", "thule", "vatican", "busingen", "winamac", "vevay", "petersburg",
        "vincennes", "tell city", "new salem", "isle of man", "cordoba", "mendoza", "catamarca", "monterrey",
        "boise", "phoenix", "victoria",
    ]

    /// Every zone the system knows under `Region/City`, by folded city name ("new york" → America/New_York); the
    /// shortest id wins when several share a city.
    static let tzdataCities: [String: String] = {
        let regions: Set<String> = [
            "Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific",
        ]
        var map: [String: String] = [:]
        for id in TimeZone.knownTimeZoneIdentifiers {
            let parts = id.split(separator: "/")
            guard parts.count >= 2, regions.contains(String(parts[0])), let city = parts.last else { continue }
            let name = Lexicon.fold(city.replacingOccurrences(of: "_", with: " "))
            if let existing = map[name], existing.count <= id.count { continue }
            map[name] = id
        }
        return map
    }()

    /// The longest name any table holds, in words.
    static let longestName = 3

    /// The zones named in `text`, in the order they appear.
    static func mentions(in text: String) -> [Mention] {
        // Written-out ids first (as given, when the system knows them), each replaced by a placeholder word so
        // that every mention gets a position in one sequence of words.
        var ids: [String] = []
        var marked = text
        for id in ArgumentText.matches(#"\b[A-Za-z][A-Za-z_\-]+(?:/[A-Za-z_\-]+){1,2}\b"#, in: text).reversed()
        where TimeZone(identifier: id) != nil {
            guard let range = marked.range(of: id, options: .backwards) else { continue }
            marked.replaceSubrange(range, with: " zoneid\(ids.count) ")
            ids.append(id)
        }
        let words = Lexicon.words(Lexicon.fold(marked))
        let capitalised = Set(Lexicon.words(marked).filter { $0.first?.isUppercase ?? false }.map { Lexicon.fold($0) })
        var found: [Mention] = []
        var index = 0
        while index < words.count {
            if words[index].hasPrefix("zoneid"), let n = Int(words[index].dropFirst(6)), ids.indices.contains(n) {
                found.append(Mention(zone: ids[n], position: index))
                index += 1
                continue
            }
            var length = min(longestName, words.count - index)
            while length > 0 {
                let name = words[index..<index + length].joined(separator: " ")
                if let zone = zone(named: name, capitalised: capitalised) {
                    found.append(Mention(zone: zone, position: index))
                    break
                }
                length -= 1
            }
            index += max(length, 1)
        }
        return found
    }

    /// The zone a folded name stands for, if the system knows it.
    static func zone(named name: String, capitalised: Set<String>) -> String? {
        if let exemplar = exemplars[name] {
            if exemplar == "UTC" || exemplar == "GMT" { return exemplar }
            if TimeZone(identifier: exemplar) != nil { return exemplar }
            // Older tzdata spells some zones the old way.
            return renamed[exemplar].flatMap { TimeZone(identifier: $0) != nil ? $0 : nil }
        }
        guard let city = tzdataCities[name] else { return nil }
        if ambiguous.contains(name), !name.split(separator: " ").allSatisfy({ capitalised.contains(String($0)) }) {
            return nil
        }
        return city
    }

    static let renamed = [
        "Europe/Kyiv": "Europe/Kiev", "Asia/Kolkata": "Asia/Calcutta", "Asia/Ho_Chi_Minh": "Asia/Saigon",
    ]
}
