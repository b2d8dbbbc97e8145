#ifndef STORYCIRCLE_CIMAGECODECS_H
#define STORYCIRCLE_CIMAGECODECS_H

// The one place StoryCircle touches libpng, libjpeg-turbo and libwebp. libpng and libjpeg report errors
// by longjmp; every setjmp and longjmp lives in these C files, so no jump ever crosses a Swift frame.
// Every function is synchronous and CPU-bound: Swift callers run it off the cooperative pool.

#include <stddef.h>
#include <stdint.h>

typedef enum {
    SC_IMAGE_OK = 0,
    /// The bytes are not this format, or its header is unreadable.
    SC_IMAGE_NOT_THIS_FORMAT = 1,
    /// The header asks for more pixels (or a wider or taller picture) than allowed; nothing was decoded.
    SC_IMAGE_TOO_MANY_PIXELS = 2,
    /// The data ends early or is damaged.
    SC_IMAGE_CORRUPT = 3,
    /// A feature refused on purpose (an animated WebP, for example).
    SC_IMAGE_UNSUPPORTED = 4,
    SC_IMAGE_NO_MEMORY = 5,
} sc_image_status;

/// A decoded picture: 8-bit RGBA, rows packed (stride = width * 4). `pixels` is freed with sc_image_free.
typedef struct {
    uint8_t *pixels;
    uint32_t width;
    uint32_t height;
    /// Whether any pixel is less than fully opaque.
    int has_alpha;
} sc_image;

/// What a decode may allocate: refused from the header before any pixel buffer exists.
typedef struct {
    uint64_t max_pixels;
    uint32_t max_side;
} sc_image_limits;

/// An encoded buffer, freed with sc_buffer_free.
typedef struct {
    uint8_t *bytes;
    size_t length;
} sc_buffer;

/// The dimensions in the header, without decoding pixels.
sc_image_status sc_png_header(const uint8_t *data, size_t length, uint32_t *width, uint32_t *height);
sc_image_status sc_jpeg_header(const uint8_t *data, size_t length, uint32_t *width, uint32_t *height);
sc_image_status sc_webp_header(const uint8_t *data, size_t length, uint32_t *width, uint32_t *height);

/// Decodes the whole picture to RGBA. `message` (may be NULL) receives the library's reason on failure.
sc_image_status sc_png_decode(const uint8_t *data, size_t length, sc_image_limits limits, sc_image *out, char *message, size_t message_capacity);
sc_image_status sc_jpeg_decode(const uint8_t *data, size_t length, sc_image_limits limits, sc_image *out, char *message, size_t message_capacity);
sc_image_status sc_webp_decode(const uint8_t *data, size_t length, sc_image_limits limits, sc_image *out, char *message, size_t message_capacity);

/// Encodes pixels alone: no text, EXIF, XMP, ICC or any other metadata is written.
sc_image_status sc_png_encode(const sc_image *image, sc_buffer *out);
/// JPEG keeps no alpha: transparent pixels are composed over white.
sc_image_status sc_jpeg_encode(const sc_image *image, int quality, sc_buffer *out);
/// quality < 0 asks for lossless WebP.
sc_image_status sc_webp_encode(const sc_image *image, int quality, sc_buffer *out);

/// An area-averaged (box filter, alpha-weighted) copy at width x height, both at least 1 and at most the source's.
sc_image_status sc_image_scale(const sc_image *image, uint32_t width, uint32_t height, sc_image *out);

void sc_image_free(sc_image *image);
void sc_buffer_free(sc_buffer *buffer);

#endif
