import CLibUV
import CLibWebSockets
import Foundation

/// The libuv loop a libwebsockets context runs on, owned by the one thread that services it.
///
/// Why libuv: libwebsockets' default loop calls `poll()` with every open socket at each wake-up, O(connections)
/// per wake-up, which was a fifth to two fifths of the server's CPU (docs/performance.md). libuv waits with
/// epoll. Debian builds lws 4.1 with its event libraries as plugins (`libwebsockets-evlib_uv.so`, package
/// `libwebsockets-evlib-uv`), loaded when a context asks for `LWS_SERVER_OPTION_LIBUV`.
///
/// Why a loop of our own ("foreign" to lws) rather than lws's: lws's own uv loop runs inside `lws_service()`
/// until it is stopped, and the function that stops it is not exported by the plugin; it also takes over
/// SIGINT and SIGTERM. With our loop the service thread keeps its shape: run one turn of the loop, look at
/// what other threads asked for, again. `lws_cancel_service()` still wakes it (lws watches its event pipe
/// on this loop) and `LWS_CALLBACK_EVENT_WAIT_CANCELLED` still fires.
///
/// Not thread-safe: create, run and destroy it on the service thread.
final class EventLoop {
    let loop: UnsafeMutablePointer<uv_loop_t>
    /// lws writes nil here when the context it was given (`info.pcontext`) is wholly destroyed.
    let finalized: UnsafeMutablePointer<OpaquePointer?>
    private var destroyed = false

    init() throws(LWSError) {
        loop = .allocate(capacity: 1)
        finalized = .allocate(capacity: 1)
        finalized.initialize(to: nil)
        let status = uv_loop_init(loop)
        guard status == 0 else {
            loop.deallocate()
            finalized.deallocate()
            throw LWSError(operation: "uv_loop_init", code: Int(status))
        }
    }

    /// Sets what `lws_create_context` needs to run on this loop; `body` creates the context. (The foreign
    /// loop array is read only during the call.)
    func creatingContext(_ info: inout lws_context_creation_info, _ body: (inout lws_context_creation_info) -> OpaquePointer?) -> OpaquePointer? {
        info.options |= UInt64(LWS_SERVER_OPTION_LIBUV)
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

    /// One turn: waits for sockets, timers or a wake-up, and handles what is ready.
    func runOnce() {
        uv_run(loop, UV_RUN_ONCE)
    }

    /// Destroys `context` as lws wants it on a foreign loop: the first `lws_context_destroy` closes every
    /// connection and lws's own handles, which libuv finishes over the next turns of the loop; the second
    /// frees the context. Then the loop itself is closed; nothing may use it after. Later calls do nothing.
    func destroy(_ context: OpaquePointer?) {
        guard !destroyed else { return }
        destroyed = true
        if let context {
            lws_context_destroy(context)
            // The closes lws started complete in close callbacks; bounded, so a handle lws forgot cannot
            // hang the shutdown.
            let deadline = ContinuousClock.now + .seconds(2)
            while uv_loop_alive(loop) != 0, ContinuousClock.now < deadline {
                uv_run(loop, UV_RUN_NOWAIT)
            }
            if finalized.pointee != nil { lws_context_destroy(context) }
        }
        // Anything still open belongs to nobody now: close it so the loop can be.
        uv_walk(loop, { handle, _ in
            if let handle, uv_is_closing(handle) == 0 { uv_close(handle, nil) }
        }, nil)
        uv_run(loop, UV_RUN_NOWAIT)
        uv_loop_close(loop)
        loop.deallocate()
        finalized.deallocate()
    }
}
