import Foundation
import RoomStoreSupport
import StoryCircleCore

/// PostgreSQL's side of the group-commit writer: a batch's writes as one transaction, sent as pipelines
/// (the whole batch, its BEGIN and its COMMIT travel in one round trip when it is short).
///
/// Statements go in a fixed order of rooms, each room's records in theirs: every transaction that locks
/// several lease rows (this one, `renew`) takes them in the same order, so they cannot deadlock. A lost
/// connection is replaced and the batch run once more: every write is idempotent (natural keys, compared
/// on conflict), so a batch that did commit is recognised, not doubled. If that fails too, a batch whose
/// COMMIT had been sent is reported as failed all the same, its outcome unknown: the store, not the
/// report, is the truth, and writing the records again is safe. Purges run after the transaction, each on
/// its own.
///
/// Used on the writer thread only (`@unchecked Sendable` for the hand-over).
final class PostgresCommitter: BatchCommitter, @unchecked Sendable {
    private let settings: PostgresSettings
    private var connection: PostgresConnection?
    private let probeKey: String
    /// The most statements one pipeline carries (see `PostgresConnection.pipeline`).
    private let pipelineLength = 256

    init(settings: PostgresSettings, connection: PostgresConnection, probeKey: String) {
        self.settings = settings
        self.connection = connection
        self.probeKey = probeKey
    }

    /// One statement of a batch: which write it serves and what to send.
    private struct Work {
        var write: Int
        /// The room it writes to, which decides the order of lock taking.
        var room: String
        var statement: WriterStatements.Statement
    }

    /// A statement that failed on its own data: it is taken out and the rest run again.
    private struct StatementFailed: Error {
        var index: Int
        var error: PostgresError
    }

    /// A batch that failed as a whole; `mayHaveCommitted` when its COMMIT had been sent.
    private struct BatchFailed: Error {
        var error: PostgresError
        var mayHaveCommitted: Bool
    }

    func commit(_ writes: [BatchWrite]) -> BatchOutcome {
        var work: [Work] = []
        var purges: [(write: Int, cutoff: ServerTime)] = []
        for (index, write) in writes.enumerated() {
            do {
                switch write {
                case .record(let record, let room, let lease):
                    work.append(Work(write: index, room: room, statement: try WriterStatements.write(record, room: room, lease: lease)))
                case .createRoom(let header):
                    work.append(Work(write: index, room: header.code, statement: try WriterStatements.create(header)))
                case .probe:
                    work.append(Work(write: index, room: "", statement: WriterStatements.probe(key: probeKey, at: PostgresRoomStore.now())))
                case .purge(let cutoff):
                    purges.append((index, cutoff))
                case .sql:
                    // Nothing of this store sends its own SQL through the writer.
                    return .rejected(index: index, reason: "raw SQL is not written through the PostgreSQL writer")
                }
            } catch {
                return .rejected(index: index, reason: Self.reason(error))
            }
        }
        work = work.enumerated().sorted { ($0.element.room, $0.offset) < ($1.element.room, $1.offset) }.map(\.element)

        var results = [Result<Int, any Error>](repeating: .success(0), count: writes.count)
        var retried = false
        var mayHaveCommitted = false
        while !work.isEmpty {
            do {
                let statuses = try transaction(work)
                for (item, status) in zip(work, statuses) {
                    if let refusal = item.statement.outcome(status) { results[item.write] = .failure(refusal) }
                }
                break
            } catch let failure as StatementFailed {
                return .rejected(index: work[failure.index].write, reason: failure.error.message)
            } catch let failure as BatchFailed {
                mayHaveCommitted = mayHaveCommitted || failure.mayHaveCommitted
                if failure.error.connectionLost {
                    connection = nil
                    if !retried {
                        retried = true
                        continue
                    }
                }
                return .unavailable(reason: mayHaveCommitted && failure.error.connectionLost
                    ? "the connection was lost during a commit, whose outcome is unknown (\(failure.error.description))"
                    : failure.error.description)
            } catch {
                return .unavailable(reason: Self.reason(error))
            }
        }

        for purge in purges {
            do {
                results[purge.write] = .success(try PostgresRoomStore.withConnection(&connection, settings, retrying: true, what: "purge", prepare: WriterStatements.prepare(on:)) { connection in
                    try connection.query("WITH purged AS (DELETE FROM rooms WHERE created_at < $1::bigint RETURNING 1) SELECT count(*) FROM purged", [.integer(purge.cutoff.milliseconds)]).int(0, 0)
                })
            } catch {
                results[purge.write] = .failure(StoreFailure.from(error, record: "purge"))
            }
        }
        return .committed(results: results, wrote: !work.isEmpty)
    }

    func finish() {
        connection = nil
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case let failure as StoreFailure: failure.reason
        case let postgres as PostgresError: postgres.message
        default: String(describing: error)
        }
    }

    /// Runs `work` as one transaction, in pipelines; returns each statement's status.
    private func transaction(_ work: [Work]) throws -> [Int32] {
        let live: PostgresConnection
        do {
            if connection?.isUsableAfterIdle != true {
                connection = nil
                let fresh = try PostgresConnection(settings.connectionParameters, answerTimeout: settings.answerTimeout)
                try WriterStatements.prepare(on: fresh)
                connection = fresh
            }
            live = connection!
        } catch let error as PostgresError {
            throw BatchFailed(error: error, mayHaveCommitted: false)
        }

        enum Role {
            case begin, statement(Int), commit
        }
        var statuses: [Int32] = []
        statuses.reserveCapacity(work.count)
        var commitSent = false
        do {
            var start = 0
            while start < work.count {
                let end = min(start + pipelineLength, work.count)
                var statements: [PipelineStatement] = []
                var roles: [Role] = []
                if start == 0 {
                    statements.append(.sql("BEGIN"))
                    roles.append(.begin)
                    // A transaction id even for a batch that changes nothing (a retry finding its rows stored by
                    // a commit whose answer was lost): only a transaction with one waits at COMMIT for the
                    // synchronous standby, and that wait covers everything committed before it.
                    statements.append(.sql("SELECT txid_current()"))
                    roles.append(.begin)
                }
                for index in start..<end {
                    statements.append(work[index].statement.pipelined)
                    roles.append(.statement(index))
                }
                if end == work.count {
                    statements.append(.sql("COMMIT"))
                    roles.append(.commit)
                    commitSent = true
                }
                for (outcome, role) in zip(try live.pipeline(statements), roles) {
                    switch (outcome, role) {
                    case (.rows(let rows), .statement):
                        statuses.append(rows.count > 0 ? Int32(rows.int(0, 0)) : 0)
                    case (.rows(let rows), .commit) where rows.commandTag != "COMMIT":
                        throw PostgresError.client("the transaction ended with \(rows.commandTag) instead of COMMIT", "committing")
                    case (.rows, _), (.skipped, _):
                        continue
                    case (.failed(let error), .statement(let index)) where error.isCausedByItsData:
                        throw StatementFailed(index: index, error: error)
                    case (.failed(let error), _):
                        throw error
                    }
                }
                start = end
            }
        } catch let failure as StatementFailed {
            PostgresRoomStore.rollBack(live)
            throw failure
        } catch let error as PostgresError {
            PostgresRoomStore.rollBack(live)
            throw BatchFailed(error: error, mayHaveCommitted: commitSent && error.connectionLost)
        }
        return statuses
    }

}
