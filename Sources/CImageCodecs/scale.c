#include "common.h"
#include <stdlib.h>

sc_image_status sc_image_scale(const sc_image *image, uint32_t width, uint32_t height, sc_image *out) {
    memset(out, 0, sizeof *out);
    if (width == 0 || height == 0 || width > image->width || height > image->height) return SC_IMAGE_UNSUPPORTED;
    uint8_t *pixels = malloc((size_t)width * height * 4);
    if (!pixels) return SC_IMAGE_NO_MEMORY;
    for (uint32_t y = 0; y < height; y++) {
        uint32_t y0 = (uint32_t)((uint64_t)y * image->height / height);
        uint32_t y1 = (uint32_t)((uint64_t)(y + 1) * image->height / height);
        if (y1 <= y0) y1 = y0 + 1;
        for (uint32_t x = 0; x < width; x++) {
            uint32_t x0 = (uint32_t)((uint64_t)x * image->width / width);
            uint32_t x1 = (uint32_t)((uint64_t)(x + 1) * image->width / width);
            if (x1 <= x0) x1 = x0 + 1;
            // Colour weighted by alpha, so a transparent pixel's colour does not bleed into its neighbours.
            uint64_t r = 0, g = 0, b = 0, a = 0, count = 0;
            for (uint32_t sy = y0; sy < y1; sy++) {
                const uint8_t *p = image->pixels + ((size_t)sy * image->width + x0) * 4;
                for (uint32_t sx = x0; sx < x1; sx++, p += 4) {
                    r += (uint64_t)p[0] * p[3];
                    g += (uint64_t)p[1] * p[3];
                    b += (uint64_t)p[2] * p[3];
                    a += p[3];
                    count++;
                }
            }
            uint8_t *q = pixels + ((size_t)y * width + x) * 4;
            if (a == 0) {
                q[0] = q[1] = q[2] = q[3] = 0;
            } else {
                q[0] = (uint8_t)((r + a / 2) / a);
                q[1] = (uint8_t)((g + a / 2) / a);
                q[2] = (uint8_t)((b + a / 2) / a);
                q[3] = (uint8_t)((a + count / 2) / count);
            }
        }
    }
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    out->has_alpha = image->has_alpha;
    return SC_IMAGE_OK;
}

void sc_image_free(sc_image *image) {
    free(image->pixels);
    image->pixels = NULL;
}

void sc_buffer_free(sc_buffer *buffer) {
    free(buffer->bytes);
    buffer->bytes = NULL;
    buffer->length = 0;
}
