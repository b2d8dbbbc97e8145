#ifndef STORYCIRCLE_CLIBWEBSOCKETS_SHIM_H
#define STORYCIRCLE_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/* Swift cannot import function-like or computed macros; these re-expose the ones we need. */

/** Bytes of headroom lws_write() needs in front of every payload. */
static inline size_t sc_lws_pre(void) { return LWS_PRE; }

/** Plain connections let in on the TLS port (a computed option macro); the server only redirects them. */
static inline uint64_t sc_lws_option_allow_plain_on_tls_port(void) { return (uint64_t)LWS_SERVER_OPTION_ALLOW_NON_SSL_ON_SSL_PORT; }

/** lwsl_* logging is macro-based; route levels through lws_set_log_level only. */
static inline void sc_lws_set_log_level(int level) { lws_set_log_level(level, NULL); }

/**
 * A timer on lws's own timer list, run on the service thread inside lws's timer servicing (so lws
 * re-arms its event-loop timer after the callback), with a pointer back to whoever owns it. The list
 * element comes first: the callback gets a pointer to it and casts it back.
 */
typedef struct sc_lws_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
} sc_lws_timer_t;

static inline void sc_lws_timer_schedule(struct lws_context *context, sc_lws_timer_t *timer, sul_cb_t callback, lws_usec_t after_us) {
    lws_sul_schedule(context, 0, &timer->sul, callback, after_us);
}

static inline void *sc_lws_timer_owner(lws_sorted_usec_list_t *sul) { return ((sc_lws_timer_t *)sul)->owner; }

/** Asks the CPU to bring `lines` cache lines from `address` on into its caches, without waiting for them. */
static inline void sc_prefetch(const void *address, int lines) {
    for (int line = 0; line < lines; line++) __builtin_prefetch((const char *)address + 64 * line);
}

/*
 * Where a WebSocket frame's write reads a connection's `struct lws` (private to lws) and the `ws` part it points
 * to, in libwebsockets 4.1.6 as Debian 12 builds it, read off the library's code: its accessors read the
 * context at +0x0, `ws` at +0xc8 (`lws_get_close_length`, then +0xd5 of `ws`), the output buffer list at +0x2d0
 * (`lws_partial_buffered`) and the socket at +0x308 (`lws_get_socket_fd`); `lws_write` and what it calls
 * read +0x278, +0x290 and +0x30c to +0x337, and +0x20 and +0xb5 to +0xd8 of `ws`. The struct is over 800 bytes
 * and the first eight lines hold mostly HTTP's part, so asking for those missed what a write reads. Another
 * version gets the first eight lines and no `ws`. A prefetch never faults: a wrong offset costs a miss, nothing
 * else. (`sc_lws_layout_matches` lets a test check the accessors' offsets on a real connection.)
 */
#if LWS_LIBRARY_VERSION_MAJOR == 4 && LWS_LIBRARY_VERSION_MINOR == 1 && LWS_LIBRARY_VERSION_PATCH == 6 && defined(__x86_64__)
#define SC_LWS_KNOWN_LAYOUT 1
#endif

/** Asks for the lines of `wsi` that a frame's write reads. */
static inline void sc_prefetch_wsi(const struct lws *wsi) {
#ifdef SC_LWS_KNOWN_LAYOUT
    const char *p = (const char *)wsi;
    __builtin_prefetch(p);
    __builtin_prefetch(p + 0xc8);
    __builtin_prefetch(p + 0x278);
    __builtin_prefetch(p + 0x290);
    __builtin_prefetch(p + 0x2d0);
    __builtin_prefetch(p + 0x308);
    __builtin_prefetch(p + 0x337);
#else
    sc_prefetch(wsi, 8);
#endif
}

/**
 * Asks for the lines of `wsi`'s WebSocket part (allocated at the upgrade) that a frame's write reads. It reads
 * the pointer to that part from `wsi`, so it is for a connection whose lines were asked for a while before.
 */
static inline void sc_prefetch_wsi_ws(const struct lws *wsi) {
#ifdef SC_LWS_KNOWN_LAYOUT
    const char *ws = *(const char *const *)((const char *)wsi + 0xc8);
    if (ws) {
        __builtin_prefetch(ws + 0x20);
        __builtin_prefetch(ws + 0xb5);
        __builtin_prefetch(ws + 0xd8);
    }
#else
    (void)wsi;
#endif
}

/**
 * For an upgraded WebSocket: whether its context, socket and WebSocket part are where `sc_prefetch_wsi`
 * expects them (1), not (0), or the layout is not known here (-1).
 */
static inline int sc_lws_layout_matches(struct lws *wsi) {
#ifdef SC_LWS_KNOWN_LAYOUT
    const char *p = (const char *)wsi;
    return *(struct lws_context *const *)p == lws_get_context(wsi) && *(const int *)(p + 0x308) == lws_get_socket_fd(wsi)
        && *(const void *const *)(p + 0xc8) != NULL && (*(const void *const *)(p + 0x2d0) != NULL) == (lws_partial_buffered(wsi) != 0);
#else
    (void)wsi;
    return -1;
#endif
}

#endif
