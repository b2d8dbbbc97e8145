#ifndef STORYCIRCLE_CESPEAKNG_SHIM_H
#define STORYCIRCLE_CESPEAKNG_SHIM_H

#include <stddef.h>
#include <wchar.h>
#include <stdio.h>
#include <espeak-ng/speak_lib.h>
#include <espeak-ng/espeak_ng.h>

#endif
