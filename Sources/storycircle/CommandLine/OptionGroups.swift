import Foundation
import StoryCircleCore
import StoryCircleApp
import StoryCircleServer
import LocalCertificates

/// `--config`, `--port`, `--data`, `--database`: where `serve` and `start` keep things and listen.
struct ServerOptions {
    static let config = CommandSpec.Option(long: "config", valueName: "file", help: "The configuration file.", defaultValue: "config/storycircle.json")
    static let port = CommandSpec.Option(long: "port", valueName: "port", help: "The port to listen on.", defaultValue: "8080")
    static let data = CommandSpec.Option(long: "data", valueName: "directory", help: "Where the database, audio cache and admin token live.", defaultValue: "data")
    static let database = CommandSpec.Option(long: "database", valueName: "path", help: "The SQLite file, 'none' to keep nothing on disk, or a postgres:// URL ('postgres' alone: the PG* environment).", defaultValue: "<data>/storycircle.sqlite")
    static let tlsCertificate = CommandSpec.Option(long: "tls-certificate", valueName: "file", help: "HTTPS and WSS with this certificate (PEM; default: <data>/tls/server.crt if present).")
    static let tlsKey = CommandSpec.Option(long: "tls-key", valueName: "file", help: "The certificate's private key (PEM).")
    static let tlsRedirectPort = CommandSpec.Option(long: "tls-redirect-port", valueName: "port", help: "Answer plain HTTP on this port with a redirect to HTTPS.")
    static let all = [config, port, data, database, tlsCertificate, tlsKey, tlsRedirectPort]

    static let defaultConfigFile = "config/storycircle.json"

    var configFile: String?
    var port: Int?
    var dataDirectory: String?
    var database: String?
    var tlsCertificate: String?
    var tlsKey: String?
    var tlsRedirectPort: Int?

    init(_ arguments: ParsedArguments) throws(UsageError) {
        configFile = arguments.value(of: Self.config)
        port = try arguments.value(of: Self.port, expecting: "use a port number from 0 to 65535") { text in
            Int(text).flatMap { (0...65_535).contains($0) ? $0 : nil }
        }
        dataDirectory = arguments.value(of: Self.data)
        database = arguments.value(of: Self.database)
        tlsCertificate = arguments.value(of: Self.tlsCertificate)
        tlsKey = arguments.value(of: Self.tlsKey)
        tlsRedirectPort = try arguments.value(of: Self.tlsRedirectPort, expecting: "use a port number from 1 to 65535") { text in
            Int(text).flatMap { (1...65_535).contains($0) ? $0 : nil }
        }
    }

    /// The server configuration: the file, the environment, then these options.
    func configuration() throws(CommandFailure) -> ServerConfiguration {
        let file = configFile ?? (FileManager.default.fileExists(atPath: Self.defaultConfigFile) ? Self.defaultConfigFile : nil)
        var configuration: ServerConfiguration
        do {
            configuration = try ServerConfiguration.load(file: file)
        } catch {
            throw CommandFailure("configuration: \(error.description)")
        }
        if let port { configuration.network.port = port }
        if let dataDirectory {
            configuration.files.dataDirectory = dataDirectory
            configuration.storage.database = dataDirectory + "/storycircle.sqlite"
            configuration.files.audioCacheDirectory = dataDirectory + "/audio-cache"
        }
        if let database { configuration.storage.database = database }
        if let tlsCertificate { configuration.tls.certificate = tlsCertificate }
        if let tlsKey { configuration.tls.key = tlsKey }
        if let tlsRedirectPort { configuration.tls.redirectPort = tlsRedirectPort }
        do {
            try configuration.validate()
        } catch {
            throw CommandFailure("configuration: \(error.description)")
        }
        return configuration
    }
}

