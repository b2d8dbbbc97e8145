import StoryCircleCore

/// How long rooms stay: a finished room nobody is connected to leaves memory after a while (its results
/// stay in storage, and it is loaded again if someone asks for it), and a room past its school's retention
/// period (`RetentionCutoffs`) is deleted, from memory and from storage. Audit rows have a retention of their
/// own, applied in the same sweep. The server sweeps once a minute; every deletion leaves a
/// `retention_deleted` audit row (the school, the kind, the count), except the audit rows' own pruning, which
/// is logged with its count (a row about it would itself be a row of the trail, kept by the same rule).
struct RoomRetention: Sendable {
    let lifecycle: RoomLifecycle
    let store: any RoomStore
    let storage: Storage
    let logger: StoryCircleLog
    let retentionDays: Int

    /// Forgets finished rooms older than `cutoff` that nobody is connected to, and deletes rooms created
    /// before their school's cutoff in `rooms`: from memory, closing their connections (1001), and from
    /// storage. Audit rows older than their school's cutoff in `audit` are deleted too.
    func sweep(finishedBefore cutoff: ServerTime, rooms: RetentionCutoffs, audit: RetentionCutoffs?, at now: ServerTime) async -> (evicted: Int, purged: Int) {
        var evicted = 0
        for (code, room) in await lifecycle.rooms {
            guard let finishedAt = await room.finishedAt, finishedAt < cutoff, await room.connectionCount == 0 else { continue }
            if await lifecycle.remove(code, room, RoomError(.roomEnded, "This room has finished.")) { evicted += 1 }
        }
        for (code, room) in await lifecycle.rooms {
            let school = room.owner?.schoolID
            guard room.createdAt < rooms.cutoff(for: school) else { continue }
            let days = school.flatMap { rooms.schools[$0] }.map { Int((now.milliseconds - $0.milliseconds) / 86_400_000) } ?? retentionDays
            guard await lifecycle.remove(code, room, RoomError(.roomEnded, "This room has been deleted: rooms are kept for \(days) day\(days == 1 ? "" : "s").")) else { continue }
            logger.notice("Room deleted at the end of its retention period", ["room.code": code])
        }
        let purged = await purgeRooms(rooms, at: now)
        if let audit, let log = storage.audit { await prune(log, audit) }
        return (evicted, purged)
    }

    /// The stored rooms past their school's retention, each school's count in the audit trail.
    private func purgeRooms(_ cutoffs: RetentionCutoffs, at now: ServerTime) async -> Int {
        // A store without schools (memory) has one rule for every room. A failure is tried again at the
        // next sweep.
        let purged: RetentionCounts?
        if let book = storage.retention { purged = try? await book.purgeRooms(cutoffs) } else { purged = (try? await store.purge(createdBefore: cutoffs.fallback)).map { [nil: $0] } }
        guard let counts = purged, counts.total > 0 else { return 0 }
        logger.notice("Old rooms purged", ["rooms": String(counts.total)])
        do {
            try await storage.audit?.recordRetention(counts, kind: .rooms, at: now)
        } catch {
            logger.warning("A deletion by the retention rule could not be recorded in the audit trail", ["kind": RetentionKind.rooms.rawValue, "reason": StoreFailure.from(error, record: "audit").reason])
        }
        return counts.total
    }

    private func prune(_ log: any AuditLog, _ cutoffs: RetentionCutoffs) async {
        do {
            let counts: RetentionCounts
            if let book = storage.retention { counts = try await book.pruneAudit(cutoffs) } else { counts = [nil: try await log.prune(before: cutoffs.fallback)] }
            for (school, count) in counts where count > 0 {
                logger.notice("Old audit rows pruned", ["audit.rows": String(count), "school": school ?? "none"])
            }
        } catch {
            // Tried again at the next sweep; rows kept a minute longer harm nobody.
            logger.warning("Old audit rows could not be pruned", ["reason": StoreFailure.from(error, record: "audit").reason])
        }
    }
}
