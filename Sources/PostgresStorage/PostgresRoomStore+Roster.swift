import Foundation
import RoomStoreSupport
import StoryCircleCore

/// A roster import in PostgreSQL: the state read from one snapshot, the plan carried out in one
/// transaction on the library's connection (the accounts' and classes' own checks and locks, so an import
/// and a teacher saving a class on another node take turns).
extension PostgresRoomStore: RosterBook {
    public func rosterState() async throws -> RosterState {
        try await read { connection in
            var state = RosterState()
            let links = try connection.query("SELECT kind, sourced_id, local_id FROM roster_links ORDER BY kind, sourced_id")
            for row in 0..<links.count {
                guard let kind = RosterKind(rawValue: links.text(row, 0)) else { continue }
                state.links.append(RosterLink(kind: kind, sourcedID: links.text(row, 1), localID: links.text(row, 2)))
            }
            let schools = try connection.query("SELECT \(Self.schoolColumns) FROM schools ORDER BY name_key, id")
            state.schools = (0..<schools.count).map { Self.school(schools, $0) }
            let accounts = try connection.query("SELECT \(Self.accountColumns) FROM accounts ORDER BY login")
            state.accounts = (0..<accounts.count).map { Self.account(accounts, $0) }
            for link in state.links where link.kind == .schoolClass {
                if let schoolClass = try Self.loadClass(link.localID, from: connection) { state.classes.append(schoolClass) }
            }
            return state
        }
    }

    public func applyRoster(_ plan: RosterPlan) async throws {
        let now = Self.now()
        // Another node's import or a teacher's change meeting this one on a unique index: plan again.
        try await libraryChange("roster", taken: RosterBookError.changed(id: "")) { connection in
            do {
                try Self.apply(plan, at: now, on: connection)
            } catch {
                throw RosterBookError.from(error)
            }
        }
    }

    private static func apply(_ plan: RosterPlan, at now: ServerTime, on connection: PostgresConnection) throws {
        for school in plan.newSchools { try insertSchool(name: school.name, id: school.id, at: now, on: connection) }
        for school in plan.renamedSchools {
            let key = AccountKeys.schoolName(school.name)
            guard try connection.query("SELECT 1 FROM schools WHERE name_key = $1::text AND id <> $2::text", [.text(key), .text(school.id)]).count == 0 else {
                throw AccountBookError.nameTaken(name: school.name)
            }
            try connection.query(
                "UPDATE schools SET name = $1::text, name_key = $2::text, version = version + 1 WHERE id = $3::text", [.text(school.name), .text(key), .text(school.id)])
        }
        for draft in plan.newAccounts { try insertAccount(draft, at: now, on: connection) }
        for update in plan.accountUpdates { try changeAccount(update.id, update.change, basedOn: update.version, on: connection) }
        for write in plan.classWrites {
            let scope = write.owner?.accountID ?? ""
            let owner: [PostgresValue] = [.optional(write.owner?.accountID), .optional(write.owner?.schoolID)]
            if write.version == 0 {
                try claimName(write.draft, for: write.id, scope: scope, on: connection)
                try connection.query(
                    """
                    INSERT INTO classes (id, name, version, created_at, changed_at, speed_points, owner_id, school_id)
                    VALUES ($1::text, $2::text, 1, $3::bigint, $3::bigint, false, $4::text, $5::text)
                    """,
                    [.text(write.id), .text(write.draft.name), .integer(now.milliseconds)] + owner
                )
            } else {
                guard try connection.query("SELECT 1 FROM classes WHERE id = $1::text FOR UPDATE", [.text(write.id)]).count == 1,
                      let current = try loadClass(write.id, from: connection)
                else { throw ClassBookError.notFound(id: write.id) }
                guard current.version == write.version else { throw ClassBookError.conflict(current: current) }
                try claimName(write.draft, for: write.id, scope: scope, on: connection)
                try connection.query(
                    "UPDATE classes SET name = $1::text, version = version + 1, changed_at = $2::bigint, owner_id = $4::text, school_id = $5::text WHERE id = $3::text",
                    [.text(write.draft.name), .integer(now.milliseconds), .text(write.id)] + owner
                )
                try connection.query("DELETE FROM class_name_keys WHERE class_id = $1::text", [.text(write.id)])
            }
            try insertKeys(write.draft, for: write.id, scope: scope, on: connection)
            try writeMembers(write.draft, for: write.id, at: now, drawn: true, on: connection)
        }
        for link in plan.unlinks {
            try connection.query(
                "DELETE FROM roster_links WHERE kind = $1::text AND sourced_id = $2::text AND local_id = $3::text",
                [.text(link.kind.rawValue), .text(link.sourcedID), .text(link.localID)])
        }
        for link in plan.links {
            try connection.query(
                """
                INSERT INTO roster_links (kind, sourced_id, local_id, linked_at) VALUES ($1::text, $2::text, $3::text, $4::bigint)
                ON CONFLICT (kind, sourced_id) DO UPDATE SET local_id = excluded.local_id, linked_at = excluded.linked_at
                """,
                [.text(link.kind.rawValue), .text(link.sourcedID), .text(link.localID), .integer(now.milliseconds)])
        }
    }
}