/// The room settings `start` and `room create` take as flags.
struct RoomSettingOptions {
    static let narrate = CommandSpec.Option(long: "narrate", valueName: "mode", help: "Where the story is read aloud: devices, dashboard or off.", defaultValue: "devices")
    static let noSpeedPoints = CommandSpec.Option(long: "no-speed-points", valueName: nil, help: "Every correct answer scores the same, however fast.")
    static let noStreaks = CommandSpec.Option(long: "no-streaks", valueName: nil, help: "No bonus for correct answers in a row.")
    static let noTimer = CommandSpec.Option(long: "no-timer", valueName: nil, help: "Questions stay open until everyone answers or you reveal.")
    static let questionSeconds = CommandSpec.Option(long: "question-seconds", valueName: "seconds", help: "Time for questions that set none.", defaultValue: "20")
    static let noLateJoin = CommandSpec.Option(long: "no-late-join", valueName: nil, help: "Children cannot join after the story starts.")
    static let readQuestions = CommandSpec.Option(long: "read-questions", valueName: nil, help: "Read each question and its options aloud too.")
    static let voice = CommandSpec.Option(long: "voice", valueName: "voice", help: "A voice instead of the story's (en-gb, es, piper:en_US-joe-medium, ...; see 'storycircle voices').")
    static let language = CommandSpec.Option(long: "language", valueName: "language", help: "The language of every screen: \(RoomLanguage.available.joined(separator: ", ")) (by default the voice's).")
    static let competitive = CommandSpec.Option(long: "competitive", valueName: nil, help: "Phones show each child's place and who is just ahead.")
    static let all = [narrate, noSpeedPoints, noStreaks, noTimer, questionSeconds, noLateJoin, readQuestions, voice, language, competitive]

    var patch = RoomSettingsPatch()

    init(_ arguments: ParsedArguments) throws(UsageError) {
        patch.narration = try arguments.value(of: Self.narrate, expecting: "use devices, dashboard or off", NarrationMode.init(rawValue:))
        if arguments.isSet(Self.noSpeedPoints) { patch.speedPoints = false }
        if arguments.isSet(Self.noStreaks) { patch.streakBonus = false }
        if arguments.isSet(Self.noTimer) { patch.timer = false }
        if arguments.isSet(Self.noLateJoin) { patch.lateJoin = false }
        if arguments.isSet(Self.readQuestions) { patch.readQuestions = true }
        if arguments.isSet(Self.competitive) { patch.competitive = true }
        let range = RoomSettings.questionSecondsRange
        patch.questionSeconds = try arguments.value(of: Self.questionSeconds, expecting: "use a whole number from \(range.lowerBound) to \(range.upperBound)") { text in
            Int(text).flatMap { range.contains($0) ? $0 : nil }
        }
        patch.voice = arguments.value(of: Self.voice)
        patch.language = try arguments.value(of: Self.language, expecting: "use one of \(RoomLanguage.available.joined(separator: ", "))") { text in
            RoomLanguage.available.contains(text.lowercased()) ? text.lowercased() : nil
        }
    }
}

/// `--server`, `--ca-file`, `--token`, `--admin-token`: how the client commands reach a server and prove who
/// they are. Each value comes from the option, then the environment, then (tokens) a file; the server and the
/// authority to trust default to this computer's, as `serve` would run here.
struct ClientOptions {
    static let server = CommandSpec.Option(long: "server", valueName: "url", help: "The server to talk to (or STORYCIRCLE_SERVER; by default this computer's: https://127.0.0.1:8080 once 'storycircle tls init' ran, else http://).")
    static let caFile = CommandSpec.Option(long: "ca-file", valueName: "file", help: "Also trust this certificate authority for HTTPS (or STORYCIRCLE_CA_FILE; by default <data>/tls/ca.crt if present).")
    static let token = CommandSpec.Option(long: "token", valueName: "token", help: "The room's teacher token (or STORYCIRCLE_TOKEN; by default the one saved by 'room create').")
    static let adminToken = CommandSpec.Option(long: "admin-token", valueName: "token", help: "The server's admin token (or STORYCIRCLE_ADMIN_TOKEN, or data/admin-token).")
    /// For commands that act on one room as its teacher.
    static let teacher = [server, caFile, token]
    /// For commands that act on the server as its administrator.
    static let admin = [server, caFile, adminToken]

