import CProcess

/// Turns what confinement blocked during a call into the sentence a person can act on.
enum ConfinementMessages {
    /// The system calls that need a capability, and the grant that gives it.
    private static let needs: [String: (capability: String, grant: String)] = [
        "socket": ("network", "network"), "connect": ("network", "network"), "sendto": ("network", "network"),
        "socketpair": ("network", "network"), "bind": ("network", "network"), "listen": ("network", "network"),
        "inotify_add_watch": ("read", "read"),
        "execve": ("exec", "exec"), "execveat": ("exec", "exec"), "fork": ("exec", "exec"),
        "vfork": ("exec", "exec"), "clone": ("exec", "exec"),
    ]

    /// The calls that change a file's metadata, which the supervisor makes only where the plugin may write.
    private static let metadataCalls: Set<String> = [
        "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat", "utime", "utimes",
        "futimesat", "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
        "fremovexattr", "setxattrat", "removexattrat",
    ]

    /// After a call on this thread: when the filter blocked something and the call failed, the error says what was
    /// blocked and how to allow it; when the plugin reports a permission error, it says the plugin is confined.
    static func explain(_ outcome: inout SkillOutcome, plugin: String, confinement: Confinement) {
        // The common case, a call nothing was blocked in that succeeded, costs one load.
        guard outcome.status == .error || skillhost_blocked_pending() != 0 else { return }
        var buffer = [CChar](repeating: 0, count: 256)
        let blocked =
            skillhost_take_blocked(&buffer, Int32(buffer.count)) == 1
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : nil
        explain(&outcome, blocked: blocked, plugin: plugin, confinement: confinement)
    }

    /// The same for a call in another process, which reported what the filter `blocked` during it.
    static func explain(_ outcome: inout SkillOutcome, blocked: String?, plugin: String, confinement: Confinement) {
        guard outcome.status == .error else { return }
        let reported = outcome.error ?? ""
        if let blocked {
            outcome.reword(
                sentence(blocked: blocked, plugin: plugin) + (reported.isEmpty ? "" : "; it reported: \(reported)"))
        } else if reported.contains("Operation not permitted"), !confinement.capabilities.contains(.runPrograms),
            ["spawn", "system", "fork", "exec", "popen"].contains(where: { reported.lowercased().contains($0) })
        {
            // The C library starts a process with every signal blocked (posix_spawn, system, popen): the filter
            // refuses that clone with EPERM and no report of its own, so the plugin's words are all there is.
            outcome.reword(
                reported + " (the plugin is confined and does not declare exec: it may start no program or process; "
                    + "grant it with \"isolation.grant.\(plugin)\": [\"exec\"])")
        } else if reported.contains("Permission denied") || reported.contains("Operation not permitted") {
            outcome.reword(reported + " (" + hint(plugin: plugin, confinement: confinement) + ")")
        }
    }

    /// `weather: connect() to 93.184.216.34:443 was blocked (the plugin does not declare network; grant it with
    /// "isolation.grant.weather": ["network"])`.
    static func sentence(blocked: String, plugin: String) -> String {
        let call = String(blocked.prefix { $0 != "(" })
        // Threads are clones too, and are allowed: a blocked clone() is one that would start a process — or one
        // into new namespaces, which no grant allows.
        let namespaces = blocked.hasSuffix("into new namespaces")
        let blocked = call == "clone" && !namespaces ? "clone() to start a process" : blocked
        if metadataCalls.contains(call) {
            // Refused by the supervisor: outside what the plugin may write (a grant helps), or a device or a
            // set-user-ID bit (nothing does).
            guard !blocked.contains("() of the device "), !blocked.hasSuffix("set-group-ID bit") else {
                return "\(plugin): \(blocked) was blocked (no plugin may do that)"
            }
            return "\(plugin): \(blocked) was blocked (a plugin may change modes, owners, times and extended "
                + "attributes only where it may write; grant a folder with \"isolation.grant.\(plugin)\": "
                + "[\"write:<folder>\"])"
        }
        guard !namespaces, let need = needs[call] else {
            return "\(plugin): \(blocked) was blocked (no plugin may do that)"
        }
        return "\(plugin): \(blocked) was blocked (the plugin does not declare \(need.capability); grant it with "
            + "\"isolation.grant.\(plugin)\": [\"\(need.grant)\"])"
    }

    /// What a confined plugin may touch, for a permission error the plugin reported itself.
    static func hint(plugin: String, confinement: Confinement) -> String {
        let capabilities = confinement.capabilities
        if capabilities.contains(.writeFiles) {
            return "the plugin is confined: it may signal only its own processes"
        }
        let reads = confinement.readPaths.count
        let writes = confinement.writePaths.count
        func more(_ count: Int) -> String { count == 0 ? "" : " and \(count) more folder\(count == 1 ? "" : "s")" }
        let readable = capabilities.contains(.readFiles) ? "read all your files" : "read system files" + more(reads)
        let grant = capabilities.contains(.readFiles) ? "write:" : "read:"
        return "the plugin is confined: it may \(readable), write only its data dir\(more(writes)) and signal only its "
            + "own processes; grant a folder with \"isolation.grant.\(plugin)\": [\"\(grant)<folder>\"]"
    }
}
