import Confusables
import Foundation
import Locking
import PostgresStorage
import Speech
import SQLiteStorage
import StoryCircleCore
import TransportCore
import WebSocketTransport
import StoryCircleServer

/// The steps of `ClassroomServer.start`, each with the sentence an operator is told when it fails.
extension ClassroomServer {
    /// Every connection is an open file: accept no more than the process may open (less a margin for the
    /// database, the audio cache and the pages), so the limit is a clear refusal, not a failure.
    static func fitConnectionsToOpenFiles(_ configuration: ServerConfiguration, logger: StoryCircleLog) -> ServerConfiguration {
        var configuration = configuration
        let files = ProcessLimits.raiseOpenFileLimit()
        if files - 64 < configuration.connections.maxConnections {
            configuration.connections.maxConnections = max(16, files - 64)
            logger.info("Connections limited by the open-file limit", ["limit": String(files), "maxConnections": String(configuration.connections.maxConnections)])
        }
        return configuration
    }

    /// The certificate and key to serve, checked (readable, the key the certificate's, valid now), or none; the
    /// log's first line says which, so that a server speaking plain HTTP says it before anything else.
    static func checkTLS(_ configuration: ServerConfiguration, logger: StoryCircleLog) throws -> (settings: TLSSettings, pair: CertificatePair)? {
        guard let settings = configuration.resolvedTLS else {
            if configuration.tls.redirectPort != nil {
                throw StartError(description: "tls.redirectPort needs a certificate: set tls.certificate and tls.key, or run 'storycircle tls init'")
            }
            if let url = configuration.network.publicURL, url.hasPrefix("https://") {
                logger.notice("Plain HTTP behind a proxy that speaks HTTPS to browsers (publicURL is https://)", ["url": url])
            } else {
                logger.warning("Plain HTTP: fine on this computer only; run 'storycircle tls init' for children's devices", [:])
            }
            return nil
        }
        let pair: CertificatePair
        do {
            pair = try CertificatePair(certificateFile: settings.certificateFile, keyFile: settings.keyFile)
        } catch {
            throw StartError(description: error.description)
        }
        logger.notice("HTTPS and WSS", [
            "certificate": settings.certificateFile, "serial": pair.serial,
            "expires": pair.notAfter.map { ISO8601DateFormatter().string(from: $0) } ?? "", "redirectPort": settings.redirectPort.map(String.init) ?? "",
        ])
        if let expires = pair.notAfter, expires.timeIntervalSinceNow < 14 * 86_400 {
            logger.warning("The TLS certificate expires within two weeks: renew it, then send the server SIGHUP", ["certificate": settings.certificateFile])
        }
        return (settings, pair)
    }