    var server: String
    var authorityFile: String?
    private var token: String?
    private var adminTokenValue: String?

    init(_ arguments: ParsedArguments) {
        let explicitServer = arguments.value(of: Self.server) ?? Self.environment("STORYCIRCLE_SERVER")
        let explicitAuthority = arguments.value(of: Self.caFile) ?? Self.environment("STORYCIRCLE_CA_FILE")
        // Only read this computer's configuration when something is left to default.
        let local = explicitServer == nil || explicitAuthority == nil ? Self.localConfiguration() : nil
        server = explicitServer ?? Self.localServer(local, authorityGiven: explicitAuthority != nil)
        authorityFile = explicitAuthority ?? local.flatMap { configuration in
            let authority = LocalTLSFolder(dataDirectory: configuration.files.dataDirectory).authorityCertificate
            return FileManager.default.fileExists(atPath: authority) ? authority : nil
        }
        token = arguments.value(of: Self.token)
        adminTokenValue = arguments.value(of: Self.adminToken)
    }

    /// The configuration `serve` would use here (the default file if present, then the environment); nil if
    /// it does not load, and then the defaults stand.
    private static func localConfiguration() -> ServerConfiguration? {
        let file = FileManager.default.fileExists(atPath: ServerOptions.defaultConfigFile) ? ServerOptions.defaultConfigFile : nil
        return try? ServerConfiguration.load(file: file)
    }

    /// This computer's server: HTTPS when it has a certificate to serve or a CA file was given (only an
    /// HTTPS server needs one), on its configured port.
    private static func localServer(_ configuration: ServerConfiguration?, authorityGiven: Bool) -> String {
        let port = configuration.map { $0.network.port == 0 ? 8080 : $0.network.port } ?? 8080
        let secure = authorityGiven || configuration?.resolvedTLS != nil
        return (secure ? "https" : "http") + "://127.0.0.1:\(port)"
    }

    var api: APIClient { APIClient(server: server, authorityFile: authorityFile) }

    func teacherToken(room code: String) throws(CommandFailure) -> String {
        if let token { return token }
        if let token = Self.environment("STORYCIRCLE_TOKEN") { return token }
        if let saved = Credentials.savedRoom(code) { return saved.teacherToken }
        throw CommandFailure("no teacher token for room \(code): pass --token, set STORYCIRCLE_TOKEN, or create the room with 'storycircle room create' on this computer.")
    }

    func adminToken() throws(CommandFailure) -> String {
        if let adminTokenValue { return adminTokenValue }
        if let token = Self.environment("STORYCIRCLE_ADMIN_TOKEN") { return token }
        let file = (ProcessInfo.processInfo.environment["STORYCIRCLE_DATA_DIR"] ?? "data") + "/admin-token"
        if let data = FileManager.default.contents(atPath: file) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return token }
        }
        throw CommandFailure("no admin token: pass --admin-token, set STORYCIRCLE_ADMIN_TOKEN, or run this where the server keeps data/admin-token.")
    }

    /// An environment variable, where set and not empty.
    private static func environment(_ name: String) -> String? {
        ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
}

/// `--json`: machine-readable output for scripts.
enum OutputOptions {
    static let json = CommandSpec.Option(long: "json", valueName: nil, help: "Print JSON for scripts.")
}

extension ServerOptions {
    /// Starts a server, turning whatever stops it into one line for the teacher.
    static func start(_ configuration: ServerConfiguration, logger: StoryCircleLog? = nil) async throws(CommandFailure) -> ClassroomServer {
        do {
            return try await ClassroomServer.start(configuration: configuration, logger: logger)
        } catch {
            throw CommandFailure("the server could not start: \(error)")
        }
    }
}
