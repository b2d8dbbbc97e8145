import CLibEV
import TransportCore

// The loop executor's timers fire from one libev timer on the service loop, armed for the earliest of them
// after every turn. Not lws's timers: lws keeps them in a sorted list that each insert walks (the executor
// keeps a heap, `TimerHeap`), and one set outside lws's own servicing is not seen by the loop until its next
// wake-up.
extension WebSocketServer {
    /// Service thread, after a turn: arms the timer for the executor's earliest timer, if that changed.
    func armExecutorTimer(_ loop: EventLoop) {
        guard let deadline = loopExecutor.nextTimerDeadline, deadline != executorTimerDeadline else { return }
        let timer = executorTimer ?? {
            let timer = UnsafeMutablePointer<sc_ev_timer_t>.allocate(capacity: 1)
            timer.initialize(to: sc_ev_timer_t())
            timer.pointee.owner = Unmanaged.passUnretained(self).toOpaque()
            executorTimer = timer
            return timer
        }()
        let now = LoopExecutor.monotonicNanoseconds()
        // A timer that fires a little early finds nothing due and is armed again for the rest.
        let seconds = deadline > now ? Double(deadline - now) / 1e9 : 0
        executorTimerDeadline = deadline
        sc_ev_timer_start(loop.loop, timer, executorTimerFired, seconds)
    }

    /// Service thread, inside the loop's turn.
    func fireExecutorTimers() {
        executorTimerDeadline = nil
        loopExecutor.fireDueTimers()
    }

    /// Service thread, before the loop is destroyed.
    func stopExecutorTimer(_ loop: EventLoop) {
        guard let timer = executorTimer else { return }
        sc_ev_timer_stop(loop.loop, timer)
        timer.deallocate()
        executorTimer = nil
        executorTimerDeadline = nil
    }
}

func executorTimerFired(_ loop: OpaquePointer?, _ watcher: UnsafeMutablePointer<ev_timer>?, _ events: Int32) {
    guard let watcher, let owner = sc_ev_timer_owner(watcher) else { return }
    Unmanaged<WebSocketServer>.fromOpaque(owner).takeUnretainedValue().fireExecutorTimers()
}
