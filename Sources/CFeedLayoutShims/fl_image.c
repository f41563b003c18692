#include "CFeedLayoutShims.h"

// jpeglib.h needs FILE and size_t declared first.
#include <stdio.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include <png.h>

void fl_image_free_pixels(uint8_t *pixels) {
    free(pixels);
}

// MARK: - libjpeg

/// Everything a JPEG decode touches lives on the heap, so that nothing the decode changes is a
/// non-volatile local of the function that called setjmp (C11 7.13.2.1).
typedef struct fl_jpeg_state {
    struct jpeg_decompress_struct decompressor;
    struct jpeg_error_mgr error_manager;
    struct jpeg_progress_mgr progress_manager;
    jmp_buf jump;
    int status;
    int max_scans;
    uint8_t *pixels;  // owned until handed to the result; freed here on failure
    char message[JMSG_LENGTH_MAX];
} fl_jpeg_state;

static fl_jpeg_state *fl_jpeg_state_of(j_common_ptr info) {
    return (fl_jpeg_state *)((char *)info->err - offsetof(fl_jpeg_state, error_manager));
}

static void fl_jpeg_fail(j_common_ptr info, int status) {
    fl_jpeg_state *state = fl_jpeg_state_of(info);
    (*info->err->format_message)(info, state->message);
    state->status = status;
    longjmp(state->jump, 1);
}

static void fl_jpeg_error_exit(j_common_ptr info) {
    fl_jpeg_fail(info, FL_IMAGE_DECODE_ERROR);
}

/// libjpeg prints to stderr by default; the message is kept and returned instead.
static void fl_jpeg_output_message(j_common_ptr info) {
    (void)info;
}

/// Level -1 is a warning about corrupt data: verification treats it as a failure.
static void fl_jpeg_emit_message(j_common_ptr info, int level) {
    if (level < 0) fl_jpeg_fail(info, FL_IMAGE_WARNING_AS_ERROR);
}

/// Called between passes; caps the scans of a progressive JPEG, whose scan count is otherwise
/// unbounded (a small file with thousands of scans takes minutes to decode).
static void fl_jpeg_progress(j_common_ptr info) {
    fl_jpeg_state *state = fl_jpeg_state_of(info);
    j_decompress_ptr decompressor = (j_decompress_ptr)info;
    if (state->max_scans > 0 && decompressor->input_scan_number > state->max_scans) {
        snprintf(state->message, sizeof state->message,
                 "progressive JPEG has more than %d scans", state->max_scans);
        state->status = FL_IMAGE_TOO_MANY_SCANS;
        longjmp(state->jump, 1);
    }
}

static void fl_image_copy_message(fl_image_decode_result *result, const char *message) {
    snprintf(result->message, sizeof result->message, "%s", message);
}

