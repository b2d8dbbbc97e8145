import Locking
import StoryCircleCore

/// The audit trail of a server that keeps nothing on disk (`--database none`): as long as the process, and
/// at most `capacity` rows (the oldest go first), like the rooms it records reads of. Never fails.
public final class MemoryAuditLog: AuditLog {
    private struct Contents {
        var rows: [AuditEntry] = []
        var nextSequence: Int64 = 1
    }

    private let contents = Locked(Contents())
    private let capacity: Int

    public init(capacity: Int = 10_000) {
        self.capacity = max(capacity, 1)
    }

    @discardableResult
    public func append(_ event: AuditEvent) async throws -> AuditEntry {
        contents.withLock { contents in
            let entry = AuditEntry(sequence: contents.nextSequence, event: event)
            contents.nextSequence += 1
            contents.rows.append(entry)
            if contents.rows.count > capacity { contents.rows.removeFirst(contents.rows.count - capacity) }
            return entry
        }
    }

    public func entries(_ query: AuditQuery) async throws -> AuditPage {
        let matching = contents.withLock { $0.rows }.reversed().filter { entry in
            let event = entry.event
            if let since = query.since, event.at < since { return false }
            if let until = query.until, event.at >= until { return false }
            if let action = query.action, event.action != action { return false }
            if let school = query.schoolID, event.schoolID != school { return false }
            if let before = query.before, entry.sequence >= before { return false }
            return true
        }
        let page = Array(matching.prefix(query.limit))
        return AuditPage(entries: page, next: matching.count > query.limit ? page.last?.sequence : nil)
    }

    @discardableResult
    public func prune(before cutoff: ServerTime) async throws -> Int {
        contents.withLock { contents in
            let before = contents.rows.count
            contents.rows.removeAll { $0.event.at < cutoff }
            return before - contents.rows.count
        }
    }
}
