extension NewTemplates {
    /// An Agent Skills folder: SKILL.md whose instructions run scripts/NAME.py, which counts the words of a file
    /// or of its input — a start that works, to be replaced.
    static func skillFolder(name: String) -> [(String, String)] {
        [
            (
                "SKILL.md",
                """
                ---
                name: \(name)
                description: Counts the words of a text. Use when the user asks how many words a text or file has.
                license: MIT
                metadata:
                  author: you
                  version: "0.1"
                ---
                # \(name)

                Replace this with what the skill is for, the steps to follow, and examples.

                ## Counting words

                Run `scripts/\(name).py` with the text as its input (or a file's path as its argument). It prints
                `{"words": N}`. Tell the user the number.

                ## Where it runs

                skillhost runs the script confined: it reads this folder and the system, writes only a temporary
                folder, and has no network unless config.json grants it (`"skills": {"grant": {"\(name)": ["network"]}}`).

                """
            ),
            (
                "scripts/\(name).py",
                """
                #!/usr/bin/env python3
                \"\"\"Counts words: of the file named by the first argument, else of standard input.\"\"\"
                import json
                import sys

                text = open(sys.argv[1], encoding="utf-8").read() if len(sys.argv) > 1 else sys.stdin.read()
                print(json.dumps({"words": len(text.split())}))

                """
            ),
        ]
    }
}
