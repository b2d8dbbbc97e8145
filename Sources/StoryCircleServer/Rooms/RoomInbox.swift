import Locking
import TransportCore

/// A room's way in: each input is run by the room on the room's executor, after everything submitted before
/// it, from any thread, without blocking.
///
/// Why not an `AsyncStream` read by a loop on the room: a stream resumes its reader on the global executor,
/// which then hops to the room's, so every input woke a thread of the cooperative pool on its way to the
/// loop the room runs on. Here the input goes into the executor's own queue: from the service thread (a
/// frame, a timer) it runs after the turn with no wake-up at all.
///
/// The room is held weakly: a room let go is not kept alive by its timers or its outbox.
final class RoomInbox: Sendable {
    private struct Target {
        weak var room: Room?
    }

    let executor: LoopExecutor
    private let target = Locked(Target())

    init(executor: LoopExecutor) {
        self.executor = executor
    }

    func attach(_ room: Room) {
        target.withLock { $0.room = room }
    }

    func yield(_ input: RoomInput) {
        executor.execute { [target] in
            guard let room = target.withLock({ $0.room }) else { return }
            room.assumeIsolated { $0.receive(input) }
        }
    }
}
