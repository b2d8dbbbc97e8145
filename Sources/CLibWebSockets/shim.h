#ifndef STORYCIRCLE_CLIBWEBSOCKETS_SHIM_H
#define STORYCIRCLE_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

/* Swift cannot import function-like or computed macros; these re-expose the ones we need. */

/** Bytes of headroom lws_write() needs in front of every payload. */
static inline size_t sc_lws_pre(void) { return LWS_PRE; }

/** lwsl_* logging is macro-based; route levels through lws_set_log_level only. */
static inline void sc_lws_set_log_level(int level) { lws_set_log_level(level, NULL); }

/** The HTTP status codes Swift needs (they are enum members, but spelled here once). */
static inline unsigned int sc_http_status_ok(void) { return HTTP_STATUS_OK; }

#endif
