#ifndef STORYCIRCLE_CESPEAKNG_SHIM_H
#define STORYCIRCLE_CESPEAKNG_SHIM_H

#include <stddef.h>
#include <wchar.h>
#include <stdio.h>
#include <espeak-ng/speak_lib.h>
#include <espeak-ng/espeak_ng.h>

/** espeakINITIALIZE_DONT_EXIT is a macro: without it espeak-ng calls exit() when its data is missing. */
static inline int sc_espeak_initialize_dont_exit(void) { return espeakINITIALIZE_DONT_EXIT; }

#endif
