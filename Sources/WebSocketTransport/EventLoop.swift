import CLibEV
import CLibWebSockets
import Foundation

/// The libev loop a libwebsockets context runs on, owned by the one thread that services it.
///
/// Why an epoll loop: libwebsockets' default loop calls `poll()` with every open socket at each wake-up,
/// O(connections) per wake-up, which was a fifth to two fifths of the server's CPU (docs/performance.md).
/// Debian builds lws 4.1 with its event libraries as plugins (`libwebsockets-evlib_ev.so`, package
/// `libwebsockets-evlib-ev`), loaded when a context asks for `LWS_SERVER_OPTION_LIBEV`.
///
/// Why libev and not libuv (tried first): lws turns a connection's POLLOUT off before every WRITEABLE
/// callback and on again when more is queued. Its libuv plugin does each turn with `uv_poll_start`, which in
/// libuv 1.44 removes the socket from epoll (`EPOLL_CTL_DEL`) and adds it back on the next turn: 3.3
/// `epoll_ctl` calls per message in a fan-out, which made the server slower than on `poll()`. libev only
/// records the change and, once per turn of the loop, calls `epoll_ctl` for the sockets whose mask really
/// changed: off-and-on within a turn costs nothing (docs/performance.md, "Transport: the event loop").
///
/// Why a loop of our own ("foreign" to lws) rather than lws's: lws's own loop runs inside `lws_service()`
/// until it is stopped and takes over SIGINT. With our loop the service thread keeps its shape: run one turn
/// of the loop, look at what other threads asked for, again. `lws_cancel_service()` still wakes it (lws
/// watches its event pipe on this loop) and `LWS_CALLBACK_EVENT_WAIT_CANCELLED` still fires.
///
/// Not thread-safe: create, run and destroy it on the service thread.
package final class EventLoop {
    let loop: OpaquePointer
    /// lws writes nil here when the context it was given (`info.pcontext`) is wholly destroyed.
    let finalized: UnsafeMutablePointer<OpaquePointer?>
    private var destroyed = false

    package init() throws(LWSError) {
        // epoll by name (libev's automatic choice skips epoll on some kernels); NOSIGMASK: the loop watches
        // no signals, so it has no reason to touch the thread's signal mask.
        guard let loop = ev_loop_new(UInt32(EVBACKEND_EPOLL) | UInt32(EVFLAG_NOSIGMASK)) else {
            throw LWSError(operation: "ev_loop_new", code: -1)
        }
        self.loop = loop
        finalized = .allocate(capacity: 1)
        finalized.initialize(to: nil)
    }

    /// Sets what `lws_create_context` needs to run on this loop; `body` creates the context. (The foreign
    /// loop array is read only during the call.)
    package func creatingContext(_ info: inout lws_context_creation_info, _ body: (inout lws_context_creation_info) -> OpaquePointer?) -> OpaquePointer? {
        info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
        info.pcontext = finalized
        var loops: [UnsafeMutableRawPointer?] = [UnsafeMutableRawPointer(loop), nil]
        let context = loops.withUnsafeMutableBufferPointer { loops in
            info.foreign_loops = loops.baseAddress
            defer { info.foreign_loops = nil }
            return body(&info)
        }
        if let context { finalized.pointee = context }
        return context
    }

    /// One turn: waits for sockets, timers or a wake-up, and handles what is ready. `waiting: false` handles
    /// only what is ready now (work is waiting to run after the turn).
    package func runOnce(waiting: Bool = true) {
        ev_run(loop, Int32(waiting ? EVRUN_ONCE : EVRUN_NOWAIT))
    }

    /// Destroys `context`, then the loop; nothing may use either after. Later calls do nothing.
    package func destroy(_ context: OpaquePointer?) {
        guard !destroyed else { return }
        destroyed = true
        if let context {
            lws_context_destroy(context)
            // On libev, lws 4.1 stops its watchers and frees the context in that one call (and writes nil to
            // `finalized`). A stage left for the loop (its libuv plugin leaves one) ends with a second call.
            if finalized.pointee != nil {
                ev_run(loop, Int32(EVRUN_NOWAIT))
                lws_context_destroy(context)
            }
        }
        ev_loop_destroy(loop)
        finalized.deallocate()
    }
}
