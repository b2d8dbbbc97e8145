import StoryCircleCore

/// The rooms of this node, as the API, the CLI, the router and the tests reach them
/// (`RoomRegistry.directory`): one façade over three parts, each with one job.
///
/// - `RoomLifecycle`: the rooms in memory, from creation or loading to leaving (removed, dropped with
///   their lease, handed over: `RoomLifecycle+Leases`); the only part that changes the map.
/// - `RoomRetention`: which rooms leave memory when they have finished, and which are deleted at the end
///   of the retention period.
/// - `ClassFollowing`: rooms following their class as it is saved, erased from or deleted, here or
///   through another node.
public final class RoomDirectory: Sendable {
    let lifecycle: RoomLifecycle
    let retention: RoomRetention
    let classes: ClassFollowing
    private let clock: any ServerClock
    /// How this node's rooms' tokens are proved: by their MAC, before a room is looked for.
    public let tokens: RoomTokens

    /// Digits in this node's room codes (`RoomRegistry.Settings.roomCodeDigits`).
    public let codeDigits: Int

    init(services: RoomServices, keeper: LeaseKeeper?, roomDefaults: RoomSettings, retentionDays: Int, codeDigits: Int = 6) {
        self.codeDigits = codeDigits
        tokens = services.tokens
        lifecycle = RoomLifecycle(services: services, keeper: keeper, roomDefaults: roomDefaults, codeDigits: codeDigits)
        retention = RoomRetention(lifecycle: lifecycle, store: services.store, storage: services.storage, logger: services.logger, retentionDays: retentionDays)
        clock = services.clock
        classes = ClassFollowing(lifecycle: lifecycle, services: services)
    }

    // MARK: - Rooms (`RoomLifecycle`)

    /// Creates a room for `story`, stores it, and returns its code and tokens.
    /// `storyID`: the library story it is started from (which then cannot be deleted while the room runs).
    /// `owner`: the signed-in teacher who started it (nil for the admin token).
    public func createRoom(
        story: Story, settings: RoomSettingsPatch? = nil, storyID: String? = nil, classRoster: ClassRoster? = nil, owner: Owner? = nil
    ) async throws -> CreatedRoom {
        try await lifecycle.createRoom(story: story, settings: settings, storyID: storyID, classRoster: classRoster, owner: owner)
    }

    /// Brings back every room that had not finished when the server stopped (none with a shared store).
    public func restoreRooms() async throws -> Int {
        try await lifecycle.restoreRooms()
    }

    /// The room `code`, loaded from the store if need be, when `admit` accepts its credentials
    /// (`RoomLifecycle.findRoom`).
    public func findRoom(_ code: String, admitting admit: @escaping @Sendable (RoomCredentials) -> Bool = { _ in true }) async throws -> Room? {
        try await lifecycle.findRoom(code, admitting: admit)
    }

    /// The room `code` if it is in memory.
    public func room(_ code: String) async -> Room? {
        await lifecycle.room(code)
    }

    public var liveRooms: [Room] {
        get async { await lifecycle.liveRooms }
    }

    public var liveRoomCount: Int {
        get async { await lifecycle.liveRooms.count }
    }

    // MARK: - Retention (`RoomRetention`)

    /// Lets finished rooms go and deletes rooms (and audit rows) past their school's retention
    /// (`RoomRetention.sweep`); `now` is when the audit rows of the deletions say they happened.
    public func sweep(finishedBefore cutoff: ServerTime, rooms: RetentionCutoffs, audit: RetentionCutoffs?, at now: ServerTime) async -> (evicted: Int, purged: Int) {
        await retention.sweep(finishedBefore: cutoff, rooms: rooms, audit: audit, at: now)
    }

    /// The same with one cutoff for every school.
    public func sweep(finishedBefore cutoff: ServerTime, createdBefore retentionCutoff: ServerTime, auditBefore auditCutoff: ServerTime? = nil) async -> (evicted: Int, purged: Int) {
        await sweep(finishedBefore: cutoff, rooms: RetentionCutoffs(fallback: retentionCutoff), audit: auditCutoff.map { RetentionCutoffs(fallback: $0) }, at: clock.now())
    }

    // MARK: - Classes (`ClassFollowing`)

    /// A class was saved: its live rooms in memory follow it.
    public func classChanged(_ roster: ClassRoster) async {
        await classes.classChanged(roster)
    }

    /// Lets the finished rooms among `codes` go from memory (their class was deleted).
    public func forgetFinished(_ codes: [String]) async {
        await classes.forgetFinished(codes)
    }

    /// Reloads the finished rooms of a class in memory from the store, in place; never fails: a failure
    /// is logged.
    public func reloadFinishedRooms(ofClass classID: String) async {
        await classes.reloadFinishedRooms(ofClass: classID)
    }

    /// Makes the finished rooms among `codes` that are in memory take what the store holds of them now (a
    /// child of theirs was erased), in place; never fails: a room that cannot be read again leaves memory.
    public func reloadFinished(_ codes: [String]) async {
        await classes.reloadFinished(codes)
    }

    /// Stops every room and waits for them, for the handovers under way and for a reading of the classes.
    func shutDown() async {
        await lifecycle.shutDown()
        await classes.stop()
    }
}
