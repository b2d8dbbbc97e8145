import Foundation
import StoryCircleCore

/// The writer's statements, prepared once per connection, and how a record becomes one of them.
///
/// Every record is one statement that returns a status for the outcomes a batch goes on with:
///
/// - `0` written;
/// - `1` already there, identical: a record written again after a commit whose outcome was unknown;
/// - `3` the lease it was written under is no longer the room's: nothing written (and nothing else of
///   that room in the transaction either, since every one of its statements checks the same row).
///   The room is then blocked like after any failed record.
///
/// A different record under the same key (compared, never silently ignored) raises a unique violation
/// instead (`storycircle_refuse`): the transaction stops there, and the store runs the batch again
/// without that record, so nothing the same room decided after it is stored past the gap. Only a room's
/// creation reports `2` for a code taken by a different room.
///
/// Parameters `$1`–`$3` are always the room, the lease's epoch and its node (both NULL for a write made
/// without a lease); the record's own fields follow. A fenced write locks the room's lease row (`FOR SHARE`)
/// until its transaction ends, so a takeover (which updates that row) waits for the commit, or the write
/// waits for the takeover and then finds the epoch changed: never both.
enum WriterStatements {
    /// A statement ready to send, and how to read its status.
    struct Statement {
        var name: String
        var parameters: [String?]
        var room: String
        var epoch: Int64?
        /// What is written (`RoomRecord.kind`, `room.created`, `probe`), for failures.
        var record: String

        var pipelined: PipelineStatement { .prepared(name, parameters) }

        func outcome(_ status: Int32) -> (any Error)? {
            switch status {
            case 0, 1: nil
            case 2: StoreFailure(.rejected, record: record, reason: "room code \(room) is already taken")
            case 3: RoomLeaseError.lost(room: room, epoch: epoch ?? 0)
            default: PostgresError.client("a statement returned the unknown status \(status)", "writing \(record)")
            }
        }
    }

    // The lease is checked against the time the statement runs (`clock_timestamp()`), not the time its
    // transaction began (`now()`): a node paused inside a transaction begun before its lease lapsed must not
    // find it held when it resumes. `FOR SHARE` then keeps a taker waiting until this transaction ends.
    private static let lease = """
        lease AS (
            SELECT $2::bigint IS NULL OR EXISTS (
                SELECT 1 FROM room_owners
                WHERE room_code = $1::text AND epoch = $2::bigint AND node = $3::text AND expires_at > clock_timestamp()
                FOR SHARE
            ) AS held
        )
        """

