/// `--help` texts, one per subcommand.
enum Help {
    static let overview = """
        skillhost — a native skill host for AI agents: loads skill plugins (.so files) and runs their skills.

        Usage:
          skillhost [--resume <id>]                  the interactive agent shell (piped input: one quiet turn)
          skillhost sessions                         list saved shell sessions
          skillhost mcp                              serve the skills to MCP clients over stdio
          skillhost web [--http <address:port>]      the browser front end (prints the address to open)
          skillhost list [--json] [--watch]          show loaded skills and files that failed to load
          skillhost call <skill> ['<json>'] [--json] [--timeout <duration>] [--yes]
                                                     run one skill with JSON arguments
          skillhost check <plugin.so|x.skill.json> [--json]
                                                     validate a plugin or composite skill without registering it
          skillhost plugin install <file> | remove <name> | list
                                                     manage the plugins in the user folder
          skillhost new <name> [--lang c|cpp|swift] [--dir <dir>] [--sdk <prefix>]
                                                     write a plugin project to start from
          skillhost config path | show | check       where the configuration is, what is in effect, is it valid
          skillhost policy explain <skill> ['<json>']
                                                     which policy rule decides a call, and why
          skillhost trust <skill|plugin|server>      approve definitions that changed since first seen
          skillhost trust <folder>                   load this project's own skill folders
          skillhost version                          host, plugin ABI and Swift versions
          skillhost completion bash | zsh | fish     shell completion (eval "$(skillhost completion bash)")
          skillhost ask ['<question>'] [--json] [--step-limit N] [--record <file>]
                        [--save | --resume <id> [--rewind N]]
                                                     one agent turn: a model (or the offline router) calls skills
          skillhost replay <file> [--skills recorded|live] [--answers-from-record]
                                                     run a recorded session again offline, and say where it diverges
          skillhost help [<command>] [--man]         show help for a command (--man: the manual page, in roff)

        Options for every command:
        \(CommandLineOption.everyCommandBlock)

        Plugins load from the bundled folder (<prefix>/lib/skillhost/plugins for an installed skillhost, else beside
        the executable: libskill-*.so), the user folder
        ($SKILLHOST_PLUGINS, else $XDG_DATA_HOME/skillhost/plugins, created on first use) and every --plugins <dir>.
        Plugins outside the bundled folder run in worker processes the host can kill and restart, and are
        loaded in a child process first, so one that crashes or hangs cannot take skillhost down.
        Exit codes: 0 ok, 1 error, 2 bad command line, 3 invalid arguments, 4 timeout, 5 cancelled,
        6 step limit reached, 7 repeated call, 8 no skill matched, 9 refused (a call denied or unconfirmed),
        10 a budget used up.
        """

    static let list = """
        Usage: skillhost list [--json] [--watch] [--plugins <dir>]... [--no-default-plugins]

        Shows every loaded skill — id, title, plugin and version, risk, flags and a one-line argument summary
        (optional arguments end in ?) —, every plugin with where it runs (in-process or process), and every
        plugin file that failed to load with the reason.

        \(CommandLineOption.block(for: "list"))
        """

    static let call = """
        Usage: skillhost call <skill> ['<json>'] [--json] [--timeout <duration>] [--yes]

        Runs one skill. Arguments are a JSON object ({} when omitted; "-" reads them from standard input). They are
        validated against the skill's schema first; strings holding numbers or booleans are accepted ("23" → 23).
        Prints the result (text as is, anything else as JSON). Ctrl-C cancels the call.

        \(CommandLineOption.block(for: "call"))

        Exit codes: 0 ok, 1 error (also: not run by the policy), 3 invalid arguments, 4 timeout, 5 cancelled.
        Example: skillhost call calculator '{"expression": "(23+7)*2"}'
        """

