import Foundation
@testable import PostgresStorage
@testable import SQLiteStorage
@testable import StoryCircleCore

/// A database of one backend made by the migrations up to `step` only, for rows as an older StoryCircle
/// wrote them; `open()` opens a store on it (which migrates it to the newest).
struct OldDatabase {
    let backend: Backend
    private let folder: URL?
    private let schema: TestPostgres.Schema?
    private let sqlite: SQLiteDatabase?
    private let connection: PostgresConnection?

    init(_ backend: Backend, at step: Int) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("storycircle-old-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            self.folder = folder
            schema = nil
            connection = nil
            sqlite = try SQLiteDatabase(path: folder.appendingPathComponent("rooms.sqlite").path)
            try Migrations.migrate(sqlite!, to: step, now: 1)
        case .postgres:
            let schema = try TestPostgres.freshSchema()
            self.schema = schema
            folder = nil
            sqlite = nil
            connection = try PostgresConnection(schema.settings.connectionParameters)
            try PostgresMigrations.migrate(connection!, to: step, now: 1)
        }
    }

    /// Runs one statement with no parameters, in the backend's own dialect.
    func execute(_ sql: String) throws {
        if let sqlite { try sqlite.execute(sql) } else { try connection!.query(sql) }
    }

    /// Applies schema step `version` alone and records it, as the migrations would.
    func applyStep(_ version: Int) throws {
        if let sqlite {
            try sqlite.execute(Migrations.steps.first { $0.version == version }!.sql)
        } else {
            try connection!.execute(PostgresMigrations.steps.first { $0.version == version }!.sql)
        }
        try execute("INSERT INTO schema_migrations (version, applied_at) VALUES (\(version), 1)")
    }

    /// The number the query's first row and column holds.
    func count(_ sql: String) throws -> Int {
        if let sqlite { return Int(try sqlite.integer(sql) ?? 0) }
        return try connection!.query(sql).int(0, 0)
    }

    func open() throws -> any RoomLeases {
        switch backend {
        case .sqlite: try SQLiteRoomStore(path: folder!.appendingPathComponent("rooms.sqlite").path)
        case .postgres: try PostgresRoomStore(schema!.settings)
        }
    }

    func remove() {
        if let folder { try? FileManager.default.removeItem(at: folder) }
        schema?.drop()
    }
}
