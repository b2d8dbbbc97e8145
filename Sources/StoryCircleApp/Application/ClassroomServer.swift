import Foundation
import Locking
import StoryCircleCore
import TransportCore
import WebSocketTransport
import StoryCircleServer

/// A running StoryCircle server: the transport on its port, the room registry, the store, the narrator and
/// the HTTP API, wired together. `start` brings it up (restoring unfinished rooms); `stop` tells every
/// connection goodbye, writes what is queued, and returns.
public final class ClassroomServer: Sendable {
    public let configuration: ServerConfiguration
    public let port: Int
    /// How children reach this server: the base of every URL it hands out.
    public let publicURL: String
    /// Where the admin token is kept, when it came from a file.
    public let adminTokenFile: String?
    public let registry: RoomRegistry
    public let metrics: ServerMetrics
    public let transportMetrics: TransportMetrics
    public let restoredRooms: Int
    let transport: WebSocketServer
    /// What the store offers, named once at start (`RoomStore.offers`).
    let storage: Storage
    let logger: StoryCircleLog
    private let lock: DataDirectoryLock
    private let loops: [Task<Void, Never>]
    private let finishStreams: @Sendable () -> Void
    /// The real narrator (nil when a test injected its own): its voices and its Piper worker.
    public let speech: SpeechNarrator?
    /// The one-time sign-in codes this node prints (`ClassroomServer+SignIn`), kept in its memory only.
    public let signIns: SignInDesk
    /// Argon2id's threads (`PasswordHasher`).
    let passwords: PasswordHasher
    /// The account the sign-in link also signs into, once `prepareLaptopTeacher` found or made it.
    let laptopTeacher = Locked<String?>(nil)

