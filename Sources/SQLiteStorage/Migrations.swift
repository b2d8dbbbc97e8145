/// The schema, as a list of steps. A database records the steps it has had in `schema_migrations`;
/// opening it applies the missing ones, in order, each in its own transaction. Never edit a step that has
/// shipped: add a new one.
enum Migrations {
    static let steps: [(version: Int, sql: String)] = [
        (1, """
            CREATE TABLE rooms (
                code TEXT PRIMARY KEY,
                title TEXT NOT NULL,
                story TEXT NOT NULL,
                settings TEXT NOT NULL,
                teacher_token_hash TEXT NOT NULL,
                dashboard_token_hash TEXT NOT NULL,
                locked INTEGER NOT NULL DEFAULT 0,
                phase TEXT NOT NULL DEFAULT 'lobby',
                created_at INTEGER NOT NULL
            );
            CREATE TABLE players (
                room_code TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
                id TEXT NOT NULL,
                nickname TEXT NOT NULL,
                token_hash TEXT NOT NULL,
                joined_at INTEGER NOT NULL,
                kicked_at INTEGER,
                PRIMARY KEY (room_code, id)
            );
            CREATE TABLE answers (
                room_code TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
                player_id TEXT NOT NULL,
                question INTEGER NOT NULL,
                option INTEGER NOT NULL,
                received_at INTEGER NOT NULL,
                elapsed_ms INTEGER NOT NULL,
                correct INTEGER NOT NULL,
                points INTEGER NOT NULL,
                PRIMARY KEY (room_code, player_id, question)
            );
            CREATE TABLE transitions (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                room_code TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
                phase TEXT NOT NULL,
                question INTEGER,
                skipped INTEGER NOT NULL DEFAULT 0,
                at INTEGER NOT NULL
            );
            """),
        // Version 2: when children left (for reports), and an index so restoring many rooms stays fast.
        (2, """
            ALTER TABLE players ADD COLUMN left_at INTEGER;
            CREATE INDEX transitions_by_room ON transitions(room_code, seq);
            CREATE INDEX rooms_by_phase ON rooms(phase);
            """),
        // Version 3: a kicked player can also be blocked (their name and resume token stay refused).
        (3, """
            ALTER TABLE players ADD COLUMN blocked INTEGER NOT NULL DEFAULT 0;
            """),
        // Version 4: one row the server rewrites to find out whether it can write (at start, and while
        // writes are failing, to notice when they work again). `padding` makes the write the size of a
        // good batch of records: on a nearly full disk a one-page write still fits when real ones do not.
        (4, """
            CREATE TABLE store_probe (id INTEGER PRIMARY KEY CHECK (id = 1), written_at INTEGER NOT NULL, padding BLOB);
            """),
        // Version 5: the story library (`StoryLibrary`). `document` is the story in the file format; the
        // other columns are what the list shows, kept beside it so a page of 10,000 stories reads no
        // documents. `story_seeds` remembers which sample stories were ever added, so a deleted one stays
        // deleted. A room remembers the story it was started from, so that story cannot be deleted under it.
        (5, """
            CREATE TABLE stories (
                id TEXT PRIMARY KEY,
                title TEXT NOT NULL,
                voice TEXT NOT NULL,
                questions INTEGER NOT NULL,
                sentences INTEGER NOT NULL,
                document TEXT NOT NULL,
                version INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                updated_by TEXT NOT NULL
            );
            CREATE INDEX stories_by_change ON stories(updated_at DESC, id DESC);
            CREATE TABLE story_seeds (key TEXT PRIMARY KEY, seeded_at INTEGER NOT NULL);
            ALTER TABLE rooms ADD COLUMN story_id TEXT;
            CREATE INDEX rooms_by_story ON rooms(story_id) WHERE story_id IS NOT NULL;
            """),
        // Version 6: the pictures of stories, cleaned, by content hash (`PictureStore`), with a smaller
        // copy for phones when the picture is larger than they need.
        (6, """
            CREATE TABLE pictures (
                id TEXT PRIMARY KEY,
                mime_type TEXT NOT NULL,
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                bytes BLOB NOT NULL,
                phone_mime_type TEXT,
                phone_width INTEGER,
                phone_height INTEGER,
                phone_bytes BLOB,
                created_at INTEGER NOT NULL
            );
            """),
        // Version 7: classes (`ClassBook`). A class's name is unique by its look-alike keys
        // (`class_name_keys`, one row per key). A member taken out of a class keeps its row
        // (`removed_at`), so their past rooms still name them and erasing them later finds them. A room
        // remembers its class, a player the member they are; a released name's old resume tokens are
        // kept (`released_tokens`) so they are refused as released rather than unknown.
        (7, """
            CREATE TABLE classes (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                version INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                changed_at INTEGER NOT NULL
            );
            CREATE TABLE class_name_keys (
                key TEXT PRIMARY KEY,
                class_id TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE
            );
            CREATE TABLE class_members (
                id TEXT PRIMARY KEY,
                class_id TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                avatar TEXT NOT NULL,
                position INTEGER NOT NULL,
                removed_at INTEGER
            );
            CREATE INDEX class_members_by_class ON class_members(class_id, position);
            ALTER TABLE rooms ADD COLUMN class_id TEXT;
            CREATE INDEX rooms_by_class ON rooms(class_id) WHERE class_id IS NOT NULL;
            ALTER TABLE players ADD COLUMN member_id TEXT;
            ALTER TABLE players ADD COLUMN released_at INTEGER;
            CREATE INDEX players_by_member ON players(member_id) WHERE member_id IS NOT NULL;
            CREATE TABLE released_tokens (
                room_code TEXT NOT NULL REFERENCES rooms(code) ON DELETE CASCADE,
                token_hash TEXT NOT NULL,
                player_id TEXT NOT NULL,
                released_at INTEGER NOT NULL,
                PRIMARY KEY (room_code, token_hash)
            );
            """),
        // Version 8: a class's rule for speed points in its rooms; off for the classes stored before.
        (8, """
            ALTER TABLE classes ADD COLUMN speed_points INTEGER NOT NULL DEFAULT 0;
            """),
        // Version 9: every class, room, story and picture has an owner (an account) and a school
        // (`Owner`). What was stored before stays unowned (NULL) until an administrator names its owner
        // (`adoptUnowned`). A story can be shared with its school. No foreign keys to accounts: a class
        // outlives its teacher's account, and its school administrator still sees it.
        (9, """
            ALTER TABLE classes ADD COLUMN owner_id TEXT;
            ALTER TABLE classes ADD COLUMN school_id TEXT;
            ALTER TABLE rooms ADD COLUMN owner_id TEXT;
            ALTER TABLE rooms ADD COLUMN school_id TEXT;
            ALTER TABLE stories ADD COLUMN owner_id TEXT;
            ALTER TABLE stories ADD COLUMN school_id TEXT;
            ALTER TABLE stories ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE pictures ADD COLUMN owner_id TEXT;
            ALTER TABLE pictures ADD COLUMN school_id TEXT;
            CREATE INDEX classes_by_owner ON classes(owner_id, name);
            CREATE INDEX classes_by_school ON classes(school_id, name);
            CREATE INDEX rooms_by_owner ON rooms(owner_id, created_at);
            CREATE INDEX rooms_by_school ON rooms(school_id, created_at);
            CREATE INDEX stories_by_owner ON stories(owner_id, updated_at DESC, id DESC);
            CREATE INDEX stories_by_school ON stories(school_id, updated_at DESC, id DESC);
            """),
        // Version 10: the audit trail (`AuditLog`), append-only: a trigger refuses every UPDATE, and rows
        // leave only by the retention rule (`SQLiteRoomStore+Audit`). `seq` is never reused (AUTOINCREMENT),
        // so a page's cursor stays valid while older rows are pruned.
        (10, """
            CREATE TABLE audit_rows (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                at INTEGER NOT NULL,
                actor_kind TEXT NOT NULL,
                actor_account TEXT,
                actor_login TEXT,
                actor_role TEXT,
                actor_room TEXT,
                action TEXT NOT NULL,
                target TEXT NOT NULL,
                school_id TEXT,
                address TEXT NOT NULL,
                detail TEXT NOT NULL
            );
            CREATE INDEX audit_rows_by_time ON audit_rows(at);
            CREATE TRIGGER audit_rows_never_change BEFORE UPDATE ON audit_rows
            BEGIN
                SELECT RAISE(ABORT, 'audit rows are never changed');
            END;
            """),
        // Version 11: adults' accounts (`AccountBook`). A school's name is unique case-folded (`name_key`),
        // a login is stored normalised and unique. A session is kept by the SHA-256 of its cookie, a setup
        // link by the SHA-256 of its code: a copy of the database signs nobody in.
        (11, """
            CREATE TABLE schools (
                id TEXT PRIMARY KEY,
                name TEXT NOT NULL,
                name_key TEXT NOT NULL UNIQUE,
                version INTEGER NOT NULL,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE accounts (
                id TEXT PRIMARY KEY,
                login TEXT NOT NULL UNIQUE,
                display_name TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('teacher', 'school_admin', 'district_admin')),
                school_id TEXT REFERENCES schools(id),
                disabled INTEGER NOT NULL DEFAULT 0,
                version INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                password_hash TEXT
            );
            CREATE INDEX accounts_by_school ON accounts(school_id, login);
            CREATE TABLE sessions (
                token_hash TEXT PRIMARY KEY,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                csrf_token TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                method TEXT NOT NULL
            );
            CREATE INDEX sessions_by_account ON sessions(account_id);
            CREATE INDEX sessions_by_expiry ON sessions(expires_at);
            CREATE TABLE passkeys (
                credential_id TEXT PRIMARY KEY,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                public_key BLOB NOT NULL,
                algorithm INTEGER NOT NULL,
                sign_count INTEGER NOT NULL,
                name TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER
            );
            CREATE INDEX passkeys_by_account ON passkeys(account_id);
            CREATE TABLE account_setup_codes (
                code_hash TEXT PRIMARY KEY,
                account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
                expires_at INTEGER NOT NULL
            );
            CREATE INDEX account_setup_codes_by_account ON account_setup_codes(account_id);
            """),
        // Version 12: a class's name is unique among its owner's classes (`scope`, the owner's account id),
        // not across the whole store: two teachers may both have a "4B". An unowned class has scope '' and
        // keeps the old rule (its name is unique among all classes), so adopting it never meets a name its
        // new owner already has. SQLite cannot change a primary key: the table is made again with its rows.
        (12, """
            CREATE TABLE class_name_keys_by_owner (
                scope TEXT NOT NULL,
                key TEXT NOT NULL,
                class_id TEXT NOT NULL REFERENCES classes(id) ON DELETE CASCADE,
                PRIMARY KEY (scope, key)
            );
            INSERT INTO class_name_keys_by_owner (scope, key, class_id)
                SELECT coalesce(c.owner_id, ''), k.key, k.class_id FROM class_name_keys k JOIN classes c ON c.id = k.class_id;
            DROP TABLE class_name_keys;
            ALTER TABLE class_name_keys_by_owner RENAME TO class_name_keys;
            CREATE INDEX class_name_keys_by_class ON class_name_keys(class_id);
            CREATE INDEX class_name_keys_by_key ON class_name_keys(key);
            """),
        // Version 13: a school's own retention rules (`RetentionBook`), one row per kind it chose; a kind
        // without a row keeps the server's configured default.
        (13, """
            CREATE TABLE school_retention (
                school_id TEXT NOT NULL REFERENCES schools(id) ON DELETE CASCADE,
                kind TEXT NOT NULL,
                days INTEGER NOT NULL,
                PRIMARY KEY (school_id, kind)
            );
            """),
        // Version 14: what each OneRoster record became here (`RosterBook`), so a re-import changes the
        // school, account, class or member it made instead of making another. A link names a child by their
        // school's own identifier: the triggers delete it with what it names, in the same transaction,
        // whichever erasure, deletion or retention purge removes that (a class's cascade included).
        (14, """
            CREATE TABLE roster_links (
                kind TEXT NOT NULL,
                sourced_id TEXT NOT NULL,
                local_id TEXT NOT NULL,
                linked_at INTEGER NOT NULL,
                PRIMARY KEY (kind, sourced_id)
            );
            CREATE INDEX roster_links_by_local ON roster_links(local_id);
            CREATE TRIGGER roster_links_leave_with_member AFTER DELETE ON class_members BEGIN
                DELETE FROM roster_links WHERE kind IN ('member', 'enrollment') AND local_id = OLD.id;
            END;
            CREATE TRIGGER roster_links_leave_with_class BEFORE DELETE ON classes BEGIN
                DELETE FROM roster_links WHERE (kind = 'class' AND local_id = OLD.id)
                    OR (kind IN ('member', 'enrollment') AND local_id IN (SELECT id FROM class_members WHERE class_id = OLD.id));
            END;
            CREATE TRIGGER roster_links_leave_with_account AFTER DELETE ON accounts BEGIN
                DELETE FROM roster_links WHERE kind = 'teacher' AND local_id = OLD.id;
            END;
            CREATE TRIGGER roster_links_leave_with_school AFTER DELETE ON schools BEGIN
                DELETE FROM roster_links WHERE kind = 'school' AND local_id = OLD.id;
            END;
            """),
    ]

    static var latest: Int { steps.last?.version ?? 0 }

    /// Brings `database` up to `target` (the latest by default); returns the versions applied.
    @discardableResult
    static func migrate(_ database: SQLiteDatabase, to target: Int = latest, now: Int64) throws -> [Int] {
        try database.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)")
        let current = try database.integer("SELECT coalesce(max(version), 0) FROM schema_migrations") ?? 0
        guard current <= Int64(latest) else {
            throw SQLiteError(code: 0, message: "the database is at schema version \(current), newer than this StoryCircle (\(latest)); upgrade StoryCircle", context: "migrating \(database.path)")
        }
        // The steps it has not had, not only those after its newest: a step recorded as missing (a test
        // taking a database back before it) is applied again, whatever came after it.
        let had = try database.prepare("SELECT version FROM schema_migrations")
        try had.bind([])
        var recorded: Set<Int> = []
        while try had.step() { recorded.insert(had.int(0)) }
        var applied: [Int] = []
        for step in steps where !recorded.contains(step.version) && step.version <= target {
            try database.transaction {
                try database.execute(step.sql)
                try database.prepare("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)").run(.int(step.version), .integer(now))
            }
            applied.append(step.version)
        }
        return applied
    }
}