    static let definitions: [(name: String, sql: String)] = [
        ("sc_create_room", """
            WITH inserted AS (
                INSERT INTO rooms (code, title, story, settings, teacher_token_hash, dashboard_token_hash, created_at, story_id, class_id, owner_id, school_id)
                VALUES ($1::text, $2::text, $3::json, $4::jsonb, $5::text, $6::text, $7::bigint, $8::text, $9::text, $10::text, $11::text)
                ON CONFLICT (code) DO NOTHING
                RETURNING 1
            )
            SELECT CASE
                WHEN EXISTS (SELECT 1 FROM inserted) THEN 0
                WHEN EXISTS (
                    SELECT 1 FROM rooms WHERE code = $1::text AND teacher_token_hash = $5::text
                    AND dashboard_token_hash = $6::text AND created_at = $7::bigint
                ) THEN 1
                ELSE 2
            END
            """),
        ("sc_player_joined", """
            WITH \(lease), inserted AS (
                INSERT INTO players (room_code, id, nickname, token_hash, joined_at, member_id)
                SELECT $1::text, $4::text, $5::text, $6::text, $7::bigint, $8::text FROM lease WHERE held
                ON CONFLICT (room_code, id) DO NOTHING
                RETURNING 1
            )
            SELECT CASE
                WHEN NOT (SELECT held FROM lease) THEN 3
                WHEN EXISTS (SELECT 1 FROM inserted) THEN 0
                WHEN EXISTS (
                    SELECT 1 FROM players WHERE room_code = $1::text AND id = $4::text
                    AND nickname = $5::text AND token_hash = $6::text AND joined_at = $7::bigint
                    AND member_id IS NOT DISTINCT FROM $8::text
                ) THEN 1
                ELSE storycircle_refuse('player')
            END
            """),
        ("sc_player_left", """
            WITH \(lease), updated AS (
                UPDATE players SET left_at = $5::bigint
                WHERE room_code = $1::text AND id = $4::text AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
        ("sc_player_kicked", """
            WITH \(lease), updated AS (
                UPDATE players SET kicked_at = $5::bigint
                WHERE room_code = $1::text AND id = $4::text AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
        // Blocking keeps the time of an earlier kick, as SQLite's store does.
        ("sc_player_blocked", """
            WITH \(lease), updated AS (
                UPDATE players SET kicked_at = coalesce(kicked_at, $5::bigint), blocked = true
                WHERE room_code = $1::text AND id = $4::text AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
        // A blocked player is never let back in, whatever a record says.
        ("sc_player_readmitted", """
            WITH \(lease), updated AS (
                UPDATE players SET kicked_at = NULL
                WHERE room_code = $1::text AND id = $4::text AND NOT blocked AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
        // The token a released name had is kept, so that it is refused as released; written again after an
        // unknown outcome, the same token is already there.
        ("sc_player_released", """
            WITH \(lease), kept AS (
                INSERT INTO released_tokens (room_code, token_hash, player_id, released_at)
                SELECT room_code, token_hash, id, $5::bigint FROM players
                WHERE room_code = $1::text AND id = $4::text AND (SELECT held FROM lease)
                ON CONFLICT DO NOTHING
                RETURNING 1
            ), updated AS (
                UPDATE players SET released_at = $5::bigint
                WHERE room_code = $1::text AND id = $4::text AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
        ("sc_player_reclaimed", """
            WITH \(lease), updated AS (
                UPDATE players SET released_at = NULL, token_hash = $5::text
                WHERE room_code = $1::text AND id = $4::text AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
        ("sc_answer", """
            WITH \(lease), inserted AS (
                INSERT INTO answers (room_code, player_id, question, option, received_at, elapsed_ms, correct, points)
                SELECT $1::text, $4::text, $5::integer, $6::integer, $7::bigint, $8::integer, $9::boolean, $10::integer
                FROM lease WHERE held
                ON CONFLICT (room_code, player_id, question) DO NOTHING
                RETURNING 1
            )
            SELECT CASE
                WHEN NOT (SELECT held FROM lease) THEN 3
                WHEN EXISTS (SELECT 1 FROM inserted) THEN 0
                WHEN EXISTS (
                    SELECT 1 FROM answers WHERE room_code = $1::text AND player_id = $4::text AND question = $5::integer
                    AND option = $6::integer AND received_at = $7::bigint AND elapsed_ms = $8::integer
                    AND correct = $9::boolean AND points = $10::integer
                ) THEN 1
                ELSE storycircle_refuse('answer')
            END
            """),
        // The room's phase moves only with a transition actually written, so a late repeat of an earlier
        // transition cannot move it back.
        ("sc_phase", """
            WITH \(lease), inserted AS (
                INSERT INTO transitions (room_code, phase, question, skipped, at)
                SELECT $1::text, $4::text, $5::integer, $6::boolean, $7::bigint FROM lease WHERE held
                ON CONFLICT DO NOTHING
                RETURNING 1
            ), moved AS (
                UPDATE rooms SET phase = $4::text
                WHERE code = $1::text AND EXISTS (SELECT 1 FROM inserted)
                RETURNING 1
            )
            SELECT CASE
                WHEN NOT (SELECT held FROM lease) THEN 3
                WHEN EXISTS (SELECT 1 FROM inserted) THEN 0
                ELSE 1
            END
            """),
        ("sc_probe", """
            INSERT INTO store_probe (writer, written_at) VALUES ($1::text, $2::bigint)
            ON CONFLICT (writer) DO UPDATE SET written_at = excluded.written_at
            RETURNING 0
            """),
        // Settings carry their time, so a late repeat of an older update cannot undo a newer one.
        ("sc_room_updated", """
            WITH \(lease), updated AS (
                UPDATE rooms SET settings = $4::jsonb, locked = $5::boolean, settings_at = $6::bigint
                WHERE code = $1::text AND (settings_at IS NULL OR settings_at <= $6::bigint) AND (SELECT held FROM lease)
                RETURNING 1
            )
            SELECT CASE WHEN (SELECT held FROM lease) THEN 0 ELSE 3 END
            """),
    ]

    /// A small real write, to find out whether the database takes writes (`RoomStore.probe`).
    static func probe(key: String, at now: ServerTime) -> Statement {
        Statement(name: "sc_probe", parameters: [key, String(now.milliseconds)], room: "", epoch: nil, record: "probe")
    }

    static func prepare(on connection: PostgresConnection) throws {
        for definition in definitions {
            try connection.prepare(definition.name, definition.sql)
        }
    }

    static func create(_ header: RoomHeader) throws -> Statement {
        let story = String(decoding: try JSONEncoder().encode(header.story.jsonValue()), as: UTF8.self)
        return Statement(
            name: "sc_create_room",
            parameters: try PostgresValue.encode([
                .text(header.code), .text(header.story.title), .text(story), .text(try json(header.settings)),
                .text(header.credentials.teacherTokenHash), .text(header.credentials.dashboardTokenHash), .integer(header.createdAt.milliseconds),
                header.storyID.map(PostgresValue.text) ?? .null, header.classID.map(PostgresValue.text) ?? .null,
                .optional(header.owner?.accountID), .optional(header.owner?.schoolID),
            ]),
            room: header.code, epoch: nil, record: "room.created"
        )
    }

    static func write(_ record: RoomRecord, room code: String, lease: RoomLease?) throws -> Statement {
        let fence: [PostgresValue] = [.text(code), lease.map { .integer($0.epoch) } ?? .null, lease.map { .text($0.node) } ?? .null]
        let (name, fields): (String, [PostgresValue]) = switch record {
        case .playerJoined(let player):
            ("sc_player_joined", [.text(player.id.rawValue), .text(player.nickname), .text(player.tokenHash), .integer(player.joinedAt.milliseconds), player.member.map { .text($0.rawValue) } ?? .null])
        case .playerLeft(let player, let at):
            ("sc_player_left", [.text(player.rawValue), .integer(at.milliseconds)])
        case .playerKicked(let player, let at):
            ("sc_player_kicked", [.text(player.rawValue), .integer(at.milliseconds)])
        case .playerBlocked(let player, let at):
            ("sc_player_blocked", [.text(player.rawValue), .integer(at.milliseconds)])
        case .playerReadmitted(let player, _):
            ("sc_player_readmitted", [.text(player.rawValue)])
        case .playerReleased(let player, let at):
            ("sc_player_released", [.text(player.rawValue), .integer(at.milliseconds)])
        case .playerReclaimed(let player, let tokenHash, _):
            ("sc_player_reclaimed", [.text(player.rawValue), .text(tokenHash)])
        case .answer(let answer):
            ("sc_answer", [
                .text(answer.player.rawValue), .int(answer.question), .int(answer.option), .integer(answer.receivedAt.milliseconds),
                .int(answer.elapsedMs), .bool(answer.correct), .int(answer.points),
            ])
        case .phase(let phase):
            ("sc_phase", [.text(phase.phase.rawValue), .optional(phase.question), .bool(phase.skipped), .integer(phase.at.milliseconds)])
        case .roomUpdated(let settings, let locked, let at):
            ("sc_room_updated", [.text(try json(settings)), .bool(locked), .integer(at.milliseconds)])
        }
        return Statement(name: name, parameters: try PostgresValue.encode(fence + fields), room: code, epoch: lease?.epoch, record: record.kind)
    }

    private static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