    /// Errors that stop the server from starting, each with a sentence an operator can act on.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private init(
        configuration: ServerConfiguration, port: Int, publicURL: String, adminTokenFile: String?, registry: RoomRegistry,
        metrics: ServerMetrics, transport: WebSocketServer, storage: Storage, logger: StoryCircleLog, lock: DataDirectoryLock,
        loops: [Task<Void, Never>], restoredRooms: Int, speech: SpeechNarrator?, signIns: SignInDesk, passwords: PasswordHasher,
        finishStreams: @escaping @Sendable () -> Void
    ) {
        self.speech = speech
        self.signIns = signIns
        self.passwords = passwords
        self.configuration = configuration
        self.port = port
        self.publicURL = publicURL
        self.adminTokenFile = adminTokenFile
        self.registry = registry
        self.metrics = metrics
        self.transport = transport
        self.transportMetrics = transport.metrics
        self.storage = storage
        self.logger = logger
        self.lock = lock
        self.loops = loops
        self.restoredRooms = restoredRooms
        self.finishStreams = finishStreams
    }

    /// Brings a server up. `store` and `narrator` default to SQLite (or memory, with `database: "none"`)
    /// and espeak-ng with the audio cache; tests inject their own, and a `ManualClock`. Each step is one
    /// function of `ClassroomServer+Start`, in the order they must happen.
    public static func start(
        configuration: ServerConfiguration, clock testClock: (any ServerClock)? = nil, store: (any RoomStore)? = nil,
        narrator: (any NarrationPreparing)? = nil, timing: RoomTiming = .init(), logger: StoryCircleLog? = nil
    ) async throws -> ClassroomServer {
        let logger = logger ?? configuration.log()
        let tls = try checkTLS(configuration, logger: logger)
        let configuration = fitConnectionsToOpenFiles(configuration, logger: logger)
        let lock = try claimDataDirectory(configuration, logger: logger)
        let (adminToken, adminTokenFile) = try Self.adminToken(configuration)
        let tokens = try RoomTokenKey.tokens(configuration)
        let metrics = ServerMetrics()
        let opened = try await openStore(configuration, injected: store, now: (testClock ?? SystemClock()).now(), logger: logger)
        let storage = opened.storage
        let narration = try await makeNarration(configuration, injected: narrator, metrics: metrics, logger: logger)
        let lookalikes = try compareNames()
        let wiring = wireTransport(configuration, tls: tls?.settings)
        let transport = wiring.transport
        // Rooms run on the transport's loop, and so do their timers, unless a test moves time itself.
        let clock = testClock ?? LoopClock(loop: transport.loopExecutor)
        let disabledOwners = DisabledOwners()
        let services = RoomServices(
            transport: transport, storage: storage, clock: clock, narrator: narration.narrator, lookalikes: lookalikes, metrics: metrics, logger: logger,
            timing: timing, bindings: wiring.bindings, executor: transport.loopExecutor, tokens: tokens, disabledOwners: disabledOwners
        )
        let registry = RoomRegistry(events: wiring.events, services: services, settings: configuration.registrySettings)
        let restored = try await restoreRooms(registry, from: opened)
        let (port, publicURL) = try listen(transport, configuration, tls: tls?.pair, logger: logger)
        let signIns = SignInDesk(clock: clock)
        let passwords = PasswordHasher()
        // Sign-ins and session cookies, where the store keeps accounts (SQLite, PostgreSQL).
        let sessions = storage.accounts.map { book in
            SessionDesk(book: book, clock: clock, limits: configuration.signIn.limits) { try await passwords.verify($0, hash: $1) }
        }
        let api = APIHandler(
            registry: registry, store: storage.rooms, clock: clock, metrics: metrics, transportMetrics: transport.metrics,
            adminTokenHash: RoomCredentials.hash(adminToken), publicURL: publicURL, startedAt: clock.now(), audio: narration.audio, qrCodes: true,
            narrator: narration.speech, library: storage.library, classes: storage.classes, pictures: storage.pictures,
            childData: storage.childData, lookalikes: lookalikes,
            maxConnections: transport.configuration.maxConnections, refused: RefusedRequests(logger: logger), signIns: signIns,
            accounts: storage.accounts, passwords: passwords, ownership: storage.ownership, sessions: sessions,
            auditTrail: storage.audit.map { AuditTrail(log: $0, logger: logger) },
            passkeys: PasskeyDesk.make(publicURL: publicURL, book: storage.accounts, clock: clock), roster: storage.roster, disabledOwners: disabledOwners,
            retention: storage.retention, retentionDefaults: configuration.storage.retentionDefaults
        )
        let defaultBodyLimit = transport.configuration.maxRequestBodyBytes
        wiring.heads.admit { APIHandler.router.admitHead($0, with: api, defaultBodyLimit: defaultBodyLimit) }
        let loops = [
            Task { await registry.run() }, answer(wiring.requests, with: api, on: transport),
            sweep(registry, clock: clock, configuration: configuration, storage: storage, logger: logger),
        ] + (storage.accounts.map { [watch(disabledOwners, in: $0, clock: clock, logger: logger)] } ?? [])
        logger.notice("Server listening", ["port": String(port), "url": publicURL, "rooms.restored": String(restored), "node": registry.nodeId])
        return ClassroomServer(
            configuration: configuration, port: port, publicURL: publicURL, adminTokenFile: adminTokenFile, registry: registry, metrics: metrics,
            transport: transport, storage: storage, logger: logger, lock: lock, loops: loops, restoredRooms: restored,
            speech: narration.speech, signIns: signIns, passwords: passwords, finishStreams: wiring.finish
        )
    }

    /// Stops rooms, says goodbye to every connection (close 1001), writes everything queued, and returns.
    public func stop() async {
        logger.notice("Server stopping")
        await registry.shutDown()
        await speech?.stop()
        await transport.shutDown()
        finishStreams()
        for loop in loops { loop.cancel() }
        for loop in loops { await loop.value }
        await storage.rooms.close()
        await passwords.shutDown()
        lock.release()
        logger.notice("Server stopped")
    }

    /// Serves the certificate and key read again from their files to new connections, after checking them;
    /// a pair that fails is refused and the one served stays. Rooms and open connections are untouched.
    public func reloadCertificate() async {
        guard transport.configuration.tls != nil else {
            logger.info("No TLS certificate to reload: the server speaks plain HTTP", [:])
            return
        }
        do {
            let pair = try await transport.reloadCertificate()
            logger.notice("TLS certificate reloaded", ["certificate": pair.certificateFile, "serial": pair.serial])
        } catch {
            logger.error("TLS certificate not reloaded: the one served stays", ["reason": error.description])
        }
    }

    /// Whether the store can write now (the `start` command's terminal shows a banner while it cannot).
    public var storageHealth: StoreHealth { storage.rooms.health }

    /// How rooms are made here: the API's way, for the all-in-one `start` command.
    public var rooms: RoomMaker { RoomMaker(registry: registry, speech: speech, publicURL: publicURL) }

    /// The page routes (URL path to a file in the web root): everything else the pages need is a file.
    static let pages = [
        "/dashboard": "dashboard.html", "/teacher": "teacher.html", "/stories": "stories.html", "/stories/edit": "stories-edit.html",
        "/classes": "classes.html", "/sign-in": "sign-in.html", "/admin": "admin.html", "/account-setup": "account-setup.html",
    ]

    static func transportConfiguration(_ configuration: ServerConfiguration, tls: TLSSettings? = nil) -> WebSocketServerConfiguration {
        var transport = WebSocketServerConfiguration()
        transport.tls = tls
        transport.protocolName = "storycircle"
        transport.port = configuration.network.port
        transport.bindAddress = configuration.network.bindAddress
        transport.staticRoot = configuration.files.webRoot
        transport.pages = pages
        // The API's own table: its paths go to the application, with the body limits its routes declare.
        transport.dynamicPrefixes = APIHandler.router.prefixes
        transport.maxRequestBodyBytesByPath = APIHandler.router.bodyLimits
        transport.maxMessageBytes = configuration.connections.maxMessageBytes
        transport.maxConnections = configuration.connections.maxConnections
        transport.maxConnectionsPerAddress = configuration.connections.maxConnectionsPerAddress
        transport.maxHTTPConnectionsPerAddress = configuration.connections.maxHTTPConnectionsPerAddress
        transport.helloTimeoutSeconds = configuration.connections.helloTimeoutSeconds
        transport.maxQueuedBytesPerConnection = configuration.connections.maxQueuedKilobytesPerConnection * 1_024
        transport.maxQueuedFramesPerConnection = configuration.connections.maxQueuedMessagesPerConnection
        transport.socketSendBufferBytes = configuration.connections.socketSendBufferKilobytes * 1_024
        transport.coalesceWrites = configuration.connections.coalesceWrites
        transport.pingAfterIdleSeconds = configuration.connections.pingAfterIdleSeconds
        transport.hangUpAfterIdleSeconds = configuration.connections.hangUpAfterIdleSeconds
        transport.messagesPerSecond = configuration.connections.messagesPerSecondPerConnection
        transport.messageBurst = Double(configuration.connections.messageBurstPerConnection)
        transport.allowedOrigins = configuration.network.allowedOrigins
        transport.trustForwardedFor = configuration.network.trustForwardedFor
        return transport
    }

    /// The admin token: from the configuration, or kept in `<data>/admin-token` (created, readable only by
    /// its owner, on first start).
    static func adminToken(_ configuration: ServerConfiguration) throws -> (token: String, file: String?) {
        if let token = configuration.network.adminToken, !token.isEmpty { return (token, nil) }
        let file = configuration.files.dataDirectory + "/admin-token"
        if let data = FileManager.default.contents(atPath: file) {
            let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !token.isEmpty { return (token, file) }
        }
        let token = Tokens.generate()
        guard FileManager.default.createFile(atPath: file, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600]) else {
            throw StartError(description: "cannot write the admin token to \(file)")
        }
        return (token, file)
    }
}

extension String {
    func trimmingSuffix(_ suffix: Character) -> Substring {
        var result = Substring(self)
        while result.last == suffix { result.removeLast() }
        return result
    }
}
