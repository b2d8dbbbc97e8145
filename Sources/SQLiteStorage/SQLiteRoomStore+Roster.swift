import Foundation
import RoomStoreSupport
import StoryCircleCore

/// A roster import in SQLite: the state read in one read transaction, the plan carried out in one turn of
/// the writer (one transaction), so an import is all there or not at all.
extension SQLiteRoomStore: RosterBook {
    public func rosterState() async throws -> RosterState {
        try await read { database in
            var state = RosterState()
            let links = try database.prepare("SELECT kind, sourced_id, local_id FROM roster_links ORDER BY kind, sourced_id")
            try links.bind([])
            while try links.step() {
                guard let kind = RosterKind(rawValue: links.text(0)) else { continue }
                state.links.append(RosterLink(kind: kind, sourcedID: links.text(1), localID: links.text(2)))
            }
            let schools = try database.prepare("SELECT id, name, created_at, version FROM schools ORDER BY name_key, id")
            try schools.bind([])
            while try schools.step() { state.schools.append(Self.school(schools)) }
            let accounts = try database.prepare("SELECT \(Self.accountColumns) FROM accounts ORDER BY login")
            try accounts.bind([])
            while try accounts.step() { state.accounts.append(Self.account(accounts)) }
            for link in state.links where link.kind == .schoolClass {
                if let schoolClass = try Self.loadClass(link.localID, from: database) { state.classes.append(schoolClass) }
            }
            return state
        }
    }

    public func applyRoster(_ plan: RosterPlan) async throws {
        let now = Self.now()
        try await writerChange("roster") { database in
            do {
                try Self.apply(plan, at: now, in: database)
            } catch {
                throw RosterBookError.from(error)
            }
        }
    }

    private static func apply(_ plan: RosterPlan, at now: ServerTime, in database: SQLiteDatabase) throws {
        for school in plan.newSchools { try insertSchool(name: school.name, id: school.id, at: now, in: database) }
        for school in plan.renamedSchools {
            let key = AccountKeys.schoolName(school.name)
            guard try database.integer("SELECT 1 FROM schools WHERE name_key = ? AND id <> ?", .text(key), .text(school.id)) == nil else {
                throw AccountBookError.nameTaken(name: school.name)
            }
            try database.prepare("UPDATE schools SET name = ?, name_key = ?, version = version + 1 WHERE id = ?").run(.text(school.name), .text(key), .text(school.id))
        }
        for draft in plan.newAccounts { try insertAccount(draft, at: now, in: database) }
        for update in plan.accountUpdates { try changeAccount(update.id, update.change, basedOn: update.version, in: database) }
        for write in plan.classWrites {
            let scope = write.owner?.accountID ?? ""
            if write.version == 0 {
                try claimName(write.draft, for: write.id, scope: scope, in: database)
                try database.prepare("INSERT INTO classes (id, name, version, created_at, changed_at, speed_points, owner_id, school_id) VALUES (?, ?, 1, ?, ?, 0, ?, ?)")
                    .run(.text(write.id), .text(write.draft.name), .integer(now.milliseconds), .integer(now.milliseconds), .optional(write.owner?.accountID), .optional(write.owner?.schoolID))
            } else {
                guard let current = try loadClass(write.id, from: database) else { throw ClassBookError.notFound(id: write.id) }
                guard current.version == write.version else { throw ClassBookError.conflict(current: current) }
                try claimName(write.draft, for: write.id, scope: scope, in: database)
                try database.prepare("UPDATE classes SET name = ?, version = version + 1, changed_at = ?, owner_id = ?, school_id = ? WHERE id = ?")
                    .run(.text(write.draft.name), .integer(now.milliseconds), .optional(write.owner?.accountID), .optional(write.owner?.schoolID), .text(write.id))
                try database.prepare("DELETE FROM class_name_keys WHERE class_id = ?").run(.text(write.id))
            }
            try insertKeys(write.draft, for: write.id, scope: scope, in: database)
            try writeMembers(write.draft, for: write.id, at: now, drawn: true, in: database)
        }
        for link in plan.unlinks {
            try database.prepare("DELETE FROM roster_links WHERE kind = ? AND sourced_id = ? AND local_id = ?").run(.text(link.kind.rawValue), .text(link.sourcedID), .text(link.localID))
        }
        for link in plan.links {
            try database.prepare("INSERT OR REPLACE INTO roster_links (kind, sourced_id, local_id, linked_at) VALUES (?, ?, ?, ?)")
                .run(.text(link.kind.rawValue), .text(link.sourcedID), .text(link.localID), .integer(now.milliseconds))
        }
    }
}
