/// The PostgreSQL schema, as a list of steps (its own numbering: the SQLite file has its own list). A
/// database records the steps it has had in `schema_migrations`; opening it applies the missing ones, all
/// in one transaction (PostgreSQL's DDL is transactional), and refuses a database newer than this code.
/// Never edit a step that has shipped: add a new one.
///
/// Differences from the SQLite schema, and why:
/// - `seq` identity columns on players and answers keep their order of arrival (SQLite has `rowid`).
/// - A transition is unique by its content, so a record written again after a commit whose outcome was
///   unknown is recognised, not duplicated (two identical transitions in the same millisecond are one).
/// - `settings_at` orders settings updates, so a late retry of an older one cannot undo a newer one.
/// - `storycircle_refuse` lets a statement that finds a different record under its key fail like a
///   constraint, so its transaction goes no further (see `WriterStatements`).
/// - `store_probe` takes the small real writes that tell whether the database can be written, one row per
///   store so that nodes' probes never wait for each other.
/// - `room_owners` holds the leases; epochs come from a sequence so they are never reused, even for a
///   room deleted and created again. Its holder also keeps an advisory lock per lease on its session
///   (`locked_on`), so a room whose holder's process died can be taken before the expiry.
enum PostgresMigrations {
    static let steps: [(version: Int, sql: StaticString)] = [
        (1, """
            CREATE TABLE rooms (
                code text PRIMARY KEY,
                title text NOT NULL,
                story json NOT NULL,
                settings jsonb NOT NULL,
                settings_at bigint,
                teacher_token_hash text NOT NULL,
                dashboard_token_hash text NOT NULL,
                locked boolean NOT NULL DEFAULT false,
                phase text NOT NULL DEFAULT 'lobby',
                created_at bigint NOT NULL
            );
            CREATE INDEX rooms_by_phase ON rooms (phase);
            CREATE INDEX rooms_by_creation ON rooms (created_at);
            CREATE TABLE players (
                room_code text NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
                id text NOT NULL,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                nickname text NOT NULL,
                token_hash text NOT NULL,
                joined_at bigint NOT NULL,
                left_at bigint,
                kicked_at bigint,
                PRIMARY KEY (room_code, id)
            );
            CREATE TABLE answers (
                room_code text NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
                player_id text NOT NULL,
                question integer NOT NULL,
                seq bigint GENERATED ALWAYS AS IDENTITY,
                option integer NOT NULL,
                received_at bigint NOT NULL,
                elapsed_ms integer NOT NULL,
                correct boolean NOT NULL,
                points integer NOT NULL,
                PRIMARY KEY (room_code, player_id, question)
            );
            CREATE TABLE transitions (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                room_code text NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
                phase text NOT NULL,
                question integer,
                skipped boolean NOT NULL DEFAULT false,
                at bigint NOT NULL
            );
            CREATE INDEX transitions_by_room ON transitions (room_code, seq);
            CREATE UNIQUE INDEX transitions_once ON transitions (room_code, at, phase, coalesce(question, -1), skipped);
            CREATE FUNCTION storycircle_refuse(what text) RETURNS integer LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'a different % is already stored under the same key', what USING ERRCODE = 'unique_violation';
            END
            $$;
            CREATE TABLE store_probe (
                writer text PRIMARY KEY,
                written_at bigint NOT NULL
            );
            CREATE SEQUENCE room_lease_epochs;
            CREATE TABLE room_owners (
                room_code text PRIMARY KEY REFERENCES rooms (code) ON DELETE CASCADE,
                node text NOT NULL,
                epoch bigint NOT NULL,
                expires_at timestamptz NOT NULL
            );
            """),
        // Step 2: a kicked player can also be blocked (their name and resume token stay refused).
        (2, """
            ALTER TABLE players ADD COLUMN blocked boolean NOT NULL DEFAULT false;
            """),
        // Step 3: a node refused a room records that it wants it, so the holder hands the room over (a node
        // that came back gets its rooms again while their classes are still connected).
        (3, """
            ALTER TABLE room_owners ADD COLUMN wanted_by text, ADD COLUMN wanted_at timestamptz;
            """),
        // Step 4: the server run (postmaster start) on which the holder's session took the lease's advisory
        // lock: only then does a free lock mean the holder's process is gone (`PostgresRoomStore+Leases`).
        (4, """
            ALTER TABLE room_owners ADD COLUMN locked_on timestamptz;
            """),
        // Step 5: the story library (`StoryLibrary`), as in SQLite's step 5: the list's columns beside the
        // document, the sample stories ever seeded, and the story a room was started from.
        (5, """
            CREATE TABLE stories (
                id text PRIMARY KEY,
                title text NOT NULL,
                voice text NOT NULL,
                questions integer NOT NULL,
                sentences integer NOT NULL,
                document json NOT NULL,
                version integer NOT NULL,
                created_at bigint NOT NULL,
                updated_at bigint NOT NULL,
                updated_by text NOT NULL
            );
            CREATE INDEX stories_by_change ON stories (updated_at DESC, id DESC);
            CREATE TABLE story_seeds (key text PRIMARY KEY, seeded_at bigint NOT NULL);
            ALTER TABLE rooms ADD COLUMN story_id text;
            CREATE INDEX rooms_by_story ON rooms (story_id) WHERE story_id IS NOT NULL;
            """),
        // Step 6: the pictures of stories, cleaned, by content hash (`PictureStore`), with a smaller copy for
        // phones when the picture is larger than they need.
        (6, """
            CREATE TABLE pictures (
                id text PRIMARY KEY,
                mime_type text NOT NULL,
                width integer NOT NULL,
                height integer NOT NULL,
                bytes bytea NOT NULL,
                phone_mime_type text,
                phone_width integer,
                phone_height integer,
                phone_bytes bytea,
                created_at bigint NOT NULL
            );
            """),
        // Step 7: classes (`ClassBook`), as in SQLite's step 7: names unique by their look-alike keys, members
        // kept after they leave the class (`removed_at`), a room's class, a player's member, and the resume
        // tokens of released names.
        (7, """
            CREATE TABLE classes (
                id text PRIMARY KEY,
                name text NOT NULL,
                version integer NOT NULL,
                created_at bigint NOT NULL,
                changed_at bigint NOT NULL
            );
            CREATE TABLE class_name_keys (
                key text PRIMARY KEY,
                class_id text NOT NULL REFERENCES classes (id) ON DELETE CASCADE
            );
            CREATE TABLE class_members (
                id text PRIMARY KEY,
                class_id text NOT NULL REFERENCES classes (id) ON DELETE CASCADE,
                name text NOT NULL,
                avatar text NOT NULL,
                position integer NOT NULL,
                removed_at bigint
            );
            CREATE INDEX class_members_by_class ON class_members (class_id, position);
            ALTER TABLE rooms ADD COLUMN class_id text;
            CREATE INDEX rooms_by_class ON rooms (class_id) WHERE class_id IS NOT NULL;
            ALTER TABLE players ADD COLUMN member_id text;
            ALTER TABLE players ADD COLUMN released_at bigint;
            CREATE INDEX players_by_member ON players (member_id) WHERE member_id IS NOT NULL;
            CREATE TABLE released_tokens (
                room_code text NOT NULL REFERENCES rooms (code) ON DELETE CASCADE,
                token_hash text NOT NULL,
                player_id text NOT NULL,
                released_at bigint NOT NULL,
                PRIMARY KEY (room_code, token_hash)
            );
            """),
        // Version 8: a class's rule for speed points in its rooms; off for the classes stored before.
        (8, """
            ALTER TABLE classes ADD COLUMN speed_points boolean NOT NULL DEFAULT false;
            """),
        // Version 9: owners and schools, as in SQLite's step 9: existing rows stay unowned (NULL) until an
        // administrator names their owner; a story can be shared with its school.
        (9, """
            ALTER TABLE classes ADD COLUMN owner_id text, ADD COLUMN school_id text;
            ALTER TABLE rooms ADD COLUMN owner_id text, ADD COLUMN school_id text;
            ALTER TABLE stories ADD COLUMN owner_id text, ADD COLUMN school_id text, ADD COLUMN shared boolean NOT NULL DEFAULT false;
            ALTER TABLE pictures ADD COLUMN owner_id text, ADD COLUMN school_id text;
            CREATE INDEX classes_by_owner ON classes (owner_id, name);
            CREATE INDEX classes_by_school ON classes (school_id, name);
            CREATE INDEX rooms_by_owner ON rooms (owner_id, created_at);
            CREATE INDEX rooms_by_school ON rooms (school_id, created_at);
            CREATE INDEX stories_by_owner ON stories (owner_id, updated_at DESC, id DESC);
            CREATE INDEX stories_by_school ON stories (school_id, updated_at DESC, id DESC);
            """),
        // Step 10: the audit trail (`AuditLog`), append-only. Triggers refuse every UPDATE and TRUNCATE, and a
        // DELETE of any row the retention rule has not let go: `PostgresRoomStore+Audit.prune` names its
        // cutoff in the transaction (`storycircle.audit_prune_before`), and only rows older than it may go.
        (10, """
            CREATE TABLE audit_rows (
                seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                at bigint NOT NULL,
                actor_kind text NOT NULL,
                actor_account text,
                actor_login text,
                actor_role text,
                actor_room text,
                action text NOT NULL,
                target text NOT NULL,
                school_id text,
                address text NOT NULL,
                detail text NOT NULL
            );
            CREATE INDEX audit_rows_by_time ON audit_rows (at);
            CREATE FUNCTION storycircle_audit_guard() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'DELETE' THEN
                    IF OLD.at < coalesce(nullif(current_setting('storycircle.audit_prune_before', true), '')::bigint, -1) THEN
                        RETURN OLD;
                    END IF;
                END IF;
                RAISE EXCEPTION 'audit rows are never changed, and leave only by the retention rule' USING ERRCODE = 'insufficient_privilege';
            END
            $$;
            CREATE TRIGGER audit_rows_append_only BEFORE UPDATE OR DELETE ON audit_rows
                FOR EACH ROW EXECUTE FUNCTION storycircle_audit_guard();
            CREATE TRIGGER audit_rows_no_truncate BEFORE TRUNCATE ON audit_rows
                FOR EACH STATEMENT EXECUTE FUNCTION storycircle_audit_guard();
            """),
        // Version 11: adults' accounts (`AccountBook`), as in SQLite's step 11: schools unique by their case-folded
        // name, logins stored normalised and unique, sessions and setup codes kept by the SHA-256 of their
        // secret, passkeys by credential id. Two nodes creating one login at once meet on its unique index.
        (11, """
            CREATE TABLE schools (
                id text PRIMARY KEY,
                name text NOT NULL,
                name_key text NOT NULL CONSTRAINT schools_name_key UNIQUE,
                version integer NOT NULL,
                created_at bigint NOT NULL
            );
            CREATE TABLE accounts (
                id text PRIMARY KEY,
                login text NOT NULL CONSTRAINT accounts_login_key UNIQUE,
                display_name text NOT NULL,
                role text NOT NULL CHECK (role IN ('teacher', 'school_admin', 'district_admin')),
                school_id text REFERENCES schools (id),
                disabled boolean NOT NULL DEFAULT false,
                version integer NOT NULL,
                created_at bigint NOT NULL,
                password_hash text
            );
            CREATE INDEX accounts_by_school ON accounts (school_id, login);
            CREATE TABLE sessions (
                token_hash text PRIMARY KEY,
                account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                csrf_token text NOT NULL,
                created_at bigint NOT NULL,
                expires_at bigint NOT NULL,
                method text NOT NULL
            );
            CREATE INDEX sessions_by_account ON sessions (account_id);
            CREATE INDEX sessions_by_expiry ON sessions (expires_at);
            CREATE TABLE passkeys (
                credential_id text CONSTRAINT passkeys_pkey PRIMARY KEY,
                account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                public_key bytea NOT NULL,
                algorithm integer NOT NULL,
                sign_count bigint NOT NULL,
                name text NOT NULL,
                created_at bigint NOT NULL,
                last_used_at bigint
            );
            CREATE INDEX passkeys_by_account ON passkeys (account_id);
            CREATE TABLE account_setup_codes (
                code_hash text PRIMARY KEY,
                account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
                expires_at bigint NOT NULL
            );
            CREATE INDEX account_setup_codes_by_account ON account_setup_codes (account_id);
            """),
        // Step 12: a class's name is unique among its owner's classes, as in SQLite's step 12: `scope` is the
        // owner's account id, '' for an unowned class (whose name stays unique among all classes).
        (12, """
            ALTER TABLE class_name_keys ADD COLUMN scope text NOT NULL DEFAULT '';
            UPDATE class_name_keys k SET scope = c.owner_id FROM classes c WHERE c.id = k.class_id AND c.owner_id IS NOT NULL;
            ALTER TABLE class_name_keys ALTER COLUMN scope DROP DEFAULT;
            ALTER TABLE class_name_keys DROP CONSTRAINT class_name_keys_pkey;
            ALTER TABLE class_name_keys ADD CONSTRAINT class_name_keys_pkey PRIMARY KEY (scope, key);
            CREATE INDEX class_name_keys_by_class ON class_name_keys (class_id);
            CREATE INDEX class_name_keys_by_key ON class_name_keys (key);
            """),
        // Step 13: a school's own retention rules (`RetentionBook`), as in SQLite's step 13.
        (13, """
            CREATE TABLE school_retention (
                school_id text NOT NULL REFERENCES schools (id) ON DELETE CASCADE,
                kind text NOT NULL,
                days integer NOT NULL,
                PRIMARY KEY (school_id, kind)
            );
            """),
        // Step 14: what each OneRoster record became here, as in SQLite's step 14: a link leaves in the same
        // transaction as the member, class, account or school it names, whichever path removes that.
        (14, """
            CREATE TABLE roster_links (
                kind text NOT NULL,
                sourced_id text NOT NULL,
                local_id text NOT NULL,
                linked_at bigint NOT NULL,
                PRIMARY KEY (kind, sourced_id)
            );
            CREATE INDEX roster_links_by_local ON roster_links (local_id);
            CREATE FUNCTION storycircle_roster_links_leave() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_TABLE_NAME = 'classes' THEN
                    DELETE FROM roster_links WHERE (kind = 'class' AND local_id = OLD.id)
                        OR (kind IN ('member', 'enrollment') AND local_id IN (SELECT id FROM class_members WHERE class_id = OLD.id));
                ELSE
                    DELETE FROM roster_links WHERE kind = ANY (TG_ARGV) AND local_id = OLD.id;
                END IF;
                RETURN OLD;
            END
            $$;
            CREATE TRIGGER roster_links_leave_with_member AFTER DELETE ON class_members
                FOR EACH ROW EXECUTE FUNCTION storycircle_roster_links_leave('member', 'enrollment');
            CREATE TRIGGER roster_links_leave_with_class BEFORE DELETE ON classes
                FOR EACH ROW EXECUTE FUNCTION storycircle_roster_links_leave();
            CREATE TRIGGER roster_links_leave_with_account AFTER DELETE ON accounts
                FOR EACH ROW EXECUTE FUNCTION storycircle_roster_links_leave('teacher');
            CREATE TRIGGER roster_links_leave_with_school AFTER DELETE ON schools
                FOR EACH ROW EXECUTE FUNCTION storycircle_roster_links_leave('school');
            """),
    ]

