#ifndef STORYCIRCLE_CLIBEV_SHIM_H
#define STORYCIRCLE_CLIBEV_SHIM_H

/* libev, only as the epoll loop libwebsockets runs on (its libev event-library plugin, foreign loop). */
#include <ev.h>

/*
 * A one-shot timer on the loop with a pointer back to its owner (the watcher comes first: the callback gets
 * a pointer to it and casts it back). ev_timer_init is a macro; a timer is stopped before it is set again,
 * and the loop's cached time is brought up to date first, so that a timer set late in a turn does not fire
 * early by the turn's length.
 */
typedef struct sc_ev_timer {
    ev_timer watcher;
    void *owner;
} sc_ev_timer_t;

typedef void (*sc_ev_timer_callback)(struct ev_loop *loop, ev_timer *watcher, int revents);

static inline void sc_ev_timer_start(struct ev_loop *loop, sc_ev_timer_t *timer, sc_ev_timer_callback callback, double after) {
    ev_timer_stop(loop, &timer->watcher);
    ev_now_update(loop);
    ev_timer_init(&timer->watcher, callback, after, 0.);
    ev_timer_start(loop, &timer->watcher);
}

static inline void sc_ev_timer_stop(struct ev_loop *loop, sc_ev_timer_t *timer) { ev_timer_stop(loop, &timer->watcher); }

static inline void *sc_ev_timer_owner(ev_timer *watcher) { return ((sc_ev_timer_t *)watcher)->owner; }

#endif
