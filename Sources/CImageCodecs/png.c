#include "common.h"
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>

typedef struct {
    const uint8_t *data;
    size_t length;
    size_t offset;
    char *message;
    size_t message_capacity;
} sc_png_reader;

static void sc_png_error(png_structp png, png_const_charp text) {
    sc_png_reader *reader = png_get_error_ptr(png);
    if (reader) sc_copy_message(reader->message, reader->message_capacity, text);
    png_longjmp(png, 1);
}

// Warnings (a bad ancillary chunk, which is dropped anyway) are not worth a line on stderr.
static void sc_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void sc_png_read(png_structp png, png_bytep out, png_size_t count) {
    sc_png_reader *reader = png_get_io_ptr(png);
    if (count > reader->length - reader->offset) png_error(png, "the file ends before the picture does");
    memcpy(out, reader->data + reader->offset, count);
    reader->offset += count;
}

sc_image_status sc_png_header(const uint8_t *data, size_t length, uint32_t *width, uint32_t *height) {
    // IHDR is required to be the first chunk: signature (8), length (4), "IHDR" (4), width, height.
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (length < 24 || memcmp(data, signature, 8) != 0 || memcmp(data + 12, "IHDR", 4) != 0) return SC_IMAGE_NOT_THIS_FORMAT;
    *width = ((uint32_t)data[16] << 24) | ((uint32_t)data[17] << 16) | ((uint32_t)data[18] << 8) | data[19];
    *height = ((uint32_t)data[20] << 24) | ((uint32_t)data[21] << 16) | ((uint32_t)data[22] << 8) | data[23];
    return SC_IMAGE_OK;
}

sc_image_status sc_png_decode(const uint8_t *data, size_t length, sc_image_limits limits, sc_image *out, char *message, size_t message_capacity) {
    memset(out, 0, sizeof *out);
    uint32_t header_width = 0, header_height = 0;
    if (sc_png_header(data, length, &header_width, &header_height) != SC_IMAGE_OK) return SC_IMAGE_NOT_THIS_FORMAT;
    if (!sc_within_limits(header_width, header_height, limits)) return SC_IMAGE_TOO_MANY_PIXELS;

    sc_png_reader reader = {data, length, 0, message, message_capacity};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &reader, sc_png_error, sc_png_warning);
    if (!png) return SC_IMAGE_NO_MEMORY;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return SC_IMAGE_NO_MEMORY;
    }
    // volatile: assigned after setjmp and read after the longjmp back.
    uint8_t *volatile pixels = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return SC_IMAGE_CORRUPT;
    }
    png_set_read_fn(png, &reader, sc_png_read);
    // libpng's own guards as well as ours: the largest side, and no ancillary chunk above 1 MB held in memory.
    png_set_user_limits(png, limits.max_side, limits.max_side);
    png_set_chunk_malloc_max(png, 1u << 20);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_read_info(png, info);
    png_uint_32 width = png_get_image_width(png, info);
    png_uint_32 height = png_get_image_height(png, info);
    if (!sc_within_limits(width, height, limits)) {
        png_destroy_read_struct(&png, &info, NULL);
        return SC_IMAGE_TOO_MANY_PIXELS;
    }
    int color = png_get_color_type(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) png_error(png, "unexpected row layout");

    pixels = malloc((size_t)width * height * 4);
    rows = malloc(sizeof(png_bytep) * height);
    if (!pixels || !rows) {
        // Not the file's fault: said as such, not as a damaged picture.
        free(pixels);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return SC_IMAGE_NO_MEMORY;
    }
    for (png_uint_32 y = 0; y < height; y++) rows[y] = pixels + (size_t)y * width * 4;
    png_read_image(png, rows);
    // The end too: a file cut after its pixels (no IEND) is damaged all the same.
    png_read_end(png, NULL);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    out->has_alpha = sc_scan_alpha(pixels, (size_t)width * height);
    return SC_IMAGE_OK;
}

typedef struct {
    uint8_t *bytes;
    size_t length;
    size_t capacity;
    int failed;
} sc_png_writer;

static void sc_png_write(png_structp png, png_bytep data, png_size_t count) {
    sc_png_writer *writer = png_get_io_ptr(png);
    if (writer->length + count > writer->capacity) {
        size_t capacity = writer->capacity ? writer->capacity : 65536;
        while (capacity < writer->length + count) capacity *= 2;
        uint8_t *grown = realloc(writer->bytes, capacity);
        if (!grown) png_error(png, "out of memory");
        writer->bytes = grown;
        writer->capacity = capacity;
    }
    memcpy(writer->bytes + writer->length, data, count);
    writer->length += count;
}

static void sc_png_flush(png_structp png) { (void)png; }

sc_image_status sc_png_encode(const sc_image *image, sc_buffer *out) {
    memset(out, 0, sizeof *out);
    sc_png_writer writer = {NULL, 0, 0, 0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, sc_png_error, sc_png_warning);
    if (!png) return SC_IMAGE_NO_MEMORY;
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return SC_IMAGE_NO_MEMORY;
    }
    uint8_t *volatile row = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(row);
        free(writer.bytes);
        png_destroy_write_struct(&png, &info);
        return SC_IMAGE_NO_MEMORY;
    }
    png_set_write_fn(png, &writer, sc_png_write, sc_png_flush);
    int channels = image->has_alpha ? 4 : 3;
    png_set_IHDR(png, info, image->width, image->height, 8, image->has_alpha ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    row = malloc((size_t)image->width * channels);
    if (!row) png_error(png, "out of memory");
    for (uint32_t y = 0; y < image->height; y++) {
        const uint8_t *source = image->pixels + (size_t)y * image->width * 4;
        for (uint32_t x = 0; x < image->width; x++) memcpy(row + (size_t)x * channels, source + (size_t)x * 4, channels);
        png_write_row(png, row);
    }
    png_write_end(png, NULL);
    free(row);
    png_destroy_write_struct(&png, &info);
    out->bytes = writer.bytes;
    out->length = writer.length;
    return SC_IMAGE_OK;
}