    static var latest: Int { steps.last?.version ?? 0 }

    /// Brings the database up to `target` (the latest by default); returns the versions applied. Nodes
    /// starting together take turns: the first migrates, the others find it done.
    @discardableResult
    static func migrate(_ connection: PostgresConnection, to target: Int = latest, now: Int64) throws -> [Int] {
        try connection.execute("BEGIN")
        do {
            // Serialises concurrent migrations of this schema (the key is per schema, so test schemas in one
            // database do not wait for each other).
            try connection.query("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.storycircle.schema_migrations'))")
            try connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, applied_at bigint NOT NULL)")
            let current = try connection.query("SELECT coalesce(max(version), 0) FROM schema_migrations").int(0, 0)
            guard current <= latest else {
                throw PostgresError.client("the database is at schema version \(current), newer than this StoryCircle (\(latest)); upgrade StoryCircle", "migrating")
            }
            // The steps it has not had, not only those after its newest (as in SQLite's `Migrations`).
            let had = try connection.query("SELECT version FROM schema_migrations")
            let recorded = Set((0..<had.count).map { had.int($0, 0) })
            var applied: [Int] = []
            for step in steps where !recorded.contains(step.version) && step.version <= target {
                try connection.execute(step.sql)
                try connection.query("INSERT INTO schema_migrations (version, applied_at) VALUES ($1::integer, $2::bigint)", [.int(step.version), .integer(now)])
                applied.append(step.version)
            }
            try connection.execute("COMMIT")
            return applied
        } catch {
            if connection.isUsable { try? connection.execute("ROLLBACK") }
            throw error
        }
    }
}
