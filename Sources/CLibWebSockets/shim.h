#ifndef STORYCIRCLE_CLIBWEBSOCKETS_SHIM_H
#define STORYCIRCLE_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/* Swift cannot import function-like or computed macros; these re-expose the ones we need. */

/** Bytes of headroom lws_write() needs in front of every payload. */
static inline size_t sc_lws_pre(void) { return LWS_PRE; }

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

#endif