    static let check = """
        Usage: skillhost check <plugin.so | NAME.skill.json | skill folder> [--json]

        Validates a plugin file the way the host loads it — ELF checks, ABI version, descriptors, skill ids,
        schemas, typed signatures, init — without registering it, and prints its skills with their schemas
        (declared or generated from the signature), or every problem found. Exit code 1 when there are problems.
        It warns about symbols exported besides skill_plugin_entry. A composite skill's file is checked against
        the skills the bundled and user plugins register: its plan, its risk, and the steps calling skills that
        are not registered now.

        A folder is checked as an Agent Skills skill (agentskills.io): its SKILL.md front matter (name, description,
        license, compatibility, metadata, allowed-tools) against the specification, with the same verdicts as the
        reference validator (skills-ref validate). Problems make the exit code 1; warnings say what skillhost
        forgives when it loads the skill anyway.
        """

    static let ask = """
        Usage: skillhost ask ['<question>'] [--json] [--step-limit N] [--record <file>]
                             [--save | --resume <id> [--rewind N]]

        Runs one agent turn: the model decides which skills to call, the host validates and runs them, the results
        go back to the model until it answers. The answer goes to standard output, tool activity to standard error.
        Reads the question from standard input when none is given. Ctrl-C stops the turn.

        The model: OPENAI_BASE_URL + SKILLHOST_MODEL (+ OPENAI_API_KEY), or the same keys in
        $XDG_CONFIG_HOME/skillhost/config.json ("base_url", "model", "api_key"); without one, the offline router.
        Destructive skills are denied here (nobody can confirm them) unless a "policy" rule allows them.

        \(CommandLineOption.block(for: "ask"))

        Exit codes: 0 answered, 1 model error, 2 bad command line or configuration, 5 cancelled, 6 step limit
        reached, 7 repeated call, 8 no skill matched (the offline router found none for the request), 9 refused (a
        call was denied by a policy rule, or needed a confirmation there was no one to give), 10 a budget was used
        up ("budgets" in config.json).
        """

    static let sessions = """
        Usage: skillhost sessions

        Lists the saved shell sessions (newest first): id, start, number of messages, first question.
        Continue one with skillhost --resume <id>, or /resume <id> in the shell.
        """

    static let mcp = """
        Usage: skillhost mcp [--http <address:port> [--tls-cert <file> --tls-key <file>]] [--plugins <dir>]...
                             [--no-default-plugins]

        Serves the skills to an MCP client over stdio (one JSON-RPC message per line; logs on stderr) until the
        client closes standard input (--http ADDRESS:PORT serves Streamable HTTP instead, over TLS with
        --tls-cert and --tls-key, two PEM files given together). Plugin folders are watched: changes become
        notifications/tools/list_changed.
        Destructive skills are refused unless a "policy" rule in config.json allows them.
        """

    static let web = """
        Usage: skillhost web [--http <address:port>] [--plugins <dir>]... [--no-default-plugins]

        Serves the browser front end (default 127.0.0.1:8780; port 0 takes any free one) and prints one line,
        open http://127.0.0.1:8780/#token=…, until Ctrl-C. The page streams the answer as it is written, shows
        a card per skill call, asks before mutating and destructive calls (y, n, a, Esc) and can stop a turn.
        The token in the address (random, or $SKILLHOST_WEB_TOKEN) is exchanged for a cookie; requests from
        other sites and other Host names are refused. Serving beyond loopback needs $SKILLHOST_WEB_TOKEN.
        """

    static let plugin = """
        Usage: skillhost plugin install <file.so|file.skill.json> | remove <name> | list

        install   checks the file the way the host loads it, then copies it into the user plugins folder
                  ($SKILLHOST_PLUGINS, else $XDG_DATA_HOME/skillhost/plugins) under a hidden name and renames it, so
                  a running skillhost sees the whole file at once; a plugin of the same name there is replaced. A
                  broken file, a bundled plugin's name or skill ids another plugin has are refused with the reasons.
        remove    deletes the named plugin (or composite skill) from the user folder.
        list      the plugins part of skillhost list.
        """

