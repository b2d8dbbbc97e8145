import StoryCircleCore

/// How long rooms stay: a finished room nobody is connected to leaves memory after a while (its results
/// stay in storage, and it is loaded again if someone asks for it), and a room past the retention period is
/// deleted, from memory and from storage. Audit rows have a retention of their own (`auditRetentionDays`),
/// applied in the same sweep. The server sweeps once a minute.
struct RoomRetention: Sendable {
    let lifecycle: RoomLifecycle
    let store: any RoomStore
    let audit: (any AuditLog)?
    let logger: StoryCircleLog
    let retentionDays: Int

    /// Forgets finished rooms older than `cutoff` that nobody is connected to, and deletes rooms created
    /// before `retentionCutoff`: from memory, closing their connections (1001), and from storage.
    /// Audit rows written before `auditCutoff` are deleted too.
    func sweep(finishedBefore cutoff: ServerTime, createdBefore retentionCutoff: ServerTime, auditBefore auditCutoff: ServerTime? = nil) async -> (evicted: Int, purged: Int) {
        var evicted = 0
        for (code, room) in await lifecycle.rooms {
            guard let finishedAt = await room.finishedAt, finishedAt < cutoff, await room.connectionCount == 0 else { continue }
            if await lifecycle.remove(code, room, RoomError(.roomEnded, "This room has finished.")) { evicted += 1 }
        }
        let days = retentionDays
        for (code, room) in await lifecycle.rooms where room.createdAt < retentionCutoff {
            guard await lifecycle.remove(code, room, RoomError(.roomEnded, "This room has been deleted: rooms are kept for \(days) day\(days == 1 ? "" : "s").")) else { continue }
            logger.notice("Room deleted at the end of its retention period", ["room.code": code])
        }
        let purged = (try? await store.purge(createdBefore: retentionCutoff)) ?? 0
        if purged > 0 { logger.notice("Old rooms purged", ["rooms": String(purged)]) }
        if let audit, let auditCutoff {
            do {
                let pruned = try await audit.prune(before: auditCutoff)
                if pruned > 0 { logger.notice("Old audit rows pruned", ["audit.rows": String(pruned)]) }
            } catch {
                // Tried again at the next sweep; rows kept a minute longer harm nobody.
                logger.warning("Old audit rows could not be pruned", ["reason": StoreFailure.from(error, record: "audit").reason])
            }
        }
        return (evicted, purged)
    }
}
