#include "common.h"
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>
#include <stdlib.h>

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
    char *message;
    size_t message_capacity;
    /// libjpeg only warns when the data ends early (and pads the picture with grey); we refuse it.
    int truncated;
} sc_jpeg_error;

static void sc_jpeg_error_exit(j_common_ptr cinfo) {
    sc_jpeg_error *error = (sc_jpeg_error *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    sc_copy_message(error->message, error->message_capacity, text);
    longjmp(error->jump, 1);
}

static void sc_jpeg_emit_message(j_common_ptr cinfo, int level) {
    sc_jpeg_error *error = (sc_jpeg_error *)cinfo->err;
    if (level < 0) {
        cinfo->err->num_warnings++;
        if (cinfo->err->msg_code == JWRN_JPEG_EOF) error->truncated = 1;
    }
}

/// A progressive picture may name any number of scans, each one a pass over all its coefficients: a
/// small file with thousands of them is minutes of CPU. Real pictures have about ten (libjpeg-turbo's
/// own tools stop at 500 as well).
enum { SC_JPEG_MAX_SCANS = 500 };

static void sc_jpeg_progress(j_common_ptr cinfo) {
    if (!cinfo->is_decompressor || ((j_decompress_ptr)cinfo)->input_scan_number <= SC_JPEG_MAX_SCANS) return;
    sc_jpeg_error *error = (sc_jpeg_error *)cinfo->err;
    sc_copy_message(error->message, error->message_capacity, "the picture has more scans than any real picture has");
    longjmp(error->jump, 1);
}

static void sc_jpeg_install(struct jpeg_decompress_struct *cinfo, sc_jpeg_error *error, char *message, size_t capacity) {
    cinfo->err = jpeg_std_error(&error->base);
    error->base.error_exit = sc_jpeg_error_exit;
    error->base.emit_message = sc_jpeg_emit_message;
    error->message = message;
    error->message_capacity = capacity;
    error->truncated = 0;
}

sc_image_status sc_jpeg_header(const uint8_t *data, size_t length, uint32_t *width, uint32_t *height) {
    struct jpeg_decompress_struct cinfo;
    memset(&cinfo, 0, sizeof cinfo); // so that a jump before jpeg_create_decompress destroys nothing
    sc_jpeg_error error;
    sc_jpeg_install(&cinfo, &error, NULL, 0);
    if (setjmp(error.jump)) {
        jpeg_destroy_decompress(&cinfo);
        return SC_IMAGE_CORRUPT;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    *width = cinfo.image_width;
    *height = cinfo.image_height;
    jpeg_destroy_decompress(&cinfo);
    return SC_IMAGE_OK;
}

sc_image_status sc_jpeg_decode(const uint8_t *data, size_t length, sc_image_limits limits, sc_image *out, char *message, size_t message_capacity) {
    memset(out, 0, sizeof *out);
    struct jpeg_decompress_struct cinfo;
    memset(&cinfo, 0, sizeof cinfo); // so that a jump before jpeg_create_decompress destroys nothing
    sc_jpeg_error error;
    sc_jpeg_install(&cinfo, &error, message, message_capacity);
    uint8_t *volatile pixels = NULL;
    if (setjmp(error.jump)) {
        free(pixels);
        jpeg_destroy_decompress(&cinfo);
        return SC_IMAGE_CORRUPT;
    }
    jpeg_create_decompress(&cinfo);
    struct jpeg_progress_mgr progress = {.progress_monitor = sc_jpeg_progress};
    cinfo.progress = &progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)length);
    jpeg_read_header(&cinfo, TRUE);
    if (!sc_within_limits(cinfo.image_width, cinfo.image_height, limits)) {
        jpeg_destroy_decompress(&cinfo);
        return SC_IMAGE_TOO_MANY_PIXELS;
    }
    // A progressive picture's coefficients are held whole; bound libjpeg's own memory as well.
    cinfo.mem->max_memory_to_use = (long)(limits.max_pixels * 16);
    int cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    jpeg_start_decompress(&cinfo);
    if (cinfo.output_components != 4) {
        sc_copy_message(message, message_capacity, "unexpected colour layout");
        jpeg_destroy_decompress(&cinfo);
        return SC_IMAGE_UNSUPPORTED;
    }
    uint32_t width = cinfo.output_width, height = cinfo.output_height;
    pixels = malloc((size_t)width * height * 4);
    if (!pixels) {
        jpeg_destroy_decompress(&cinfo);
        return SC_IMAGE_NO_MEMORY;
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pixels + (size_t)cinfo.output_scanline * width * 4;
        jpeg_read_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_decompress(&cinfo);
    int truncated = error.truncated;
    jpeg_destroy_decompress(&cinfo);
    if (truncated) {
        free(pixels);
        sc_copy_message(message, message_capacity, "the file ends before the picture does");
        return SC_IMAGE_CORRUPT;
    }
    if (cmyk) {
        // Adobe writes CMYK JPEGs inverted (as almost every CMYK JPEG is): each channel already means 255 - ink.
        for (size_t i = 0; i < (size_t)width * height; i++) {
            uint8_t *p = pixels + i * 4;
            unsigned k = p[3];
            p[0] = (uint8_t)(p[0] * k / 255);
            p[1] = (uint8_t)(p[1] * k / 255);
            p[2] = (uint8_t)(p[2] * k / 255);
            p[3] = 0xFF;
        }
    }
    out->pixels = pixels;
    out->width = width;
    out->height = height;
    out->has_alpha = 0;
    return SC_IMAGE_OK;
}

typedef struct {
    struct jpeg_error_mgr base;
    jmp_buf jump;
} sc_jpeg_encode_error;

static void sc_jpeg_encode_error_exit(j_common_ptr cinfo) {
    longjmp(((sc_jpeg_encode_error *)cinfo->err)->jump, 1);
}

sc_image_status sc_jpeg_encode(const sc_image *image, int quality, sc_buffer *out) {
    memset(out, 0, sizeof *out);
    struct jpeg_compress_struct cinfo;
    memset(&cinfo, 0, sizeof cinfo);
    sc_jpeg_encode_error error;
    cinfo.err = jpeg_std_error(&error.base);
    error.base.error_exit = sc_jpeg_encode_error_exit;
    unsigned char *volatile bytes = NULL;
    unsigned long length = 0;
    if (setjmp(error.jump)) {
        jpeg_destroy_compress(&cinfo);
        free(bytes);
        return SC_IMAGE_NO_MEMORY;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, (unsigned char **)&bytes, &length);
    cinfo.image_width = image->width;
    cinfo.image_height = image->height;
    cinfo.input_components = 4;
    // Alpha is ignored: a JPEG source has none, and a picture with transparency is kept as PNG or WebP.
    cinfo.in_color_space = JCS_EXT_RGBX;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality, TRUE);
    cinfo.optimize_coding = TRUE;
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = image->pixels + (size_t)cinfo.next_scanline * image->width * 4;
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    out->bytes = bytes;
    out->length = length;
    return SC_IMAGE_OK;
}
