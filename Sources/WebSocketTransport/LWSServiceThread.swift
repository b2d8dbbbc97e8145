import CLibWebSockets
import Foundation
import Locking
import Synchronization

/// The thread that services one libwebsockets context: the server's and the test client's alike.
///
/// `start` runs a body on a new thread and returns once the body reports its context running (or throws
/// what the body threw before that). Other threads reach the loop only through `wake`, which calls
/// `lws_cancel_service()`, the one lws call that is safe from anywhere. `requestStop` and
/// `waitUntilFinished` end it: the body's loop looks at `isStopRequested` after each turn and returns once
/// it has destroyed its context.
package final class LWSServiceThread: Sendable {
    private enum Phase: Sendable {
        case notStarted
        case starting
        case running
        case failed(LWSError)
        case finished
    }

    private let phase = LockedCondition<Phase>(.notStarted)
    /// The running context's address, 0 while there is none: `wake` must not reach a context being built
    /// or destroyed.
    private let context = Atomic<UInt>(0)
    private let stopRequested = Atomic<Bool>(false)

    package init() {}

    /// Runs `body` on a thread named `name`; returns once `body` has called `running(_:)`, or has returned.
    /// `body` creates its context, calls `running(_:)`, services the context until `isStopRequested` (and
    /// whatever else it waits for), calls `contextEnding()` and destroys the context.
    package func start(name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () throws(LWSError) -> Void) throws(LWSError) {
        phase.withLock { phase in
            guard case .notStarted = phase else { preconditionFailure("a service thread starts once") }
            phase = .starting
        }
        let thread = Thread { [self] in
            var failure: LWSError?
            do throws(LWSError) { try body() } catch { failure = error }
            context.store(0, ordering: .releasing)
            phase.withLockAndWake { phase in
                if case .starting = phase, let failure { phase = .failed(failure) } else { phase = .finished }
            }
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
        let outcome = phase.waitUntil({ if case .starting = $0 { false } else { true } }, then: { $0 })
        if case .failed(let error) = outcome { throw error }
    }

    /// On the service thread, once the context exists: `start` returns, and `wake` reaches the context.
    package func running(_ context: OpaquePointer) {
        self.context.store(UInt(bitPattern: context), ordering: .releasing)
        phase.withLockAndWake { $0 = .running }
    }

    /// On the service thread, before it destroys the context.
    package func contextEnding() {
        context.store(0, ordering: .releasing)
    }

    /// Whether a stop was asked for; the body's loop checks it after each turn.
    package var isStopRequested: Bool { stopRequested.load(ordering: .acquiring) }

    /// Ends the loop's current turn (or its next, if it is busy), from any thread.
    package func wake() {
        let raw = context.load(ordering: .acquiring)
        guard raw != 0, let context = OpaquePointer(bitPattern: raw) else { return }
        lws_cancel_service(context)
    }

    /// Asks the loop to stop. False when it is not running or a stop was already asked for: then whoever
    /// asked first does the waiting.
    package func requestStop() -> Bool {
        context.load(ordering: .acquiring) != 0 && !stopRequested.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Waits until the body has returned, or until `deadline`. The loop may sleep until its next timer and
    /// looks at the stop request only when a turn ends, so this wakes it every 20 ms meanwhile. Never call
    /// it from the service thread.
    package func waitUntilFinished(deadline: ContinuousClock.Instant? = nil) {
        while !phase.waitUntil({ if case .finished = $0 { true } else { false } }, timeout: .milliseconds(20)) {
            wake()
            if let deadline, ContinuousClock.now > deadline { return }
        }
    }
}
