#ifndef STORYCIRCLE_CIMAGECODECS_COMMON_H
#define STORYCIRCLE_CIMAGECODECS_COMMON_H

#include "CImageCodecs.h"
#include <stdio.h>
#include <string.h>

static inline void sc_copy_message(char *message, size_t capacity, const char *text) {
    if (message == NULL || capacity == 0) return;
    snprintf(message, capacity, "%s", text ? text : "");
}

/// Whether a header's dimensions may be decoded: checked before any pixel buffer is allocated.
static inline int sc_within_limits(uint32_t width, uint32_t height, sc_image_limits limits) {
    if (width == 0 || height == 0) return 0;
    if (width > limits.max_side || height > limits.max_side) return 0;
    return (uint64_t)width * (uint64_t)height <= limits.max_pixels;
}

static inline int sc_scan_alpha(const uint8_t *rgba, size_t pixels) {
    for (size_t i = 0; i < pixels; i++) {
        if (rgba[i * 4 + 3] != 0xFF) return 1;
    }
    return 0;
}

#endif
