import SkillJSON

/// The requests a JSON-RPC client sent and has not had answered, by id: the one table both clients keep (the MCP
/// client over stdio, where a waiter is a continuation, and the worker channel, where it is a semaphore). Ids are
/// integers from 1, never reused while the table lives. A value: its owner keeps it under its own lock.
package struct PendingRequests<Waiter> {
    private var nextNumber: Int64 = 1
    private var waiting: [Int64: Waiter] = [:]

    package init() {}

    /// A fresh id for a request nobody waits for (an answer to it is dropped).
    package mutating func nextID() -> JSONRPCID {
        defer { nextNumber += 1 }
        return JSONRPCID(nextNumber)
    }

    /// Registers `waiter` under a fresh id, which the request is then sent with.
    package mutating func add(_ waiter: Waiter) -> JSONRPCID {
        let id = nextID()
        waiting[nextNumber - 1] = waiter
        return id
    }

    /// Registers `waiter` under an id `nextID()` gave (a caller that must know the id before it can wait).
    package mutating func add(_ waiter: Waiter, for id: JSONRPCID) {
        if let number = id.integer { waiting[number] = waiter }
    }

    /// The waiter for an answer's id, no longer pending; nil for an id that is not (or no longer) waited for.
    package mutating func remove(_ id: JSONRPCID) -> Waiter? {
        guard let number = id.integer else { return nil }
        return waiting.removeValue(forKey: number)
    }

    /// The waiter for `id`, left in place (progress on a request in flight).
    package func waiter(for id: JSONRPCID) -> Waiter? {
        id.integer.flatMap { waiting[$0] }
    }

    /// Every waiter, the table then empty: the peer is gone and each must be told.
    package mutating func removeAll() -> [Waiter] {
        defer { waiting = [:] }
        return Array(waiting.values)
    }

    /// Requests in flight.
    package var count: Int { waiting.count }

    package var isEmpty: Bool { waiting.isEmpty }
}

extension PendingRequests: Sendable where Waiter: Sendable {}

extension JSONRPCMessage {
    /// The answer this message carries, with the id of the request it answers; nil for requests and notifications.
    package var answer: (id: JSONRPCID, reply: Result<JSONValue, JSONRPCError>)? {
        switch self {
        case .response(let id, let result): return (id, .success(result))
        case .failure(let id, let error): return (id, .failure(error))
        case .request, .notification: return nil
        }
    }
}
