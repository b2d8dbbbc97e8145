#ifndef STORYCIRCLE_CLIBEV_SHIM_H
#define STORYCIRCLE_CLIBEV_SHIM_H

/* libev, only as the epoll loop libwebsockets runs on (its libev event-library plugin, foreign loop). */
#include <ev.h>

#endif
