import Confusables
import Foundation
import PostgresStorage
import Speech
import SQLiteStorage
import Pictures
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
    let store: any RoomStore
    let logger: StoryCircleLog
    private let lock: DataDirectoryLock
    private let loops: [Task<Void, Never>]
    private let finishStreams: @Sendable () -> Void
    /// The real narrator (nil when a test injected its own): its voices and its Piper worker.
    public let speech: SpeechNarrator?

    /// Errors that stop the server from starting, each with a sentence an operator can act on.
    public struct StartError: Error, CustomStringConvertible {
        public var description: String
    }

    private init(
        configuration: ServerConfiguration, port: Int, publicURL: String, adminTokenFile: String?, registry: RoomRegistry,
        metrics: ServerMetrics, transport: WebSocketServer, store: any RoomStore, logger: StoryCircleLog, lock: DataDirectoryLock,
        loops: [Task<Void, Never>], restoredRooms: Int, speech: SpeechNarrator?, finishStreams: @escaping @Sendable () -> Void
    ) {
        self.speech = speech
        self.configuration = configuration
        self.port = port
        self.publicURL = publicURL
        self.adminTokenFile = adminTokenFile
        self.registry = registry
        self.metrics = metrics
        self.transport = transport
        self.transportMetrics = transport.metrics
        self.store = store
        self.logger = logger
        self.lock = lock
        self.loops = loops
        self.restoredRooms = restoredRooms
        self.finishStreams = finishStreams
    }

    /// Brings a server up. `store` and `narrator` default to SQLite (or memory, with `database: "none"`)
    /// and espeak-ng with the audio cache; tests inject their own, and a `ManualClock`.
    public static func start(
        configuration: ServerConfiguration, clock testClock: (any ServerClock)? = nil, store: (any RoomStore)? = nil,
        narrator: (any NarrationPreparing)? = nil, timing: RoomTiming = .init(), logger: StoryCircleLog? = nil
    ) async throws -> ClassroomServer {
        let logger = logger ?? configuration.log()
        // Every connection is an open file: accept no more than the process may open (less a margin for
        // the database, the audio cache and the pages), so the limit is a clear refusal, not a failure.
        var configuration = configuration
        let files = ProcessLimits.raiseOpenFileLimit()
        if files - 64 < configuration.maxConnections {
            configuration.maxConnections = max(16, files - 64)
            logger.info("Connections limited by the open-file limit", ["limit": String(files), "maxConnections": String(configuration.maxConnections)])
        }
        let metrics = ServerMetrics()
        guard FileManager.default.fileExists(atPath: configuration.webRoot + "/index.html") else {
            throw StartError(description: "the web pages are missing: \(configuration.webRoot)/index.html was not found (run from the project folder or set webRoot)")
        }
        do {
            try FileManager.default.createDirectory(atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw StartError(description: "cannot create the data folder \(configuration.dataDirectory): \(error.localizedDescription)")
        }
        // Before anything is read or written: two servers on one folder would both restore its rooms.
        let lock: DataDirectoryLock
        do {
            lock = try DataDirectoryLock(directory: configuration.dataDirectory)
        } catch {
            throw StartError(description: error.description)
        }
        let (adminToken, adminTokenFile) = try Self.adminToken(configuration)

        let roomStore: any RoomStore
        // A PostgreSQL URL may carry a password: messages show it redacted.
        var postgres = PostgresSettings(database: configuration.database)
        postgres?.node = configuration.nodeId
        let databaseName = postgres?.redacted ?? configuration.database
        if let store {
            roomStore = store
        } else if configuration.usesDatabase {
            do {
                roomStore = try postgres.map { try PostgresRoomStore($0) } ?? SQLiteRoomStore(path: configuration.database)
            } catch {
                throw StartError(description: "cannot open the database \(databaseName): \(error)")
            }
        } else {
            roomStore = MemoryRoomStore()
        }
        let library = roomStore as? any StoryLibrary
        if let library {
            await SampleStories.seed(library, from: configuration.sampleStoriesDirectory, logger: logger, now: (testClock ?? SystemClock()).now())
        }
        var audioCache: AudioCache?
        let roomNarrator: any NarrationPreparing
        var speech: SpeechNarrator?
        if let narrator {
            roomNarrator = narrator
        } else {
            let cache: AudioCache
            do {
                cache = try AudioCache(directory: URL(fileURLWithPath: configuration.audioCacheDirectory), maxBytes: configuration.audioCacheMegabytes * 1_048_576)
            } catch {
                throw StartError(description: "cannot create the audio cache \(configuration.audioCacheDirectory): \(error.localizedDescription)")
            }
            audioCache = cache
            let voices = await VoiceCatalog.discoverOffPool(
                configuration, espeak: await SpeechEngine.shared.voices(), variants: await SpeechEngine.shared.variants(),
                hashCache: URL(fileURLWithPath: configuration.audioCacheDirectory).appendingPathComponent("voice-hashes.json")
            )
            for problem in voices.problems {
                logger.warning("Voice not offered", ["file": problem.path, "reason": problem.reason])
            }
            var piper: PiperWorker?
            var piperThreads = 0
            if let install = voices.piper, !voices.natural.isEmpty {
                var workerConfiguration = PiperWorker.Configuration(python: install.python, script: install.worker, voices: voices.natural.map { ($0.file.name, $0.file.modelPath) })
                piperThreads = configuration.resolvedPiperThreads
                workerConfiguration.threads = piperThreads
                let worker = PiperWorker(configuration: workerConfiguration)
                // Launched now, on the worker's own thread, so that Python, onnxruntime and the voices are
                // loaded before the first room starts its story; nothing waits for it (a room that comes
                // first waits for the worker as it always did), and restarts keep the worker's backoff.
                worker.warmUp()
                piper = worker
            }
            logger.info("Voices", [
                "natural": voices.natural.map(\.id).joined(separator: ","), "espeak": String(voices.espeak.count),
                "piperThreads": String(piperThreads),
            ])
            let made = SpeechNarrator(cache: cache, metrics: metrics, voices: voices, piper: piper, logger: logger)
            speech = made
            roomNarrator = made
        }

        let lookalikes: ICUConfusables
        do {
            lookalikes = try ICUConfusables()
        } catch {
            throw StartError(description: "cannot compare nicknames: \(error)")
        }

        let (events, eventSink) = AsyncStream.makeStream(of: TransportEvent.self)
        let (requests, requestSink) = AsyncStream.makeStream(of: HTTPRequest.self)
        let bindings = ConnectionBindings()
        let transport = WebSocketServer(configuration: transportConfiguration(configuration), refusals: TransportRefusals()) { event in
            if case .message(let connection, let bytes) = event, bindings.deliver(connection, bytes) { return }
            if case .request(let request) = event {
                requestSink.yield(request)
            } else {
                eventSink.yield(event)
            }
        }
        // Rooms run on the transport's loop, and so do their timers, unless a test moves time itself.
        let clock = testClock ?? LoopClock(loop: transport.loopExecutor)
        // PostgreSQL may be shared by several nodes: rooms are then loaded only by the node the proxy sends them to.
        let registry = RoomRegistry(
            events: events, transport: transport, store: roomStore, clock: clock, narrator: roomNarrator, lookalikes: lookalikes, metrics: metrics,
            settings: configuration.registrySettings, timing: timing, logger: logger, bindings: bindings, sharedStore: store == nil && postgres != nil,
            executor: transport.loopExecutor
        )
        let restored: Int
        do {
            restored = try await registry.restoreRooms()
        } catch {
            throw StartError(description: "cannot restore rooms from \(databaseName): \(error)")
        }
        let port: Int
        do {
            port = try transport.start()
        } catch {
            throw StartError(description: "cannot listen on port \(configuration.port): \(error). Is another server using it? Try --port.")
        }
        let publicURL = configuration.publicURL.map { String($0.trimmingSuffix("/")) } ?? "http://\(NetworkAddress.bestGuess(bindAddress: configuration.bindAddress)):\(port)"
        // The pages children open are served from this address: let them connect (and no other site).
        transport.allowOrigins([publicURL])
        let api = APIHandler(
            registry: registry, store: roomStore, clock: clock, metrics: metrics, transportMetrics: transport.metrics,
            adminTokenHash: RoomCredentials.hash(adminToken), publicURL: publicURL, startedAt: clock.now(), audio: audioCache, qrCodes: true,
            narrator: speech, library: library, classes: roomStore as? any ClassBook, lookalikes: lookalikes,
            maxConnections: transport.configuration.maxConnections
        )
        let routing = Task { await registry.run() }
        let answering = Task {
            await withDiscardingTaskGroup { group in
                for await request in requests {
                    group.addTask { transport.respond(to: request.id, with: await api.handle(request)) }
                }
            }
        }
        let sweeping = Task { [configuration] in
            while !Task.isCancelled {
                do { try await clock.sleep(until: clock.now() + 60_000) } catch { return }
                let now = clock.now()
                _ = await registry.sweep(
                    finishedBefore: now + -(configuration.finishedRoomMinutes * 60_000),
                    createdBefore: now + -(configuration.retentionDays * 86_400_000)
                )
            }
        }
        logger.notice("Server listening", ["port": String(port), "url": publicURL, "rooms.restored": String(restored), "node": registry.nodeId])
        return ClassroomServer(
            configuration: configuration, port: port, publicURL: publicURL, adminTokenFile: adminTokenFile, registry: registry, metrics: metrics,
            transport: transport, store: roomStore, logger: logger, lock: lock, loops: [routing, answering, sweeping], restoredRooms: restored,
            speech: speech, finishStreams: { eventSink.finish(); requestSink.finish() }
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
        await store.close()
        lock.release()
        logger.notice("Server stopped")
    }

    /// Whether the store can write now (the `start` command's terminal shows a banner while it cannot).
    public var storageHealth: StoreHealth { store.health }

    /// A room created in-process (the all-in-one `start` command), with the URLs the API would answer.
    public func createRoom(story: Story, settings: RoomSettingsPatch? = nil, storyID: String? = nil, schoolClass: SchoolClass? = nil) async throws -> (room: CreatedRoom, joinURL: String, dashboardURL: String, teacherURL: String) {
        if let speech, case .failure(let refusal) = speech.check(voice: Self.voice(of: story, settings: settings)) {
            throw refusal.roomError
        }
        let settings = schoolClass.map { $0.roomSettings(settings) } ?? settings
        let room = try await registry.createRoom(story: story, settings: settings, storyID: storyID, classRoster: schoolClass.map(ClassRoster.init))
        let response = CreatedRoomResponse(room, publicURL: publicURL, warnings: [])
        return (room, response.joinURL, response.dashboardURL, response.teacherURL)
    }

    /// The voice a room will read with: its own setting, else its story's.
    static func voice(of story: Story, settings: RoomSettingsPatch?) -> String {
        let override = settings?.voice?.trimmingCharacters(in: .whitespaces) ?? ""
        return override.isEmpty ? story.narration.voice : override
    }

    static func transportConfiguration(_ configuration: ServerConfiguration) -> WebSocketServerConfiguration {
        var transport = WebSocketServerConfiguration()
        transport.port = configuration.port
        transport.bindAddress = configuration.bindAddress
        transport.staticRoot = configuration.webRoot
        transport.pages = ["/dashboard": "dashboard.html", "/teacher": "teacher.html", "/stories": "stories.html", "/stories/edit": "stories-edit.html", "/classes": "classes.html"]
        transport.dynamicPrefixes = ["/api", "/healthz", "/metrics", "/audio", "/pictures"]
        // A picture upload (`APIHandler+Pictures`): the picture's byte limit and room for nothing else.
        transport.maxRequestBodyBytesByPath = ["/api/pictures": PictureLimits.standard.maxBytes]
        transport.maxMessageBytes = configuration.maxMessageBytes
        transport.maxConnections = configuration.maxConnections
        transport.maxConnectionsPerAddress = configuration.maxConnectionsPerAddress
        transport.helloTimeoutSeconds = configuration.helloTimeoutSeconds
        transport.maxQueuedBytesPerConnection = configuration.maxQueuedKilobytesPerConnection * 1_024
        transport.maxQueuedFramesPerConnection = configuration.maxQueuedMessagesPerConnection
        transport.socketSendBufferBytes = configuration.socketSendBufferKilobytes * 1_024
        transport.coalesceWrites = configuration.coalesceWrites
        transport.pingAfterIdleSeconds = configuration.pingAfterIdleSeconds
        transport.hangUpAfterIdleSeconds = configuration.hangUpAfterIdleSeconds
        transport.messagesPerSecond = configuration.messagesPerSecondPerConnection
        transport.messageBurst = Double(configuration.messageBurstPerConnection)
        transport.allowedOrigins = configuration.allowedOrigins
        transport.trustForwardedFor = configuration.trustForwardedFor
        return transport
    }

    /// The admin token: from the configuration, or kept in `<data>/admin-token` (created, readable only by
    /// its owner, on first start).
    static func adminToken(_ configuration: ServerConfiguration) throws -> (token: String, file: String?) {
        if let token = configuration.adminToken, !token.isEmpty { return (token, nil) }
        let file = configuration.dataDirectory + "/admin-token"
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
