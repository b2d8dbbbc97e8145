#ifndef STORYCIRCLE_CLIBUV_SHIM_H
#define STORYCIRCLE_CLIBUV_SHIM_H

/* libuv, only as the epoll loop libwebsockets runs on (its libuv event-library plugin, foreign loop). */
#include <uv.h>

#endif
