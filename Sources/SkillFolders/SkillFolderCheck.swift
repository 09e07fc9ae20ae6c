import Foundation

/// A skill folder judged: by the specification (`problems`: its verdict, which agrees with the reference validator,
/// `skills-ref validate`), and as a client loads it (`skill`: loaded leniently — a name that differs from its
/// folder, an unknown field or a front matter that needed quoting is a warning; a missing description or
/// unreadable YAML is not loadable).
package struct SkillFolderInspection: Sendable {
    /// What the specification forbids, one sentence each; empty: valid.
    package let problems: [String]
    /// What it advises against, and what loading had to forgive.
    package let warnings: [String]
    /// The skill as loaded, or why it cannot be.
    package let skill: Result<SkillFolder, SkillFolderError>
}

package enum SkillFolderCheck {
    /// The front matter fields of the specification.
    package static let fields = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"]
    package static let maximumName = 64
    package static let maximumDescription = 1024
    package static let maximumCompatibility = 500

    /// Reads and judges `folder`.
    package static func inspect(_ folder: String, scope: SkillFolder.Scope = .configured) -> SkillFolderInspection {
        func unusable(_ message: String) -> SkillFolderInspection {
            SkillFolderInspection(problems: [message], warnings: [], skill: .failure(SkillFolderError(message)))
        }
        var info = stat()
        guard stat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            return unusable("\(folder) is not a folder; a skill is a folder holding a SKILL.md")
        }
        guard let file = SkillFile.locate(in: folder) else {
            return unusable(
                "\(folder) has no SKILL.md; a skill folder holds a SKILL.md that starts with YAML front matter "
                    + "(skillhost new NAME --kind skill writes one)")
        }
        let text: String
        switch SkillFile.read(file) {
        case .failure(let error): return unusable(error.message)
        case .success(let read): text = read
        }
        let yaml: String
        switch SkillFile.split(text, file: file, body: false) {
        case .failure(let error): return unusable(error.message)
        case .success(let parts): yaml = parts.frontMatter
        }
        var problems: [String] = []
        var warnings: [String] = []
        let document: YAMLValue?
        switch YAMLReader.read(yaml, strict: true) {
        case .success(let value): document = value
        case .failure(let strict):
            // The line in the file, as an editor shows it (the front matter starts after its "---").
            let sentence = "\(file), line \(strict.line + 1): the front matter \(strict.message)"
            problems.append(sentence)
            // As the client guide says: what other clients accept loads here too, with a warning.
            switch YAMLReader.read(yaml, strict: false) {
            case .success(let value):
                document = value
                warnings.append(sentence + " (read anyway)")
            case .failure:
                guard case .success(let value) = YAMLReader.read(quotingColons(yaml), strict: false) else {
                    return SkillFolderInspection(
                        problems: problems, warnings: [], skill: .failure(SkillFolderError(sentence)))
                }
                document = value
                // One fact, said once: the problem names it, and loading says it forgave it.
                let colon =
                    "\(file), line \(strict.line + 1): a value holds \": \" without quotes, which is not valid YAML — "
                    + "put such values in quotes"
                problems[problems.count - 1] = colon
                warnings.append(colon + " (read anyway, as quoted text)")
            }
        }
        guard case .map(let members)? = document else {
            let message = "\(file): the front matter must be fields (name: …, description: …), one per line"
            return SkillFolderInspection(
                problems: problems + [message], warnings: warnings, skill: .failure(SkillFolderError(message)))
        }
        let value = YAMLValue.map(members)
        let unknown = members.map(\.key).filter { !fields.contains($0) }
        if !unknown.isEmpty {
            let names = unknown.map { "\"\($0)\"" }.joined(separator: ", ")
            let sentence =
                "\(file): unknown field\(unknown.count == 1 ? "" : "s") \(names) in the front matter; the fields are "
                + fields.joined(separator: ", ") + " (anything else goes under metadata)"
            problems.append(sentence)
            warnings.append(sentence)
        }
        // name
        var loadable: SkillFolderError?
        let folderName = ((folder as NSString).standardizingPath as NSString).lastPathComponent
        var name = value["name"]?.text?.trimmingCharacters(in: .whitespaces).precomposedStringWithCompatibilityMapping
        if let declared = name, !declared.isEmpty {
            let nameProblems = self.nameProblems(declared, file: file)
            problems += nameProblems
            if folderName.precomposedStringWithCompatibilityMapping != declared {
                // A skill is known by its folder's name: a front matter cannot claim another skill's name (and
                // with it that skill's place, grants and approvals).
                let sentence =
                    "\(file): the name \"\(declared)\" differs from its folder's name \"\(folderName)\"; rename one "
                    + "so they match (skillhost knows a skill by its folder's name)"
                problems.append(sentence)
                if usable(folderName) {
                    warnings.append(sentence)
                    name = folderName
                } else {
                    loadable = SkillFolderError(sentence)
                }
            }
            if let name, !usable(name) {
                loadable = SkillFolderError(
                    "\(file): the name \"\(name)\" cannot name a skill here (letters, digits, \"-\", \"_\" and \".\" "
                        + "only, at most 128)")
            } else {
                warnings += nameProblems
            }
        } else {
            let sentence =
                value["name"] == nil
                ? "\(file): the front matter has no name; add name: \(folderName)"
                : "\(file): name must be text that is not empty, such as name: \(folderName)"
            problems.append(sentence)
            loadable = SkillFolderError(sentence)
        }
        // description
        let description = value["description"]?.text
        if let description, !description.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            if description.unicodeScalars.count > maximumDescription {
                let sentence =
                    "\(file): the description is \(description.unicodeScalars.count) characters; it may be at most "
                    + "\(maximumDescription) — say what the skill does and when to use it, briefly"
                problems.append(sentence)
                warnings.append(sentence)
            }
        } else {
            let sentence =
                value["description"] == nil
                ? "\(file): the front matter has no description; add one saying what the skill does and when to use it"
                : "\(file): description must be text that is not empty"
            problems.append(sentence)
            loadable = loadable ?? SkillFolderError(sentence + " (without one, the skill cannot be offered)")
        }
        // compatibility
        if let compatibility = value["compatibility"] {
            if let text = compatibility.text {
                if text.unicodeScalars.count > maximumCompatibility {
                    let sentence =
                        "\(file): compatibility is \(text.unicodeScalars.count) characters; it may be at most "
                        + "\(maximumCompatibility)"
                    problems.append(sentence)
                    warnings.append(sentence)
                }
            } else {
                let sentence = "\(file): compatibility must be text, such as compatibility: Requires git and jq"
                problems.append(sentence)
                warnings.append(sentence)
            }
        }
        var metadata: [(key: String, value: String)] = []
        switch value["metadata"] {
        case .map(let entries)?:
            for entry in entries {
                if let text = entry.value.text {
                    metadata.append((entry.key, text))
                } else {
                    warnings.append("\(file): metadata \"\(entry.key)\" is not text; it is left out")
                }
            }
        case .some:
            warnings.append("\(file): metadata should map names to text, such as metadata: {author: me}; left out")
        case nil: break
        }
        if let loadable {
            return SkillFolderInspection(problems: problems, warnings: warnings, skill: .failure(loadable))
        }
        let skill = SkillFolder(
            name: name ?? folderName, description: description ?? "", license: value["license"]?.text,
            compatibility: value["compatibility"]?.text, metadata: metadata, allowedTools: value["allowed-tools"]?.text,
            frontMatter: value, folder: folder, file: file, scope: scope, warnings: warnings)
        return SkillFolderInspection(problems: problems, warnings: warnings, skill: .success(skill))
    }

    /// The specification's rules for a name, each broken one a sentence.
    package static func nameProblems(_ name: String, file: String) -> [String] {
        var problems: [String] = []
        // One name that keeps every rule, offered wherever a rule is broken (it suggested "bad_skill" for
        // "Bad_Skill", itself refused for its "_").
        let suggestion = validName(from: name)
        let such = suggestion.map { ", such as \"\($0)\"" } ?? ""
        if name.unicodeScalars.count > maximumName {
            problems.append(
                "\(file): the name is \(name.unicodeScalars.count) characters; it may be at most \(maximumName)")
        }
        if name != name.lowercased() {
            problems.append("\(file): the name \"\(name)\" must be lowercase\(such)")
        }
        if name.hasPrefix("-") || name.hasSuffix("-") {
            problems.append("\(file): the name \"\(name)\" must not start or end with \"-\"\(such)")
        }
        if name.contains("--") {
            problems.append("\(file): the name \"\(name)\" must not hold \"--\"; use single hyphens\(such)")
        }
        if !name.allSatisfy({ $0 == "-" || $0.isLetter || $0.isNumber }) {
            problems.append(
                "\(file): the name \"\(name)\" may hold only letters, digits and \"-\""
                    + (suggestion.map { ", such as \"\($0)\"" } ?? ", such as \"pdf-processing\""))
        }
        return problems
    }

    /// `name` made to keep the rules: lowercase, anything but letters and digits a single "-", none at either end,
    /// at most `maximumName` characters; nil when nothing of it is left.
    static func validName(from name: String) -> String? {
        var result = ""
        for character in name.lowercased() {
            if character.isLetter || character.isNumber {
                result.append(character)
            } else if !result.isEmpty, result.last != "-" {
                result.append("-")
            }
        }
        while result.hasSuffix("-") { result.removeLast() }
        result = String(result.unicodeScalars.prefix(maximumName))
        while result.hasSuffix("-") { result.removeLast() }
        return result.isEmpty ? nil : result
    }

    /// Whether a name can stand for a skill here (in tool enums, `skill://` addresses, file names) even if the
    /// specification would not have it.
    static func usable(_ name: String) -> Bool {
        name.count <= 128
            && name.unicodeScalars.allSatisfy { scalar in
                scalar == "-" || scalar == "_" || scalar == "." || CharacterSet.alphanumerics.contains(scalar)
            } && name != "." && name != ".."
    }

    /// The client guide's fallback for YAML other clients accept: a top-level `key: value` whose value holds
    /// `": "` is rewritten with the value in single quotes.
    static func quotingColons(_ yaml: String) -> String {
        yaml.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard let first = line.first, first != " ", first != "\t", first != "#", first != "-",
                let colon = line.range(of: ": ")
            else { return String(line) }
            let value = line[colon.upperBound...].trimmingCharacters(in: .whitespaces)
            guard value.contains(": "), !value.hasPrefix("'"), !value.hasPrefix("\"") else { return String(line) }
            return line[..<colon.upperBound] + "'" + value.replacingOccurrences(of: "'", with: "''") + "'"
        }.joined(separator: "\n")
    }
}
