import Foundation
import StoryCircleCore
import TransportCore

/// A new room's credentials, shown once to whoever created it.
public struct CreatedRoom: Sendable, Equatable {
    public var code: String
    public var teacherToken: String
    public var dashboardToken: String
    public var title: String
    /// The language its screens speak at first (`RoomLanguage.of(settings:story:)`): the join link carries it.
    public var language: String = RoomLanguage.fallback
}

/// The rooms in memory, from birth to leaving: creates them, restores them, loads them when asked for,
/// launches each as its own `Room` actor, and lets them go (removed, dropped with their lease, handed over:
/// `RoomLifecycle+Leases`). The directory's other parts (`RoomRetention`, `ClassFollowing`) decide which
/// rooms go; only this actor changes the map.
///
/// With a store of this node alone (SQLite, memory), unfinished rooms are restored when the server starts;
/// any other stored room (a finished one, one evicted from memory) is loaded when something asks for it.
/// With a shared store (`Storage.isShared`: PostgreSQL), every room is loaded that way: the other nodes own
/// the rest.
///
/// A room runs here only under a lease (`LeaseKeeper`) this node took before loading it, and every record it
/// writes carries that lease, so two nodes never both run a room.
actor RoomLifecycle {
    /// Read by the other parts of the directory; changed only here.
    var rooms: [String: Room] = [:]
    var runs: [String: Task<Void, Never>] = [:]
    /// Rooms being taken and loaded: everyone who asks for one meanwhile waits for the same load.
    private var loads: [String: Task<Room?, any Error>] = [:]
    private var acceptingRooms = true
    /// Why storage is failing, while it is (for rooms' teachers, including rooms loaded meanwhile).
    private var storeProblem: String?
    /// Handovers and what the lease book decided: `shutDown` waits for them.
    let tasks = OwnedTasks()
    private nonisolated let notices: AsyncStream<RoomNotice>
    private nonisolated let noticeSink: AsyncStream<RoomNotice>.Continuation

    let services: RoomServices
    let keeper: LeaseKeeper?
    let refusals: Refusals
    let roomDefaults: RoomSettings
    /// Digits in a new room's code (`RoomRegistry.Settings.roomCodeDigits`).
    let codeDigits: Int
    var logger: StoryCircleLog { services.logger }
    private var clock: any ServerClock { services.clock }
    private var store: any RoomStore { services.store }

    init(services: RoomServices, keeper: LeaseKeeper?, roomDefaults: RoomSettings, codeDigits: Int = 6) {
        (notices, noticeSink) = AsyncStream.makeStream(of: RoomNotice.self)
        var services = services
        services.notify = { [noticeSink] notice in noticeSink.yield(notice) }
        self.services = services
        self.keeper = keeper
        self.refusals = services.refusals
        self.roomDefaults = roomDefaults
        self.codeDigits = codeDigits
    }

    /// Handles what rooms hand in (`RoomNotice`) until `shutDown`.
    func run() async {
        for await notice in notices {
            switch notice {
            case .leaseLost(let room):
                if let lease = room.lease { await drop(lease, because: "write refused") }
            case .unreadable(let room):
                guard await remove(room.code, room, RoomError(.storageUnavailable, "The room cannot be saved or read just now. Please try again in a moment.")) else { continue }
                logger.warning("Room released until its storage can be read", ["room.code": room.code])
            }
        }
    }

    // MARK: - Creating and finding rooms

    /// Creates a room for `story`, stores it, and returns its code and tokens.
    func createRoom(story: Story, settings patch: RoomSettingsPatch?, storyID: String? = nil, classRoster: ClassRoster? = nil, owner: Owner? = nil) async throws -> CreatedRoom {
        guard acceptingRooms else { throw RoomError(.serverShuttingDown, "The server is shutting down.") }
        let settings = try roomDefaults.applying(patch ?? RoomSettingsPatch())
        do {
            let now = clock.now()
            let (code, teacherToken) = try await storeNewRoom(story: story, settings: settings, at: now, storyID: storyID, classID: classRoster?.id, owner: owner)
            // Derived, so the teacher's page can be given the projector link later (only hashes are stored).
            let dashboardToken = RoomCredentials.dashboardToken(forTeacherToken: teacherToken)
            let credentials = RoomCredentials(teacherToken: teacherToken, dashboardToken: dashboardToken)
            if !services.storage.isShared {
                let lease = try await keeper?.acquire(code)
                let state = RoomState(
                    code: RoomCode(code), story: story, settings: settings, credentials: credentials, timing: services.timing, lookalikes: services.lookalikes,
                    classRoster: classRoster
                )
                // Stored, so the next start restores it; this server no longer runs anything new.
                guard await launch(state, createdAt: now, lease: lease, owner: owner, initial: state.lobbyReadAhead) != nil else {
                    throw RoomError(.serverShuttingDown, "The server is shutting down.")
                }
            }
            services.metrics.roomCreated()
            logger.info("Room created", ["room.code": code])
            return CreatedRoom(code: code, teacherToken: teacherToken, dashboardToken: dashboardToken, title: story.title,
                               language: RoomLanguage.of(settings: settings, story: story))
        } catch let error as RoomError {
            throw error
        } catch {
            let failure = StoreFailure.from(error, record: "room.created")
            services.health?.poke()
            logger.error("Could not store a new room", ["error": failure.reason])
            throw RoomError(.storageUnavailable, "The room could not be saved (\(failure.reason)), so it was not created. Try again once storage works.")
        }
    }

    /// Draws codes until one is free, and stores the room under it with a teacher token for that code (a
    /// token carries its room's code under its MAC, `RoomTokens`).
    private func storeNewRoom(
        story: Story, settings: RoomSettings, at now: ServerTime, storyID: String?, classID: String?, owner: Owner?
    ) async throws -> (code: String, teacherToken: String) {
        for _ in 1..<1_000 {
            let code = Tokens.roomCode(digits: codeDigits)
            if rooms[code] != nil { continue }
            if try await store.codeExists(code) { continue }
            let teacherToken = services.tokens.teacherToken(room: code)
            let credentials = RoomCredentials(teacherToken: teacherToken, dashboardToken: RoomCredentials.dashboardToken(forTeacherToken: teacherToken))
            do {
                try await store.createRoom(RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: now, storyID: storyID, classID: classID, owner: owner))
                return (code, teacherToken)
            } catch let failure as StoreFailure where failure.kind == .rejected {
                // Another node took the same code between the check and the insert (the code is the table's
                // key): draw another.
                guard (try? await store.codeExists(code)) == true else { throw failure }
            }
        }
        throw RoomError(.internalError, "No free room code could be found.")
    }

    /// Brings back every room that had not finished when the server stopped. Nothing with a shared store:
    /// the other nodes own the rest, and each room comes back on the node the proxy sends it to.
    func restoreRooms() async throws -> Int {
        guard !services.storage.isShared else { return 0 }
        let archives = try await store.unfinishedRooms()
        for archive in archives where rooms[archive.header.code] == nil {
            let lease = try await keeper?.acquire(archive.header.code)
            do {
                guard try await adopt(archive, lease: lease) != nil else { break }
            } catch {
                // Left in storage: the first connection that asks for it loads it (`findRoom`).
                logger.error("Room not restored: its class cannot be read", [
                    "room.code": archive.header.code, "error": StoreFailure.from(error, record: "class").reason,
                ])
                continue
            }
            logger.notice("Room restored", ["room.code": archive.header.code, "room.phase": archive.lastPhase.rawValue])
        }
        return archives.count
    }

    /// The room `code`: the live one, or else the stored one, loaded into memory, when `admit` accepts its
    /// credentials (so a wrong token does not load anything). `nil` when there is no such room, or it is not
    /// admitted. This is the one way a room that is not in memory comes back: a finished room after a
    /// restart, a room evicted after it finished, or one that could not be read back for a while.
    ///
    /// Loading takes the room's lease first, then reads it (so it sees everything an earlier owner stored).
    /// Throws `RoomLeaseError.held` when another node holds the room (the caller refuses with `try_again`).
    func findRoom(_ code: String, admitting admit: @escaping @Sendable (RoomCredentials) -> Bool = { _ in true }) async throws -> Room? {
        if let room = rooms[code] { return room }
        guard acceptingRooms else { return nil }
        // Its lease is still ours until the outbox finishes: loading it again here would only be refused.
        if let keeper, await keeper.isHandingOver(code) { throw RoomLeaseError.held(room: code, by: keeper.nodeId) }
        if let room = rooms[code] { return room }
        let load: Task<Room?, any Error>
        if let pending = loads[code] {
            load = pending
        } else {
            load = Task { try await self.load(code) }
            loads[code] = load
        }
        guard let room = try await load.value, admit(room.credentials) else { return nil }
        return room
    }

    private func load(_ code: String) async throws -> Room? {
        defer { loads[code] = nil }
        var lease: RoomLease?
        if let keeper {
            // A code that is no room is told by a read, never by the lease: the lease book's one connection
            // serves every room of the node, and must not be kept busy by codes someone guesses.
            guard try await store.codeExists(code) else { return nil }
            do {
                lease = try await keeper.acquire(code)
            } catch RoomLeaseError.unknownRoom {
                return nil
            }
        }
        let archive: RoomArchive?
        do {
            archive = try await store.archive(room: code)
        } catch {
            if let lease { await keeper?.release(lease) }
            throw error
        }
        guard let archive else {
            if let lease { await keeper?.release(lease) }
            return nil
        }
        if let room = rooms[code] {
            if let lease { await keeper?.release(lease) }
            return room
        }
        guard let room = try await adopt(archive, lease: lease) else { return nil }
        logger.info("Room loaded from storage", ["room.code": code, "room.phase": archive.lastPhase.rawValue, "lease.epoch": lease.map { String($0.epoch) } ?? "none"])
        return room
    }

    /// The room `code` if it is in memory (`findRoom` also loads it from storage).
    func room(_ code: String) -> Room? {
        rooms[code]
    }

    var liveRooms: [Room] { Array(rooms.values) }

    /// Makes a stored room live again, where the records say it was (`RoomState.restore`); `nil` when the
    /// server is shutting down.
    ///
    /// A class room's names come from its class as it is now: a class that cannot be read throws (the
    /// store's error), and the room is not adopted, rather than run with nobody to pick; its lease is then
    /// given back, and the room is loaded again the next time it is asked for.
    private func adopt(_ archive: RoomArchive, lease: RoomLease?) async throws -> Room? {
        var roster: ClassRoster?
        if let classID = archive.header.classID, let book = services.storage.classes {
            do {
                roster = try await book.schoolClass(classID).map(ClassRoster.init)
            } catch {
                if let lease { await keeper?.release(lease) }
                throw error
            }
        }
        let (state, directives) = RoomState.restore(archive, timing: services.timing, lookalikes: services.lookalikes, classRoster: roster, at: clock.now())
        let room = await launch(state, createdAt: archive.header.createdAt, lease: lease, owner: archive.header.owner, initial: directives)
        if room != nil { services.metrics.roomRestored() }
        return room
    }

    /// Runs a room here, or (`nil`) gives its lease back if the server has begun shutting down: the check
    /// and the room's entry in the map are one step, so a shutdown sees every room that will run.
    private func launch(_ state: RoomState, createdAt: ServerTime, lease: RoomLease?, owner: Owner? = nil, initial: [RoomDirective]) async -> Room? {
        guard acceptingRooms, rooms[state.code.rawValue] == nil else {
            if let lease { await keeper?.release(lease) }
            return nil
        }
        let room = Room(state: state, createdAt: createdAt, lease: lease, owner: owner, services: services)
        rooms[room.code] = room
        runs[room.code] = Task { await room.run(initial: initial) }
        if let storeProblem { room.submit(.storeHealth(problem: storeProblem)) }
        if let lease { await keeper?.adopted(lease) }
        return room
    }

    // MARK: - Letting rooms go

    /// Takes a room out of memory: every connection bound to it is told why and closed. Its lease is given
    /// up (`releasing`), so another node need not wait for it to expire. `false` when the room had gone
    /// meanwhile (or come back as another), or the server is shutting down.
    @discardableResult
    func remove(_ code: String, _ room: Room, _ error: RoomError, releasing: Bool = true) async -> Bool {
        // A sweep awaits between rooms: by now this one may have gone (or come back as another). Once the
        // server is shutting down, `shutDown` stops every room in the map, each with its outbox.
        guard acceptingRooms, rooms[code] === room else { return false }
        rooms[code] = nil
        runs[code] = nil
        if let lease = room.lease { await keeper?.removed(lease, releasing: releasing) }
        refusals.refuse(services.bindings.unbindAll(of: room), error)
        await room.shutDown()
        return true
    }

    // MARK: - Storage and shutdown

    func storeHealthChanged(_ health: StoreHealth) {
        storeProblem = health.reason
        for room in rooms.values { room.submit(.storeHealth(problem: storeProblem)) }
    }

    /// Stops every room (timers, narration, outbox) and waits for their inboxes, the loads in flight and
    /// the handovers to finish.
    func shutDown() async {
        acceptingRooms = false
        noticeSink.finish()
        for load in loads.values { _ = try? await load.value }
        while let (code, room) = rooms.first {
            rooms[code] = nil
            await room.shutDown()
            await runs.removeValue(forKey: code)?.value
            await room.stopOutbox()
        }
        await tasks.stop()
    }
}
