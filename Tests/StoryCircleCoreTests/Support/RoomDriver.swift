import Foundation
@testable import StoryCircleCore

/// Drives a `RoomState` the way the shell does, with a manual timeline: timers the room schedules fire
/// only when the test advances time past them. Every directive is kept for inspection.
struct RoomDriver {
    var state: RoomState
    var now = ServerTime(milliseconds: 1_000_000)
    private(set) var log: [RoomDirective] = []
    private(set) var timers: [RoomTimer.Slot: (timer: RoomTimer, at: ServerTime)] = [:]
    private(set) var narrationRequests: [NarrationRequest] = []
    private var nextConnection: UInt64 = 1
    private(set) var closed: [ConnectionID: CloseReason] = [:]

    private var initialSettings = RoomSettings()

    init(story: Story = Fixtures.story, settings: RoomSettings = .init(), timing: RoomTiming = .init(), classRoster: ClassRoster? = nil) {
        initialSettings = settings
        state = RoomState(code: "123456", story: story, settings: settings, credentials: Fixtures.credentials, timing: timing, lookalikes: LookalikeTable(), classRoster: classRoster)
    }

    init(restoring state: RoomState, at now: ServerTime, directives: [RoomDirective]) {
        self.state = state
        self.now = now
        record(directives)
    }

    @discardableResult
    mutating func apply(_ event: RoomEvent) -> [RoomDirective] {
        let directives = state.handle(event)
        record(directives)
        return directives
    }

    private mutating func record(_ directives: [RoomDirective]) {
        log += directives
        for directive in directives {
            switch directive {
            case .schedule(let timer, let at): timers[timer.slot] = (timer, at)
            case .prepareNarration(let request): narrationRequests.append(request)
            case .close(let connection, let reason): closed[connection] = reason
            default: break
            }
        }
    }

    mutating func newConnection() -> ConnectionID {
        defer { nextConnection += 1 }
        return ConnectionID(nextConnection)
    }

    /// Moves time forward to `time`, firing due timers in order at their own instants.
    mutating func advance(to time: ServerTime) {
        while let (slot, due) = timers.filter({ $0.value.at <= time }).min(by: { $0.value.at < $1.value.at }) {
            timers[slot] = nil
            now = max(now, due.at)
            apply(.timer(due.timer, at: now))
        }
        now = max(now, time)
    }

    mutating func advance(by milliseconds: Int) {
        advance(to: now + milliseconds)
    }

    // MARK: Participants

    struct Child {
        var connection: ConnectionID
        var token: String
        var id: String
    }

    @discardableResult
    mutating func join(_ nickname: String) -> Child? {
        let connection = newConnection()
        let token = "resume-\(nickname)-\(connection.rawValue)"
        let directives = apply(.hello(connection, .join(nickname: nickname, resumeToken: token), at: now))
        for case .send(.welcome(let welcome), _) in directives {
            return Child(connection: connection, token: token, id: welcome.player!.id)
        }
        return nil
    }

    struct Refused: Error, CustomStringConvertible {
        var error: RoomError?
        var description: String { "join refused: \(error.map(String.init(describing:)) ?? "no reply")" }
    }

    /// Joins a child who must be admitted.
    mutating func child(_ nickname: String) throws -> Child {
        guard let child = join(nickname) else {
            throw Refused(error: lastError(to: ConnectionID(nextConnection - 1)))
        }
        return child
    }

    /// The connection `newConnection` handed out last (the one a refused `join` used).
    var lastConnection: UInt64 { nextConnection - 1 }

    mutating func dashboard() -> ConnectionID {
        let connection = newConnection()
        apply(.hello(connection, .watch(token: "dashboard-secret"), at: now))
        return connection
    }

    mutating func teacher() -> ConnectionID {
        let connection = newConnection()
        apply(.hello(connection, .control(token: "teacher-secret"), at: now))
        return connection
    }

    @discardableResult
    mutating func command(_ command: TeacherCommand) throws(RoomError) -> [RoomDirective] {
        let directives = try state.perform(command, at: now)
        record(directives)
        return directives
    }

    @discardableResult
    mutating func answer(_ child: Child, question: Int, option: Int, roundTripMs: Int? = nil) -> [RoomDirective] {
        // The page reports its round trip in a ping; the room credits half of it to the answer's speed.
        if let roundTripMs { apply(.message(child.connection, .ping(id: 0, clientTime: nil, roundTripMs: roundTripMs), at: now)) }
        return apply(.message(child.connection, .answer(question: question, option: option), at: now))
    }

    /// Starts the room and answers its narration request with `plan`, as the shell would.
    mutating func startAndPrepare(_ plan: NarrationPlan = Fixtures.plan()) throws(RoomError) {
        try command(.start)
        prepared(plan)
    }

    mutating func prepared(_ plan: NarrationPlan = Fixtures.plan()) {
        let request = narrationRequests.last!
        apply(.narration(.prepared(preparation: request.preparation, plan), at: now))
    }

    /// Plays the whole narration and waits until the first question opens.
    mutating func narrateToFirstQuestion() {
        while case .narrating = state.phase { advance(by: 500) }
        if case .question(let run) = state.phase { advance(to: run.opensAt) }
    }

    /// Waits until the open question (after a `next`) opens.
    mutating func waitForOpening() {
        if case .question(let run) = state.phase { advance(to: run.opensAt) }
    }

    // MARK: Reading what was sent

    /// Messages sent to `connection`, in order (whether they wait for records or not).
    func messages(to connection: ConnectionID) -> [ServerMessage] {
        log.compactMap { directive in
            switch directive {
            case .send(let message, let recipients), .sendAtOnce(let message, let recipients):
                recipients.contains(connection) ? message : nil
            default:
                nil
            }
        }
    }

    func lastError(to connection: ConnectionID) -> RoomError? {
        messages(to: connection).reversed().lazy.compactMap { if case .error(let error) = $0 { error } else { nil } }.first
    }

    var persisted: [RoomRecord] {
        log.compactMap { if case .persist(let record) = $0 { record } else { nil } }
    }

    /// The archive a store would hold after this run.
    func archive() -> RoomArchive {
        var archive = RoomArchive(header: RoomHeader(code: state.code.rawValue, story: state.story, settings: initialSettings, credentials: Fixtures.credentials, createdAt: ServerTime(milliseconds: 0), classID: state.classRoster?.id))
        persisted.forEach { archive.apply($0) }
        return archive
    }
}

extension RoomError {
    static func code(_ error: RoomError?) -> ErrorCode? { error?.code }
}
