#include "common.h"
#include <stdlib.h>
#include <webp/decode.h>
#include <webp/encode.h>

sc_image_status sc_webp_header(const uint8_t *data, size_t length, uint32_t *width, uint32_t *height) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, length, &features) != VP8_STATUS_OK) return SC_IMAGE_CORRUPT;
    *width = (uint32_t)features.width;
    *height = (uint32_t)features.height;
    return SC_IMAGE_OK;
}

sc_image_status sc_webp_decode(const uint8_t *data, size_t length, sc_image_limits limits, sc_image *out, char *message, size_t message_capacity) {
    memset(out, 0, sizeof *out);
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, length, &features);
    if (status != VP8_STATUS_OK) {
        sc_copy_message(message, message_capacity, "unreadable WebP header");
        return SC_IMAGE_CORRUPT;
    }
    if (features.has_animation) {
        sc_copy_message(message, message_capacity, "animated WebP");
        return SC_IMAGE_UNSUPPORTED;
    }
    if (!sc_within_limits((uint32_t)features.width, (uint32_t)features.height, limits)) return SC_IMAGE_TOO_MANY_PIXELS;
    size_t stride = (size_t)features.width * 4;
    size_t size = stride * (size_t)features.height;
    uint8_t *pixels = malloc(size);
    if (!pixels) return SC_IMAGE_NO_MEMORY;
    if (WebPDecodeRGBAInto(data, length, pixels, size, (int)stride) == NULL) {
        free(pixels);
        sc_copy_message(message, message_capacity, "the WebP data is damaged or ends early");
        return SC_IMAGE_CORRUPT;
    }
    out->pixels = pixels;
    out->width = (uint32_t)features.width;
    out->height = (uint32_t)features.height;
    out->has_alpha = features.has_alpha ? sc_scan_alpha(pixels, (size_t)out->width * out->height) : 0;
    return SC_IMAGE_OK;
}

sc_image_status sc_webp_encode(const sc_image *image, int quality, sc_buffer *out) {
    memset(out, 0, sizeof *out);
    uint8_t *encoded = NULL;
    int stride = (int)image->width * 4;
    size_t length = quality < 0
        ? WebPEncodeLosslessRGBA(image->pixels, (int)image->width, (int)image->height, stride, &encoded)
        : WebPEncodeRGBA(image->pixels, (int)image->width, (int)image->height, stride, (float)quality, &encoded);
    if (length == 0 || encoded == NULL) {
        WebPFree(encoded);
        return SC_IMAGE_NO_MEMORY;
    }
    // One way to free every buffer this target hands out.
    out->bytes = malloc(length);
    if (!out->bytes) {
        WebPFree(encoded);
        return SC_IMAGE_NO_MEMORY;
    }
    memcpy(out->bytes, encoded, length);
    out->length = length;
    WebPFree(encoded);
    return SC_IMAGE_OK;
}
