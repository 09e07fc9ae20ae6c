/// `skillhost completion bash|zsh|fish`: shell completion for commands, their words and options; skill ids for
/// `call` come from `skillhost list --json` of the moment.
enum Completion {
    static let commands = CommandLineParser.commands
    static let options = CommandLineOption.names
    /// bash's `case` lines for the options whose value completes as a file or from fixed choices.
    static var valueCases: String {
        var lines = [
            "        \(CommandLineOption.pathNames.joined(separator: "|"))) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;"
        ]
        for option in CommandLineOption.all {
            guard case .choice(let words) = option.value else { continue }
            lines.append(
                "        \(option.name)) COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\")); return ;;"
            )
        }
        return lines.joined(separator: "\n")
    }
    /// The words after a command.
    static let words: [(command: String, words: [String])] = [
        ("plugin", ["install", "remove", "list"]), ("config", ["path", "show", "check"]), ("policy", ["explain"]),
        ("completion", ["bash", "zsh", "fish"]), ("help", commands),
    ]

    static func script(for shell: String) -> String {
        switch shell {
        case "zsh": return zsh
        case "fish": return fish
        default: return bash
        }
    }

    /// Skill ids, one per line, from the running configuration (the pretty JSON puts each skill's id on a line of
    /// its own, 6 spaces in).
    static let skillIDs = #"skillhost list --json 2>/dev/null | sed -n 's/^      "id": "\(.*\)",$/\1/p'"#

    static var bash: String {
        let cases = words.map { "        \($0.command)) words=\"\($0.words.joined(separator: " "))\" ;;" }
            .joined(separator: "\n")
        return """
            # skillhost completion for bash: eval "$(skillhost completion bash)" in ~/.bashrc
            _skillhost() {
                local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} words=""
                case "$prev" in
            \(valueCases)
                esac
                if [[ "$cur" == -* ]]; then
                    COMPREPLY=($(compgen -W "\(options.joined(separator: " "))" -- "$cur")); return
                fi
                if [ "$COMP_CWORD" -eq 1 ]; then
                    COMPREPLY=($(compgen -W "\(commands.joined(separator: " "))" -- "$cur")); return
                fi
                case "${COMP_WORDS[1]}" in
            \(cases)
                    call) [ "$COMP_CWORD" -eq 2 ] && words="$(\(skillIDs))" ;;
                    check) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                esac
                if [ "${COMP_WORDS[1]}" = plugin ] && [ "$COMP_CWORD" -eq 3 ] && [ "${COMP_WORDS[2]}" = install ]; then
                    COMPREPLY=($(compgen -f -- "$cur")); return
                fi
                [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$words" -- "$cur"))
            }
            complete -o default -F _skillhost skillhost

            """
    }

    static var zsh: String {
        let cases = words.map { "        \($0.command)) compadd -- \($0.words.joined(separator: " ")) ;;" }
            .joined(separator: "\n")
        return """
            #compdef skillhost
            # skillhost completion for zsh: skillhost completion zsh > "${fpath[1]}/_skillhost" (or eval it in ~/.zshrc)
            _skillhost() {
                if [[ "$words[CURRENT]" == -* ]]; then
                    compadd -- \(options.joined(separator: " ")); return
                fi
                if (( CURRENT == 2 )); then
                    compadd -- \(commands.joined(separator: " ")); return
                fi
                (( CURRENT == 3 )) || { _files; return }
                case "$words[2]" in
            \(cases)
                    call) compadd -- ${(f)"$(\(skillIDs))"} ;;
                    *) _files ;;
                esac
            }
            compdef _skillhost skillhost

            """
    }

    static var fish: String {
        var lines = [
            "# skillhost completion for fish: skillhost completion fish > ~/.config/fish/completions/skillhost.fish",
            "complete -c skillhost -f -n __fish_use_subcommand -a '\(commands.joined(separator: " "))'",
        ]
        for (command, words) in words {
            lines.append(
                "complete -c skillhost -f -n '__fish_seen_subcommand_from \(command)' -a '\(words.joined(separator: " "))'"
            )
        }
        lines.append("complete -c skillhost -f -n '__fish_seen_subcommand_from call' -a '(\(skillIDs))'")
        for option in options { lines.append("complete -c skillhost -l \(option.dropFirst(2))") }
        return lines.joined(separator: "\n") + "\n"
    }
}