    /// The pages are there, the data folder exists and is this user's alone (`DataFolderPermissions`), and no
    /// other server uses it (two servers on one folder would both restore its rooms): before anything is
    /// read or written.
    static func claimDataDirectory(_ configuration: ServerConfiguration, logger: StoryCircleLog) throws -> DataDirectoryLock {
        guard FileManager.default.fileExists(atPath: configuration.files.webRoot + "/index.html") else {
            throw StartError(description: "the web pages are missing: \(configuration.files.webRoot)/index.html was not found (run from the project folder or set webRoot)")
        }
        DataFolderPermissions.createPrivately()
        do {
            try FileManager.default.createDirectory(atPath: configuration.files.dataDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StartError(description: "cannot create the data folder \(configuration.files.dataDirectory): \(error.localizedDescription)")
        }
        try DataFolderPermissions.secure(DataFolderPermissions.roots(configuration), logger: logger)
        do {
            return try DataDirectoryLock(directory: configuration.files.dataDirectory)
        } catch {
            throw StartError(description: error.description)
        }
    }

    struct OpenedStore {
        /// What the store offers (`RoomStore.offers`), named here once. PostgreSQL offers leases: several
        /// nodes may share it, and rooms are then loaded only by the node the proxy sends them to.
        var storage: Storage
        /// How messages name it: a PostgreSQL URL may carry a password, so it is shown redacted.
        var name: String
    }

    /// The injected store, else PostgreSQL, SQLite or memory as `database` says, with what it offers; the
    /// library seeded.
    static func openStore(_ configuration: ServerConfiguration, injected: (any RoomStore)?, now: ServerTime, logger: StoryCircleLog) async throws -> OpenedStore {
        var postgres = PostgresSettings(database: configuration.storage.database)
        postgres?.node = configuration.storage.nodeId
        let name = postgres?.redacted ?? configuration.storage.database
        let store: any RoomStore
        if let injected {
            store = injected
        } else if configuration.storage.usesDatabase {
            if let postgres, !configuration.storage.allowUnverifiedDatabase, let problem = postgres.unverifiedTransportProblem() {
                throw StartError(description: problem)
            }
            do {
                store = try postgres.map { try PostgresRoomStore($0) } ?? SQLiteRoomStore(path: configuration.storage.database)
            } catch {
                throw StartError(description: "cannot open the database \(name): \(error)")
            }
        } else {
            store = MemoryRoomStore()
        }
        let storage = store.offers
        if let library = storage.library {
            await SampleStories.seed(library, pictures: storage.pictures, from: configuration.files.sampleStoriesDirectory, logger: logger, now: now)
        }
        return OpenedStore(storage: storage, name: name)
    }

    struct Narration {
        var narrator: any NarrationPreparing
        /// The real narrator (nil when a test injected its own): its voices and its Piper worker.
        var speech: SpeechNarrator?
        var audio: AudioCache?
    }

    /// The injected narrator, else espeak-ng (and Piper, with natural voices) through the audio cache.
    static func makeNarration(_ configuration: ServerConfiguration, injected: (any NarrationPreparing)?, metrics: ServerMetrics, logger: StoryCircleLog) async throws -> Narration {
        if let injected { return Narration(narrator: injected) }
        let cache: AudioCache
        do {
            cache = try AudioCache(directory: URL(fileURLWithPath: configuration.files.audioCacheDirectory), maxBytes: configuration.files.audioCacheMegabytes * 1_048_576)
        } catch {
            throw StartError(description: "cannot create the audio cache \(configuration.files.audioCacheDirectory): \(error.localizedDescription)")
        }
        let voices = await VoiceCatalog.discoverOffPool(
            configuration, espeak: await SpeechEngine.shared.voices(), variants: await SpeechEngine.shared.variants(),
            hashCache: URL(fileURLWithPath: configuration.files.audioCacheDirectory).appendingPathComponent("voice-hashes.json")
        )
        for problem in voices.problems {
            logger.warning("Voice not offered", ["file": problem.path, "reason": problem.reason])
        }
        var piper: PiperWorker?
        var piperThreads = 0
        if let install = voices.piper, !voices.natural.isEmpty {
            var workerConfiguration = PiperWorker.Configuration(python: install.python, script: install.worker, voices: voices.natural.map { ($0.file.name, $0.file.modelPath) })
            piperThreads = configuration.voices.resolvedPiperThreads
            workerConfiguration.threads = piperThreads
            let worker = PiperWorker(configuration: workerConfiguration)
            // Launched now, on the worker's own thread, so that Python, onnxruntime and the voices are loaded
            // before the first room starts its story; nothing waits for it (a room that comes first waits
            // for the worker as it always did), and restarts keep the worker's backoff.
            worker.warmUp()
            piper = worker
        }
        logger.info("Voices", [
            "natural": voices.natural.map(\.id).joined(separator: ","), "espeak": String(voices.espeak.count), "piperThreads": String(piperThreads),
        ])
        let speech = SpeechNarrator(cache: cache, metrics: metrics, voices: voices, piper: piper, logger: logger)
        return Narration(narrator: speech, speech: speech, audio: cache)
    }

    static func compareNames() throws -> ICUConfusables {
        do {
            return try ICUConfusables()
        } catch {
            throw StartError(description: "cannot compare nicknames: \(error)")
        }
    }

    struct Wiring {
        var transport: WebSocketServer
        var events: AsyncStream<TransportEvent>
        var requests: AsyncStream<HTTPRequest>
        var bindings: ConnectionBindings
        /// The API's check of a request's head, once the API is put together (`Router.admitHead`).
        var heads: HeadGate
        var finish: @Sendable () -> Void
    }

    /// Where the transport asks the API about a request's head: set once the API exists; until then every
    /// request may send the default body limit only.
    final class HeadGate: Sendable {
        /// The decision in a box: a function value read through `Locked`'s generic `inout` is reabstracted
        /// and written back wrapped in two more thunks on every read, until the transport's thread runs out
        /// of stack (after a few thousand requests); a class reference is read as it is.
        private final class Decision: Sendable {
            let decide: @Sendable (HTTPRequest) -> HeadAdmission
            init(_ decide: @escaping @Sendable (HTTPRequest) -> HeadAdmission) { self.decide = decide }
        }

        private let decision = Locked<Decision?>(nil)

        func admit(with decide: @escaping @Sendable (HTTPRequest) -> HeadAdmission) {
            let made = Decision(decide)
            decision.withLock { $0 = made }
        }

        func admission(_ request: HTTPRequest, fallback: HeadAdmission) -> HeadAdmission {
            guard let current = decision.withLock({ $0 }) else { return fallback }
            return current.decide(request)
        }
    }

    /// The transport, not yet listening: a bound connection's messages go straight to its room, HTTP requests
    /// to the API, everything else to the registry.
    static func wireTransport(_ configuration: ServerConfiguration, tls: TLSSettings?) -> Wiring {
        let (events, eventSink) = AsyncStream.makeStream(of: TransportEvent.self)
        let (requests, requestSink) = AsyncStream.makeStream(of: HTTPRequest.self)
        let bindings = ConnectionBindings()
        let heads = HeadGate()
        var settings = transportConfiguration(configuration, tls: tls)
        // Until the API answers (the moments between listening and its start), no request may send more than
        // the default: no credential can be checked yet.
        let fallback = HeadAdmission.read(bodyLimit: settings.maxRequestBodyBytes)
        settings.admitHead = { request in heads.admission(request, fallback: fallback) }
        let transport = WebSocketServer(configuration: settings, refusals: TransportRefusals()) { event in
            if case .message(let connection, let bytes) = event, bindings.deliver(connection, bytes) { return }
            if case .request(let request) = event {
                requestSink.yield(request)
            } else {
                eventSink.yield(event)
            }
        }
        return Wiring(transport: transport, events: events, requests: requests, bindings: bindings, heads: heads, finish: { eventSink.finish(); requestSink.finish() })
    }

    static func restoreRooms(_ registry: RoomRegistry, from store: OpenedStore) async throws -> Int {
        do {
            return try await registry.directory.restoreRooms()
        } catch {
            throw StartError(description: "cannot restore rooms from \(store.name): \(error)")
        }
    }

    /// Listens, and works out the address children are sent to; the pages served from it may connect.
    static func listen(_ transport: WebSocketServer, _ configuration: ServerConfiguration, tls: CertificatePair?, logger: StoryCircleLog) throws -> (port: Int, publicURL: String) {
        let port: Int
        do {
            port = try transport.start()
        } catch {
            throw StartError(description: "cannot listen on port \(configuration.network.port): \(error). Is another server using it? Try --port.")
        }
        let host = NetworkAddress.bestGuess(bindAddress: configuration.network.bindAddress)
        let publicURL = configuration.network.publicURL.map { String($0.trimmingSuffix("/")) } ?? "\(tls == nil ? "http" : "https")://\(host):\(port)"
        if tls != nil, publicURL.hasPrefix("http://") {
            logger.warning("publicURL is http:// but the server speaks HTTPS: the links it prints will not work", ["url": publicURL])
        }
        if let tls {
            let served = URLComponents(string: publicURL)?.host ?? host
            if !tls.covers(host: served) {
                logger.warning("The TLS certificate does not name the address children are sent to: their browsers will refuse it", ["host": served, "certificate": tls.certificateFile])
            }
        }
        transport.allowOrigins([publicURL])
        return (port, publicURL)
    }

    /// Each HTTP request answered in a task of its own, so a slow one (a picture) holds up no other.
    static func answer(_ requests: AsyncStream<HTTPRequest>, with api: APIHandler, on transport: WebSocketServer) -> Task<Void, Never> {
        Task {
            await withDiscardingTaskGroup { group in
                for await request in requests {
                    group.addTask { transport.respond(to: request.id, with: await api.handle(request)) }
                }
            }
        }
    }

    /// Once a minute: finished rooms leave memory, rooms past their school's retention leave the store, and
    /// so do removed class members, unused classes, stories and pictures past theirs (`docs/privacy.md`,
    /// "For how long"); audit rows past theirs too, and sessions past their end (a session is refused once
    /// expired whether or not it was swept: this only keeps the table small). Each school's own rules are
    /// read at every sweep; when they cannot be, nothing is deleted by retention this time (the server's
    /// defaults could be shorter than what a school chose).
    static func sweep(
        _ registry: RoomRegistry, clock: any ServerClock, configuration: ServerConfiguration, storage: Storage, logger: StoryCircleLog? = nil
    ) -> Task<Void, Never> {
        Task {
            let defaults = configuration.storage.retentionDefaults
            while !Task.isCancelled {
                do { try await clock.sleep(until: clock.now() + 60_000) } catch { return }
                let now = clock.now()
                if let accounts = storage.accounts {
                    do {
                        _ = try await accounts.pruneSessions(before: now)
                    } catch {
                        logger?.warning("Ended sessions could not be removed from storage just now", ["error": StoreFailure.from(error, record: "session").reason])
                    }
                }
                let schools: [String: SchoolRetention]
                do {
                    schools = try await storage.retention?.schoolRetentions() ?? [:]
                } catch {
                    logger?.warning("The schools' retention rules could not be read; nothing is deleted by retention this time", ["error": StoreFailure.from(error, record: "retention").reason])
                    continue
                }
                _ = await registry.directory.sweep(
                    finishedBefore: now + -(configuration.storage.finishedRoomMinutes * 60_000),
                    rooms: defaults.cutoffs(.rooms, at: now, schools: schools), audit: defaults.cutoffs(.audit, at: now, schools: schools), at: now
                )
                guard let book = storage.retention else { continue }
                await sweepClasses(book, at: now, storage: configuration.storage, schools: schools, audit: storage.audit, logger: logger)
            }
        }
    }

    /// Every `DisabledOwners.refreshMilliseconds`: the disabled accounts, read again, so an account disabled
    /// on any node stops its rooms' controls here within a second. A read that fails keeps the last answer
    /// (logged once until a read works again).
    static func watch(_ owners: DisabledOwners, in accounts: any AccountBook, clock: any ServerClock, logger: StoryCircleLog) -> Task<Void, Never> {
        Task {
            var failing = false
            while !Task.isCancelled {
                do {
                    owners.replace(with: try await accounts.disabledAccountIDs())
                    failing = false
                } catch {
                    if !failing { logger.warning("Disabled accounts could not be read; the last answer stands", ["error": StoreFailure.from(error, record: "account").reason]) }
                    failing = true
                }
                do { try await clock.sleep(until: clock.now() + DisabledOwners.refreshMilliseconds) } catch { return }
            }
        }
    }

    /// Removed members, unused classes, stories and pictures past their school's retention (`schools`, or
    /// the configured default), each school's count in the audit trail; a failure is logged, and the next
    /// sweep tries again.
    static func sweepClasses(
        _ book: any RetentionBook, at now: ServerTime, storage: ServerConfiguration.Storage, schools: [String: SchoolRetention] = [:],
        audit: (any AuditLog)? = nil, logger: StoryCircleLog?
    ) async {
        for kind in [RetentionKind.removedMembers, .classes, .stories, .pictures] {
            let cutoffs = storage.retentionDefaults.cutoffs(kind, at: now, schools: schools)
            guard !cutoffs.keepsEverything else { continue }
            do {
                let counts = try await book.purge(kind, cutoffs)
                guard counts.total > 0 else { continue }
                logger?.notice("Deleted at the end of their retention period", ["kind": kind.rawValue, "count": String(counts.total)])
                try await audit?.recordRetention(counts, kind: kind, at: now)
            } catch {
                logger?.warning("Stored data could not be swept for its retention period", ["kind": kind.rawValue, "error": StoreFailure.from(error, record: "retention").reason])
            }
        }
    }
}
