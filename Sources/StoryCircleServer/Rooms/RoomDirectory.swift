import Foundation
import StoryCircleCore
import WebSocketTransport

/// A new room's credentials, shown once to whoever created it.
public struct CreatedRoom: Sendable, Equatable {
    public var code: String
    public var teacherToken: String
    public var dashboardToken: String
    public var title: String
    /// The language its screens speak at first (`RoomLanguage.of(settings:story:)`): the join link carries it.
    public var language: String = RoomLanguage.fallback
}

/// The rooms in memory: creates them, restores them, loads them when asked for, and lets them go (evicted,
/// deleted, dropped with their lease, handed over). Each room runs as its own `Room` actor.
///
/// With a store of its own (SQLite, memory), unfinished rooms are restored when the server starts; any other
/// stored room (a finished one, one evicted from memory) is loaded when something asks for it. With a store
/// that several nodes share (PostgreSQL), every room is loaded that way: the other nodes own the rest.
///
/// A room runs here only under a lease (`LeaseKeeper`) this node took before loading it, and every record it
/// writes carries that lease, so two nodes never both run a room.
actor RoomDirectory {
    private var rooms: [String: Room] = [:]
    private var runs: [String: Task<Void, Never>] = [:]
    /// Rooms being taken and loaded: everyone who asks for one meanwhile waits for the same load.
    private var loads: [String: Task<Room?, any Error>] = [:]
    private var acceptingRooms = true
    /// A `followStoredClasses` is under way (at most one at a time).
    private var followingClasses = false
    /// Why storage is failing, while it is (for rooms' teachers, including rooms loaded meanwhile).
    private var storeProblem: String?
    private let tasks = OwnedTasks()
    private nonisolated let notices: AsyncStream<RoomNotice>
    private nonisolated let noticeSink: AsyncStream<RoomNotice>.Continuation

    let store: any RoomStore
    let keeper: LeaseKeeper?
    let bindings: ConnectionBindings
    let refusals: Refusals
    let services: RoomServices
    let timing: RoomTiming
    let lookalikes: any ConfusableSkeleton
    let roomDefaults: RoomSettings
    let retentionDays: Int
    /// Whether other nodes may share the store: then no room is restored at start or run at creation, only
    /// loaded by the node the proxy sends it to.
    let sharedStore: Bool
    private var logger: StoryCircleLog { services.logger }
    private var clock: any ServerClock { services.clock }

    init(
        services: RoomServices, keeper: LeaseKeeper?, bindings: ConnectionBindings, refusals: Refusals, timing: RoomTiming,
        lookalikes: any ConfusableSkeleton, roomDefaults: RoomSettings, retentionDays: Int, sharedStore: Bool
    ) {
        (notices, noticeSink) = AsyncStream.makeStream(of: RoomNotice.self)
        var services = services
        services.notify = { [noticeSink] notice in noticeSink.yield(notice) }
        self.services = services
        self.store = services.store
        self.keeper = keeper
        self.bindings = bindings
        self.refusals = refusals
        self.timing = timing
        self.lookalikes = lookalikes
        self.roomDefaults = roomDefaults
        self.retentionDays = retentionDays
        self.sharedStore = sharedStore
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
    func createRoom(story: Story, settings patch: RoomSettingsPatch?, storyID: String? = nil, classRoster: ClassRoster? = nil) async throws -> CreatedRoom {
        guard acceptingRooms else { throw RoomError(.serverShuttingDown, "The server is shutting down.") }
        let settings = try roomDefaults.applying(patch ?? RoomSettingsPatch())
        do {
            let teacherToken = Tokens.generate()
            // Derived, so the teacher's page can be given the projector link later (only hashes are stored).
            let dashboardToken = RoomCredentials.dashboardToken(forTeacherToken: teacherToken)
            let credentials = RoomCredentials(teacherToken: teacherToken, dashboardToken: dashboardToken)
            let now = clock.now()
            let code = try await storeNewRoom(story: story, settings: settings, credentials: credentials, at: now, storyID: storyID, classID: classRoster?.id)
            if !sharedStore {
                let lease = try await keeper?.acquire(code)
                let state = RoomState(code: RoomCode(code), story: story, settings: settings, credentials: credentials, timing: timing, lookalikes: lookalikes, classRoster: classRoster)
                // Stored, so the next start restores it; this server no longer runs anything new.
                guard await launch(state, createdAt: now, lease: lease, initial: state.lobbyReadAhead) != nil else {
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

    /// Draws codes until one is free, and stores the room under it.
    private func storeNewRoom(story: Story, settings: RoomSettings, credentials: RoomCredentials, at now: ServerTime, storyID: String?, classID: String?) async throws -> String {
        for _ in 1..<1_000 {
            let code = Tokens.roomCode()
            if rooms[code] != nil { continue }
            if try await store.codeExists(code) { continue }
            do {
                try await store.createRoom(RoomHeader(code: code, story: story, settings: settings, credentials: credentials, createdAt: now, storyID: storyID, classID: classID))
                return code
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
        guard !sharedStore else { return 0 }
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
        if let classID = archive.header.classID, let book = store as? any ClassBook {
            do {
                roster = try await book.schoolClass(classID).map(ClassRoster.init)
            } catch {
                if let lease { await keeper?.release(lease) }
                throw error
            }
        }
        let (state, directives) = RoomState.restore(archive, timing: timing, lookalikes: lookalikes, classRoster: roster, at: clock.now())
        let room = await launch(state, createdAt: archive.header.createdAt, lease: lease, initial: directives)
        if room != nil { services.metrics.roomRestored() }
        return room
    }

    /// Runs a room here, or (`nil`) gives its lease back if the server has begun shutting down: the check
    /// and the room's entry in the map are one step, so a shutdown sees every room that will run.
    private func launch(_ state: RoomState, createdAt: ServerTime, lease: RoomLease?, initial: [RoomDirective]) async -> Room? {
        guard acceptingRooms, rooms[state.code.rawValue] == nil else {
            if let lease { await keeper?.release(lease) }
            return nil
        }
        let room = Room(state: state, createdAt: createdAt, lease: lease, services: services)
        rooms[room.code] = room
        runs[room.code] = Task { await room.run(initial: initial) }
        if let storeProblem { room.submit(.storeHealth(problem: storeProblem)) }
        if let lease { await keeper?.adopted(lease) }
        return room
    }

    // MARK: - Letting rooms go

    /// Forgets finished rooms older than `cutoff` that nobody is connected to (their results stay in
    /// storage, and the room is loaded again if someone asks for it), and deletes rooms past the retention
    /// period: from memory, closing their connections (1001), and from storage.
    func sweep(finishedBefore cutoff: ServerTime, createdBefore retentionCutoff: ServerTime) async -> (evicted: Int, purged: Int) {
        var evicted = 0
        for (code, room) in rooms {
            guard let finishedAt = await room.finishedAt, finishedAt < cutoff, await room.connectionCount == 0 else { continue }
            if await remove(code, room, RoomError(.roomEnded, "This room has finished.")) { evicted += 1 }
        }
        let days = retentionDays
        for (code, room) in rooms where room.createdAt < retentionCutoff {
            guard await remove(code, room, RoomError(.roomEnded, "This room has been deleted: rooms are kept for \(days) day\(days == 1 ? "" : "s").")) else { continue }
            logger.notice("Room deleted at the end of its retention period", ["room.code": code])
        }
        let purged = (try? await store.purge(createdBefore: retentionCutoff)) ?? 0
        if purged > 0 { logger.notice("Old rooms purged", ["rooms": String(purged)]) }
        return (evicted, purged)
    }

    /// Lets finished rooms among `codes` go from memory (their class was deleted, and they with it).
    func forgetFinished(_ codes: [String]) async {
        for code in codes {
            guard let room = rooms[code], await room.phase == .finished else { continue }
            await remove(code, room, RoomError(.roomEnded, "This room has finished."))
        }
    }

    /// Makes finished rooms among `codes` that are in memory take what the store holds of them now (after a
    /// child's data was erased there), in place (`Room.reload`), so that the pages still on them get the
    /// results as stored. A room that cannot be read again or reload is let go from memory instead: the
    /// next request reads it from the store.
    func reloadFinished(_ codes: [String]) async {
        for code in codes {
            guard let room = rooms[code], await room.phase == .finished else { continue }
            do {
                var roster: ClassRoster?
                let archive = try await store.archive(room: code)
                if let classID = archive?.header.classID, let book = store as? any ClassBook {
                    roster = try await book.schoolClass(classID).map(ClassRoster.init)
                }
                guard rooms[code] === room else { continue }
                if let archive, await room.reload(from: archive, classRoster: roster) { continue }
                // Its last records (the room has just ended) are still being stored: letting it go now would
                // give up its lease before they are. Once they are, it is read again, with them.
                if archive != nil, await room.waitUntilStored(), rooms[code] === room,
                   let again = try await store.archive(room: code), await room.reload(from: again, classRoster: roster) { continue }
            } catch {
                logger.error("Room could not be read again after its class changed; it is let go from memory", [
                    "room.code": code, "error": StoreFailure.from(error, record: "archive").reason,
                ])
            }
            await remove(code, room, RoomError(.roomEnded, "This room has finished."))
        }
    }

    /// Reloads the finished rooms of class `classID` in memory (`reloadFinished`), after the class's data
    /// changed in the store. The change has committed by then, so a store that cannot list the rooms is only logged.
    func reloadFinishedRooms(ofClass classID: String) async {
        guard let book = store as? any ClassBook else { return }
        do {
            await reloadFinished(try await book.classRooms(classID).map(\.header.code))
        } catch {
            logger.error("Rooms of a changed class could not be listed to let them go from memory", [
                "class.id": classID, "error": StoreFailure.from(error, record: "class.rooms").reason,
            ])
        }
    }

    /// The class `roster.id` was saved: its live rooms in memory here follow it (`RoomState.followClass`).
    func classChanged(_ roster: ClassRoster) async {
        for room in rooms.values where await room.classRoster?.id == roster.id {
            await room.followClass(roster)
        }
    }

    /// Starts `followStoredClasses` as a task of the directory's own, unless the last one is still reading.
    func followStoredClassesUnlessFollowing() {
        guard !followingClasses else { return }
        followingClasses = true
        tasks.spawn { [self] in
            await followStoredClasses()
            await followedClasses()
        }
    }

    private func followedClasses() { followingClasses = false }

    /// With a store shared by several nodes, a class may be changed through another node: every class
    /// whose rooms are in memory here is read again, and a room whose class's version moved follows it (a
    /// live one offers the names as they are, `classChanged`; a finished one is reloaded in place,
    /// `reloadFinished`, so a child erased elsewhere is not shown here from memory). A class deleted
    /// elsewhere takes its finished rooms out of memory. Failures are logged; the next round tries again.
    func followStoredClasses() async {
        guard let book = store as? any ClassBook else { return }
        var byClass: [String: [(code: String, room: Room, version: Int)]] = [:]
        for (code, room) in rooms {
            if let roster = await room.classRoster { byClass[roster.id, default: []].append((code, room, roster.version)) }
        }
        for (classID, held) in byClass {
            let stored: SchoolClass?
            do {
                stored = try await book.schoolClass(classID)
            } catch {
                logger.warning("Class could not be read to see whether it changed", ["class.id": classID, "error": StoreFailure.from(error, record: "class").reason])
                continue
            }
            guard let stored else {
                await forgetFinished(held.map(\.code))
                continue
            }
            let changed = held.filter { $0.version != stored.version }
            guard !changed.isEmpty else { continue }
            var finished: [String] = []
            for entry in changed {
                if await entry.room.phase == .finished { finished.append(entry.code) } else { await entry.room.followClass(ClassRoster(stored)) }
            }
            await reloadFinished(finished)
        }
    }

    /// Takes a room out of memory: every connection bound to it is told why and closed. Its lease is given
    /// up (`releasing`), so another node need not wait for it to expire.
    @discardableResult
    private func remove(_ code: String, _ room: Room, _ error: RoomError, releasing: Bool = true) async -> Bool {
        // A sweep awaits between rooms: by now this one may have gone (or come back as another). Once the
        // server is shutting down, `shutDown` stops every room in the map, each with its outbox.
        guard acceptingRooms, rooms[code] === room else { return false }
        rooms[code] = nil
        runs[code] = nil
        if let lease = room.lease { await keeper?.removed(lease, releasing: releasing) }
        refusals.refuse(bindings.unbindAll(of: room), error)
        await room.shutDown()
        return true
    }

    /// Stops a room whose lease is gone: its connections are told to try again (1012), which brings them to
    /// whichever node holds the room now.
    func drop(_ lease: RoomLease, because why: String) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else { return }
        if await remove(lease.room, room, .moved, releasing: false) {
            services.metrics.roomLeaseLost()
            logger.warning("Room stopped: its lease is lost", ["room.code": lease.room, "lease.epoch": String(lease.epoch), "why": why])
        }
    }

    /// Lets go of a room nobody is connected to, so the node the proxy sends it to can take it.
    func releaseIdle(_ lease: RoomLease) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else { return }
        if await remove(lease.room, room, .moved) {
            logger.info("Room released after a while with nobody connected", ["room.code": lease.room])
        }
    }

    /// Hands a room to the node that asked for it: the room leaves the map at once (so hellos for it are
    /// told to try again), finishes what it already took (its inbox, then its outbox, so every
    /// acknowledgement goes out and everything acknowledged is stored; what its connections send from now
    /// on is dropped, unacknowledged), then the lease is released and only then are the connections closed
    /// with 1012, so they reconnect (through the proxy, to the node that wants the room) when that node can
    /// take it at once. Owned: `shutDown` waits for it.
    func handOver(_ lease: RoomLease, to wanter: String) async {
        guard let room = rooms[lease.room], room.lease?.epoch == lease.epoch else {
            // Let go meanwhile (its lease released with it): nothing to hand over, and the code is free.
            await keeper?.abandonHandOver(lease)
            return
        }
        rooms[lease.room] = nil
        let run = runs.removeValue(forKey: lease.room)
        let (keeper, bindings, refusals, logger) = (keeper, bindings, refusals, logger)
        tasks.spawn {
            let started = ContinuousClock.now
            await room.shutDown()
            // The inbox ends after what it already holds: those messages are decided (and their records
            // issued) before the wait, so their acknowledgements go out under the lease too.
            await run?.value
            let stored = await room.waitUntilStored()
            await room.stopOutbox()
            await keeper?.handedOver(lease)
            let open = bindings.unbindAll(of: room)
            refusals.refuse(open, .moved)
            logger.notice("Room handed over to the node that asked for it", [
                "room.code": lease.room, "lease.epoch": String(lease.epoch), "node.wanting": wanter,
                "connections": String(open.count), "records.stored": String(stored), "duration.ms": String((ContinuousClock.now - started).leaseMilliseconds),
            ])
        }
    }

    /// Who is connected to each room, for letting idle rooms go.
    func occupancy() async -> [String: Bool] {
        var connected: [String: Bool] = [:]
        for (code, room) in rooms { connected[code] = await room.connectionCount > 0 }
        return connected
    }

    /// Carries out what the lease book decided, each as a task of its own: a room may take a while to stop
    /// (its narration, its outbox), and must not hold up the others or the next renewal.
    func carryOut(_ actions: [LeaseBook.Action]) {
        for action in actions {
            tasks.spawn { [self] in
                switch action {
                case .drop(let lease, let why): await drop(lease, because: why)
                case .handOver(let lease, let wanter): await handOver(lease, to: wanter)
                case .releaseIdle(let lease): await releaseIdle(lease)
                }
            }
        }
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