    static let new = """
        Usage: skillhost new <name> [--lang c|cpp|swift] [--dir <dir>] [--sdk <prefix>] [--kind plugin|skill]
                             [--with-view]

        --kind skill writes an Agent Skills folder (SKILL.md and a script) instead of a plugin. Otherwise writes a
        plugin project (default: ./<name>) with one typed and one JSON skill, a Makefile (C, C++) or a
        Package.swift (Swift) that builds against the installed SDK, and a README with the build, check and
        install lines. --with-view adds a view (an MCP App, view.html) that shows the greeting skill's result and
        greets again through it. --sdk names the prefix skillhost was installed into (default: the one this skillhost runs
        from); Swift projects need an installed SDK (make install), C and C++ also build against a source tree.
        """

    static let config = """
        Usage: skillhost config path | show | check

        path   prints where config.json is read from ($XDG_CONFIG_HOME/skillhost/config.json)
        show   prints every setting in effect and where it came from (environment, config.json, default);
               secrets (API keys, header values, tokens) are shown as (set), never echoed
        check  validates the file and the environment as every command reads them (exit 2 and the sentence
               naming the key when something is wrong)
        """

    static let policy = """
        Usage: skillhost policy explain <skill> ['<json arguments>']

        Prints what the policy in config.json decides for a call of <skill> with these arguments (validated as a
        call would be): allow, ask or deny, the rule that decides (its number in the list and as written), why it
        is the most specific, and the other rules that match. Rules: "policy": {"<pattern>": "allow|ask|deny"}, or
        a list of {"skill": "<pattern>", "risk": "read-only|mutating|destructive", "arguments": {<JSON Schema>},
        "then": "allow|ask|deny"}. The most specific rule wins: an exact id over a pattern, a pattern with more
        literal characters over fewer, then more conditions (risk, arguments) over fewer; at equal specificity
        deny beats ask beats allow.
        """

    static let replay = """
        Usage: skillhost replay <file.skillrec> [--skills recorded|live] [--answers-from-record] [--json]

        Runs a session recorded with skillhost ask … --record <file>, /record <file> in the shell or "record": true
        in config.json again, offline: your messages, continuations and rewinds and the model's answers come from
        the record; the skills too (recorded, the default: the recorded tools, nothing runs) or from the real
        plugins (live: every outcome compared with the recorded one). A confirmation the record answered yes is
        refused in a live replay — a record is a file anyone can write — unless --answers-from-record takes the
        record's answers. Exit 0 when the run went as recorded; 1 with the first divergence and every other
        difference.
        """

    static let trust = """
        Usage: skillhost trust <skill | plugin | MCP server>
               skillhost trust <project folder>

        skillhost records each skill's definition (title, description, schemas, risk, provider, what its plugin
        declares, a composite's steps) the first time it sees it, in $XDG_DATA_HOME/skillhost/pins.json. When one
        changes later — a server that rewrites a tool's description or widens its schema — the skill is not run (a
        person is asked in the shell and the browser; skillhost call, ask and MCP clients are refused) and
        skillhost list shows what changed. trust records the current definitions of that skill, or of every skill
        of that plugin or server, as approved; a name that is more than one of them is refused — say which with
        skill:NAME, plugin:NAME or server:NAME.

        A folder (skillhost trust . in a project) is trusted as a project: its .agents/skills and .claude/skills
        skill folders are loaded when skillhost runs there (kept in $XDG_DATA_HOME/skillhost/trusted-projects.json).
        """

    static func text(for topic: String?) -> String? {
        switch topic {
        case nil: return overview
        case "list"?: return list
        case "call"?: return call
        case "check"?: return check
        case "ask"?: return ask
        case "sessions"?: return sessions
        case "mcp"?: return mcp
        case "web"?: return web
        case "plugin"?: return plugin
        case "new"?: return new
        case "config"?: return config
        case "policy"?: return policy
        case "replay"?: return replay
        case "trust"?: return trust
        case "version"?:
            return
                "Usage: skillhost version\n\nPrints the host version, the plugin ABI it implements and the Swift it was built with.\n"
        case "completion"?:
            return
                "Usage: skillhost completion bash|zsh|fish\n\nPrints a completion script: eval \"$(skillhost completion bash)\" in ~/.bashrc.\n"
        case "help"?: return overview
        default: return nil
        }
    }
}