int fl_jpeg_decode(const void *data, size_t size, const fl_image_decode_options *options,
                   fl_image_decode_result *result) {
    memset(result, 0, sizeof *result);
    fl_jpeg_state *state = calloc(1, sizeof *state);
    if (state == NULL) {
        result->status = FL_IMAGE_OUT_OF_MEMORY;
        fl_image_copy_message(result, "out of memory");
        return result->status;
    }
    state->max_scans = options->max_progressive_scans;
    state->decompressor.err = jpeg_std_error(&state->error_manager);
    state->error_manager.error_exit = fl_jpeg_error_exit;
    state->error_manager.output_message = fl_jpeg_output_message;
    state->error_manager.emit_message = fl_jpeg_emit_message;
    state->progress_manager.progress_monitor = fl_jpeg_progress;

    if (setjmp(state->jump)) {
        result->status = state->status;
        fl_image_copy_message(result, state->message);
        result->scan_count = (uint32_t)state->decompressor.input_scan_number;
        jpeg_destroy_decompress(&state->decompressor);
        free(state->pixels);
        free(state);
        return result->status;
    }
    jpeg_create_decompress(&state->decompressor);
    j_decompress_ptr decompressor = &state->decompressor;
    decompressor->progress = &state->progress_manager;
    jpeg_mem_src(decompressor, (const unsigned char *)data, (unsigned long)size);
    jpeg_read_header(decompressor, TRUE);
    result->width = decompressor->image_width;
    result->height = decompressor->image_height;
    if ((uint64_t)decompressor->image_width * decompressor->image_height > options->pixel_budget) {
        snprintf(state->message, sizeof state->message, "%ux%u pixels is above the budget of %llu",
                 decompressor->image_width, decompressor->image_height,
                 (unsigned long long)options->pixel_budget);
        state->status = FL_IMAGE_OVER_PIXEL_BUDGET;
        longjmp(state->jump, 1);
    }
    int denominator = options->scale_denominator;
    decompressor->scale_num = 1;
    decompressor->scale_denom = (denominator == 2 || denominator == 4 || denominator == 8) ? denominator : 1;
    int is_four_channel = decompressor->jpeg_color_space == JCS_CMYK || decompressor->jpeg_color_space == JCS_YCCK;
    decompressor->out_color_space = is_four_channel ? JCS_CMYK : JCS_RGB;
    jpeg_start_decompress(decompressor);
    result->decoded_width = decompressor->output_width;
    result->decoded_height = decompressor->output_height;
    JSAMPARRAY row = (*decompressor->mem->alloc_sarray)(
        (j_common_ptr)decompressor, JPOOL_IMAGE,
        decompressor->output_width * (JDIMENSION)decompressor->output_components, 1);
    if (options->keep_pixels) {
        state->pixels = malloc((size_t)decompressor->output_width * decompressor->output_height * 4);
        if (state->pixels == NULL) {
            snprintf(state->message, sizeof state->message, "out of memory for the decoded image");
            state->status = FL_IMAGE_OUT_OF_MEMORY;
            longjmp(state->jump, 1);
        }
    }
    // Photoshop writes CMYK inverted (0 = full ink) and marks it with an Adobe APP14 segment.
    int is_inverted = decompressor->saw_Adobe_marker;
    while (decompressor->output_scanline < decompressor->output_height) {
        uint8_t *output = state->pixels == NULL ? NULL
            : state->pixels + (size_t)decompressor->output_scanline * decompressor->output_width * 4;
        jpeg_read_scanlines(decompressor, row, 1);
        const JSAMPLE *pixel = row[0];
        for (JDIMENSION x = 0; x < decompressor->output_width; x++) {
            unsigned red, green, blue;
            if (is_four_channel) {
                unsigned c = pixel[0], m = pixel[1], y = pixel[2], k = pixel[3];
                if (!is_inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
                red = c * k / 255; green = m * k / 255; blue = y * k / 255;
                pixel += 4;
            } else {
                red = pixel[0]; green = pixel[1]; blue = pixel[2];
                pixel += 3;
            }
            if (output != NULL) {
                output[0] = (uint8_t)red; output[1] = (uint8_t)green; output[2] = (uint8_t)blue; output[3] = 255;
                output += 4;
            }
            result->sum_red += red * 255u;
            result->sum_green += green * 255u;
            result->sum_blue += blue * 255u;
            result->sum_alpha += 255u;
            result->pixel_count += 1;
        }
    }
    jpeg_finish_decompress(decompressor);
    result->scan_count = (uint32_t)decompressor->input_scan_number;
    jpeg_destroy_decompress(decompressor);
    result->pixels = state->pixels;
    free(state);
    result->status = FL_IMAGE_OK;
    return result->status;
}

// MARK: - libpng

int fl_png_decode(const void *data, size_t size, const fl_image_decode_options *options,
                  fl_image_decode_result *result) {
    memset(result, 0, sizeof *result);
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    // The simplified API sets its own jump point inside libpng and reports failure by return value.
    if (!png_image_begin_read_from_memory(&image, data, size)) {
        result->status = FL_IMAGE_DECODE_ERROR;
        fl_image_copy_message(result, image.message);
        png_image_free(&image);
        return result->status;
    }
    result->width = image.width;
    result->height = image.height;
    if ((uint64_t)image.width * image.height > options->pixel_budget) {
        result->status = FL_IMAGE_OVER_PIXEL_BUDGET;
        snprintf(result->message, sizeof result->message, "%ux%u pixels is above the budget of %llu",
                 image.width, image.height, (unsigned long long)options->pixel_budget);
        png_image_free(&image);
        return result->status;
    }
    image.format = PNG_FORMAT_RGBA;
    size_t stride = PNG_IMAGE_ROW_STRIDE(image);
    size_t buffer_size = PNG_IMAGE_BUFFER_SIZE(image, stride);
    png_bytep pixels = malloc(buffer_size);
    if (pixels == NULL) {
        result->status = FL_IMAGE_OUT_OF_MEMORY;
        fl_image_copy_message(result, "out of memory for the decoded image");
        png_image_free(&image);
        return result->status;
    }
    int finished = png_image_finish_read(&image, NULL, pixels, 0, NULL);
    if (!finished || (image.warning_or_error & PNG_IMAGE_WARNING) != 0) {
        result->status = finished ? FL_IMAGE_WARNING_AS_ERROR : FL_IMAGE_DECODE_ERROR;
        fl_image_copy_message(result, image.message);
        png_image_free(&image);
        free(pixels);
        return result->status;
    }
    result->decoded_width = image.width;
    result->decoded_height = image.height;
    for (png_uint_32 y = 0; y < image.height; y++) {
        const png_byte *pixel = pixels + (size_t)y * stride;
        for (png_uint_32 x = 0; x < image.width; x++, pixel += 4) {
            unsigned alpha = pixel[3];
            result->sum_red += (uint64_t)pixel[0] * alpha;
            result->sum_green += (uint64_t)pixel[1] * alpha;
            result->sum_blue += (uint64_t)pixel[2] * alpha;
            result->sum_alpha += alpha;
        }
    }
    result->pixel_count = (uint64_t)image.width * image.height;
    // PNG_FORMAT_RGBA rows are packed (stride == width * 4), as fl_image_decode_result promises.
    if (options->keep_pixels) {
        result->pixels = pixels;
    } else {
        free(pixels);
    }
    png_image_free(&image);
    result->status = FL_IMAGE_OK;
    return result->status;
}
