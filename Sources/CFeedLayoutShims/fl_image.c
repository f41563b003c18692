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

/// libpng's simplified API (png_image), which the decoder used before it read row by row, kept its message in 64
/// bytes; messages stay that long so that `probe --verify` reports the same text.
#define FL_PNG_MESSAGE_SIZE 64

/// Everything a decode touches lives on the heap, so that nothing a library call changes is a non-volatile local
/// of a function that called setjmp (C11 7.13.2.1). Every function below that calls into a library sets `jump`
/// first; the libraries' error handlers longjmp to it.
struct fl_image_reader {
    fl_image_kind kind;
    int status;
    char message[JMSG_LENGTH_MAX];
    jmp_buf jump;
    fl_image_sums sums;
    uint32_t decoded_width, decoded_height;
    uint64_t library_bytes_now, library_bytes_peak;

    // libjpeg
    struct jpeg_decompress_struct decompressor;
    struct jpeg_error_mgr error_manager;
    struct jpeg_progress_mgr progress_manager;
    struct jpeg_memory_mgr library_memory;  // libjpeg's own functions, called by the counting ones
    int jpeg_created, jpeg_started, max_scans, is_four_channel, is_inverted;
    uint64_t virtual_array_bytes;  // requested, allocated when libjpeg realizes them
    JSAMPARRAY jpeg_row;

    // libpng
    png_structp png;
    png_infop png_info;
    const uint8_t *png_data;
    size_t png_remaining;
    int png_warned, png_interlaced, png_pass;
    uint32_t png_row_in_pass;
};

static void fl_reader_fail(fl_image_reader *reader, int status, const char *message) {
    reader->status = status;
    snprintf(reader->message, sizeof reader->message, "%s", message);
    longjmp(reader->jump, 1);
}

static void fl_reader_note_allocation(fl_image_reader *reader, uint64_t bytes) {
    reader->library_bytes_now += bytes;
    if (reader->library_bytes_now > reader->library_bytes_peak) reader->library_bytes_peak = reader->library_bytes_now;
}

static void fl_reader_add_pixel(fl_image_reader *reader, unsigned red, unsigned green, unsigned blue, unsigned alpha) {
    reader->sums.red += (uint64_t)red * alpha;
    reader->sums.green += (uint64_t)green * alpha;
    reader->sums.blue += (uint64_t)blue * alpha;
    reader->sums.alpha += alpha;
    reader->sums.pixel_count += 1;
}

/// Refuses a declared size above the pixel budget, before the library allocates anything for it.
static int fl_reader_over_budget(fl_image_reader *reader, uint32_t width, uint32_t height,
                                 const fl_image_decode_options *options) {
    if ((uint64_t)width * height <= options->pixel_budget) return 0;
    snprintf(reader->message, sizeof reader->message, "%ux%u pixels is above the budget of %llu", width, height,
             (unsigned long long)options->pixel_budget);
    reader->status = FL_IMAGE_OVER_PIXEL_BUDGET;
    return 1;
}

// MARK: - libjpeg

static fl_image_reader *fl_jpeg_reader_of(j_common_ptr info) {
    return (fl_image_reader *)((char *)info->err - offsetof(fl_image_reader, error_manager));
}

static void fl_jpeg_fail(j_common_ptr info, int status) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    (*info->err->format_message)(info, reader->message);
    reader->status = status;
    longjmp(reader->jump, 1);
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
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    j_decompress_ptr decompressor = (j_decompress_ptr)info;
    if (reader->max_scans > 0 && decompressor->input_scan_number > reader->max_scans) {
        snprintf(reader->message, sizeof reader->message,
                 "progressive JPEG has more than %d scans", reader->max_scans);
        reader->status = FL_IMAGE_TOO_MANY_SCANS;
        longjmp(reader->jump, 1);
    }
}

// libjpeg allocates through its memory manager's function table; these wrappers count what passes through
// before calling libjpeg's own functions. libjpeg frees only whole pools (at the end of the image), so the count
// only grows and is the peak.
static void *fl_jpeg_alloc_small(j_common_ptr info, int pool, size_t size) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    fl_reader_note_allocation(reader, size);
    return reader->library_memory.alloc_small(info, pool, size);
}

static void *fl_jpeg_alloc_large(j_common_ptr info, int pool, size_t size) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    fl_reader_note_allocation(reader, size);
    return reader->library_memory.alloc_large(info, pool, size);
}

static JSAMPARRAY fl_jpeg_alloc_sarray(j_common_ptr info, int pool, JDIMENSION samples_per_row, JDIMENSION rows) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    fl_reader_note_allocation(reader, (uint64_t)rows * (samples_per_row * sizeof(JSAMPLE) + sizeof(JSAMPROW)));
    return reader->library_memory.alloc_sarray(info, pool, samples_per_row, rows);
}

static JBLOCKARRAY fl_jpeg_alloc_barray(j_common_ptr info, int pool, JDIMENSION blocks_per_row, JDIMENSION rows) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    fl_reader_note_allocation(reader, (uint64_t)rows * (blocks_per_row * sizeof(JBLOCK) + sizeof(JBLOCKROW)));
    return reader->library_memory.alloc_barray(info, pool, blocks_per_row, rows);
}

static jvirt_sarray_ptr fl_jpeg_request_virt_sarray(j_common_ptr info, int pool, boolean pre_zero,
                                                    JDIMENSION samples_per_row, JDIMENSION rows,
                                                    JDIMENSION max_access) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    reader->virtual_array_bytes += (uint64_t)rows * samples_per_row * sizeof(JSAMPLE);
    return reader->library_memory.request_virt_sarray(info, pool, pre_zero, samples_per_row, rows, max_access);
}

static jvirt_barray_ptr fl_jpeg_request_virt_barray(j_common_ptr info, int pool, boolean pre_zero,
                                                    JDIMENSION blocks_per_row, JDIMENSION rows,
                                                    JDIMENSION max_access) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    reader->virtual_array_bytes += (uint64_t)rows * blocks_per_row * sizeof(JBLOCK);
    return reader->library_memory.request_virt_barray(info, pool, pre_zero, blocks_per_row, rows, max_access);
}

static void fl_jpeg_realize_virt_arrays(j_common_ptr info) {
    fl_image_reader *reader = fl_jpeg_reader_of(info);
    fl_reader_note_allocation(reader, reader->virtual_array_bytes);
    reader->virtual_array_bytes = 0;
    reader->library_memory.realize_virt_arrays(info);
}

static void fl_jpeg_count_allocations(fl_image_reader *reader) {
    struct jpeg_memory_mgr *memory = reader->decompressor.mem;
    reader->library_memory = *memory;
    memory->alloc_small = fl_jpeg_alloc_small;
    memory->alloc_large = fl_jpeg_alloc_large;
    memory->alloc_sarray = fl_jpeg_alloc_sarray;
    memory->alloc_barray = fl_jpeg_alloc_barray;
    memory->request_virt_sarray = fl_jpeg_request_virt_sarray;
    memory->request_virt_barray = fl_jpeg_request_virt_barray;
    memory->realize_virt_arrays = fl_jpeg_realize_virt_arrays;
}

/// What libjpeg will allocate, from the header: a progressive (or non-interleaved) JPEG keeps every DCT
/// coefficient of the image until its last scan (2 bytes per sample whatever the output scale); any JPEG keeps a
/// few rows of samples per component, and its tables.
static uint64_t fl_jpeg_library_bytes(j_decompress_ptr decompressor) {
    uint64_t bytes = 256 * 1024;
    int keeps_coefficients = decompressor->progressive_mode || decompressor->comps_in_scan < decompressor->num_components;
    for (int index = 0; index < decompressor->num_components; index++) {
        const jpeg_component_info *component = &decompressor->comp_info[index];
        uint64_t columns = component->width_in_blocks + (uint64_t)component->h_samp_factor;
        uint64_t rows = component->height_in_blocks + (uint64_t)component->v_samp_factor;
        if (keeps_coefficients) bytes += columns * rows * sizeof(JBLOCK);
        // Context rows for upsampling, the main buffer and the coefficient controller's MCU row.
        bytes += columns * DCTSIZE * (uint64_t)decompressor->max_v_samp_factor * DCTSIZE * 4;
    }
    bytes += (uint64_t)decompressor->output_width * 4 * 4;
    return bytes;
}

static void fl_jpeg_open(fl_image_reader *reader, const void *data, size_t size, const fl_image_decode_options *options,
                         fl_image_reader_info *info) {
    j_decompress_ptr decompressor = &reader->decompressor;
    reader->max_scans = options->max_progressive_scans;
    decompressor->err = jpeg_std_error(&reader->error_manager);
    reader->error_manager.error_exit = fl_jpeg_error_exit;
    reader->error_manager.output_message = fl_jpeg_output_message;
    reader->error_manager.emit_message = fl_jpeg_emit_message;
    reader->progress_manager.progress_monitor = fl_jpeg_progress;
    jpeg_create_decompress(decompressor);
    reader->jpeg_created = 1;
    fl_jpeg_count_allocations(reader);
    decompressor->progress = &reader->progress_manager;
    jpeg_mem_src(decompressor, (const unsigned char *)data, (unsigned long)size);
    jpeg_read_header(decompressor, TRUE);
    info->width = decompressor->image_width;
    info->height = decompressor->image_height;
    if (fl_reader_over_budget(reader, decompressor->image_width, decompressor->image_height, options)) return;
    int denominator = options->scale_denominator;
    decompressor->scale_num = 1;
    decompressor->scale_denom = (denominator == 2 || denominator == 4 || denominator == 8) ? denominator : 1;
    reader->is_four_channel = decompressor->jpeg_color_space == JCS_CMYK || decompressor->jpeg_color_space == JCS_YCCK;
    decompressor->out_color_space = reader->is_four_channel ? JCS_CMYK : JCS_RGB;
    // Photoshop writes CMYK inverted (0 = full ink) and marks it with an Adobe APP14 segment.
    reader->is_inverted = decompressor->saw_Adobe_marker;
    jpeg_calc_output_dimensions(decompressor);
    reader->decoded_width = decompressor->output_width;
    reader->decoded_height = decompressor->output_height;
    info->library_bytes = fl_jpeg_library_bytes(decompressor);
    // libjpeg would otherwise take whatever a coefficient buffer needs; above this it stops with an error instead.
    decompressor->mem->max_memory_to_use = (long)info->library_bytes;
}

static void fl_jpeg_read_row(fl_image_reader *reader, uint8_t *rgba, fl_image_row *row) {
    j_decompress_ptr decompressor = &reader->decompressor;
    if (!reader->jpeg_started) {
        jpeg_start_decompress(decompressor);
        reader->jpeg_started = 1;
        reader->jpeg_row = (*decompressor->mem->alloc_sarray)(
            (j_common_ptr)decompressor, JPOOL_IMAGE,
            decompressor->output_width * (JDIMENSION)decompressor->output_components, 1);
    }
    if (decompressor->output_scanline >= decompressor->output_height) {
        reader->status = FL_IMAGE_NO_MORE_ROWS;
        return;
    }
    row->y = decompressor->output_scanline;
    row->first_x = 0;
    row->x_step = 1;
    row->count = decompressor->output_width;
    jpeg_read_scanlines(decompressor, reader->jpeg_row, 1);
    const JSAMPLE *pixel = reader->jpeg_row[0];
    for (JDIMENSION x = 0; x < decompressor->output_width; x++) {
        unsigned red, green, blue;
        if (reader->is_four_channel) {
            unsigned c = pixel[0], m = pixel[1], y = pixel[2], k = pixel[3];
            if (!reader->is_inverted) { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k; }
            red = c * k / 255; green = m * k / 255; blue = y * k / 255;
            pixel += 4;
        } else {
            red = pixel[0]; green = pixel[1]; blue = pixel[2];
            pixel += 3;
        }
        rgba[0] = (uint8_t)red; rgba[1] = (uint8_t)green; rgba[2] = (uint8_t)blue; rgba[3] = 255;
        rgba += 4;
        fl_reader_add_pixel(reader, red, green, blue, 255);
    }
}

static void fl_jpeg_finish(fl_image_reader *reader) {
    jpeg_finish_decompress(&reader->decompressor);
}

// MARK: - libpng

/// libpng's allocations carry their size in front, so frees can be counted too.
typedef union fl_png_allocation_header {
    size_t size;
    max_align_t alignment;
} fl_png_allocation_header;

static png_voidp fl_png_malloc(png_structp png, png_alloc_size_t size) {
    fl_image_reader *reader = png_get_mem_ptr(png);
    fl_png_allocation_header *header = malloc(sizeof *header + size);
    if (header == NULL) return NULL;
    header->size = size;
    fl_reader_note_allocation(reader, size);
    return header + 1;
}

static void fl_png_free(png_structp png, png_voidp pointer) {
    if (pointer == NULL) return;
    fl_image_reader *reader = png_get_mem_ptr(png);
    fl_png_allocation_header *header = (fl_png_allocation_header *)pointer - 1;
    reader->library_bytes_now -= header->size;
    free(header);
}

/// The first error wins the message, as png_image kept it; the jump leaves libpng.
static void fl_png_error(png_structp png, png_const_charp message) {
    fl_image_reader *reader = png_get_error_ptr(png);
    reader->status = FL_IMAGE_DECODE_ERROR;
    snprintf(reader->message, FL_PNG_MESSAGE_SIZE, "%s", message);
    longjmp(reader->jump, 1);
}

/// A warning (a damaged ancillary chunk, a benign error) is kept and fails the decode when it finishes, as a
/// libjpeg warning does; only the first is kept, as png_image did.
static void fl_png_warning(png_structp png, png_const_charp message) {
    fl_image_reader *reader = png_get_error_ptr(png);
    if (reader->png_warned) return;
    reader->png_warned = 1;
    snprintf(reader->message, FL_PNG_MESSAGE_SIZE, "%s", message);
}

static void fl_png_read_memory(png_structp png, png_bytep out, size_t needed) {
    fl_image_reader *reader = png_get_io_ptr(png);
    if (reader->png_remaining < needed) png_error(png, "read beyond end of data");
    memcpy(out, reader->png_data, needed);
    reader->png_data += needed;
    reader->png_remaining -= needed;
}

/// Once the header is read, ignore every chunk the pixels do not need, as png_image does.
static void fl_png_skip_unused_chunks(png_structp png) {
    static const png_byte chunks_to_process[] = {
        98,  75,  71,  68, '\0',  // bKGD
        99,  72,  82,  77, '\0',  // cHRM
        103, 65,  77,  65, '\0',  // gAMA
        105, 67,  67,  80, '\0',  // iCCP
        115, 66,  73,  84, '\0',  // sBIT
        115, 82,  71,  66, '\0',  // sRGB
    };
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, NULL, -1);
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_AS_DEFAULT, chunks_to_process,
                                (int)(sizeof chunks_to_process / 5));
}

/// What libpng will allocate: its current and previous row (at up to 8 bytes a pixel while transforming),
/// zlib's window and state, gamma tables, and the structures.
static uint64_t fl_png_library_bytes(uint32_t width) {
    return 2 * ((uint64_t)width * 8 + 64) + 512 * 1024;
}

static void fl_png_open(fl_image_reader *reader, const void *data, size_t size, const fl_image_decode_options *options,
                        fl_image_reader_info *info) {
    reader->png_data = data;
    reader->png_remaining = size;
    reader->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, reader, fl_png_error, fl_png_warning, reader,
                                           fl_png_malloc, fl_png_free);
    if (reader->png == NULL) fl_reader_fail(reader, FL_IMAGE_OUT_OF_MEMORY, "out of memory");
    reader->png_info = png_create_info_struct(reader->png);
    if (reader->png_info == NULL) fl_reader_fail(reader, FL_IMAGE_OUT_OF_MEMORY, "out of memory");
    png_structp png = reader->png;
    png_infop png_info = reader->png_info;
    png_set_read_fn(png, reader, fl_png_read_memory);
    png_set_benign_errors(png, 1);
    png_read_info(png, png_info);
    uint32_t width = png_get_image_width(png, png_info);
    uint32_t height = png_get_image_height(png, png_info);
    info->width = width;
    info->height = height;
    if (fl_reader_over_budget(reader, width, height, options)) return;
    // The transformations png_image makes for 8-bit sRGB RGBA, in its order, so the pixels (gamma included)
    // are the ones the decoder produced before it read row by row.
    int color_type = png_get_color_type(png, png_info);
    int bit_depth = png_get_bit_depth(png, png_info);
    int has_alpha = (color_type & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, png_info, PNG_INFO_tRNS) != 0;
    png_set_expand(png);
    if ((color_type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
    // 16-bit samples without gamma information are taken as linear, 8-bit ones as sRGB.
    png_set_alpha_mode_fixed(png, PNG_ALPHA_PNG, bit_depth == 16 ? PNG_GAMMA_LINEAR : PNG_DEFAULT_sRGB);
    if (bit_depth == 16) png_set_scale_16(png);
    if (!has_alpha) png_set_add_alpha(png, 255, PNG_FILLER_AFTER);
    png_set_alpha_mode_fixed(png, PNG_ALPHA_PNG, PNG_DEFAULT_sRGB);
    fl_png_skip_unused_chunks(png);
    // No png_set_interlace_handling: an Adam7 image's passes arrive as the small images they are, so no row
    // has to wait in a full-size buffer for the later passes.
    reader->png_interlaced = png_get_interlace_type(png, png_info) == PNG_INTERLACE_ADAM7;
    png_read_update_info(png, png_info);
    if (png_get_rowbytes(png, png_info) != (size_t)width * 4) {
        fl_reader_fail(reader, FL_IMAGE_DECODE_ERROR, "unexpected row layout after the RGBA transformations");
    }
    reader->decoded_width = width;
    reader->decoded_height = height;
    info->library_bytes = fl_png_library_bytes(width);
}

static void fl_png_read_row(fl_image_reader *reader, uint8_t *rgba, fl_image_row *row) {
    uint32_t width = reader->decoded_width, height = reader->decoded_height;
    int last_pass = reader->png_interlaced ? 6 : 0;
    // Empty passes (of images narrower or shorter than 8 pixels) are skipped, as libpng skips them.
    while (reader->png_pass <= last_pass) {
        uint32_t rows = reader->png_interlaced ? PNG_PASS_ROWS(height, reader->png_pass) : height;
        uint32_t columns = reader->png_interlaced ? PNG_PASS_COLS(width, reader->png_pass) : width;
        if (columns > 0 && reader->png_row_in_pass < rows) break;
        reader->png_pass += 1;
        reader->png_row_in_pass = 0;
    }
    if (reader->png_pass > last_pass) {
        reader->status = FL_IMAGE_NO_MORE_ROWS;
        return;
    }
    int pass = reader->png_pass;
    if (reader->png_interlaced) {
        row->y = PNG_PASS_START_ROW(pass) + (reader->png_row_in_pass << PNG_PASS_ROW_SHIFT(pass));
        row->first_x = PNG_PASS_START_COL(pass);
        row->x_step = 1u << PNG_PASS_COL_SHIFT(pass);
        row->count = PNG_PASS_COLS(width, pass);
    } else {
        row->y = reader->png_row_in_pass;
        row->first_x = 0;
        row->x_step = 1;
        row->count = width;
    }
    png_read_row(reader->png, rgba, NULL);
    reader->png_row_in_pass += 1;
    for (uint32_t x = 0; x < row->count; x++, rgba += 4) fl_reader_add_pixel(reader, rgba[0], rgba[1], rgba[2], rgba[3]);
}

// MARK: - The reader

int fl_image_reader_open(fl_image_kind kind, const void *data, size_t size, const fl_image_decode_options *options,
                         fl_image_reader **result, fl_image_reader_info *info) {
    memset(info, 0, sizeof *info);
    fl_image_reader *reader = calloc(1, sizeof *reader);
    *result = reader;
    if (reader == NULL) return FL_IMAGE_OUT_OF_MEMORY;
    reader->kind = kind;
    if (setjmp(reader->jump)) return reader->status;
    if (kind == FL_IMAGE_KIND_JPEG) {
        fl_jpeg_open(reader, data, size, options, info);
    } else {
        fl_png_open(reader, data, size, options, info);
    }
    info->decoded_width = reader->decoded_width;
    info->decoded_height = reader->decoded_height;
    return reader->status;
}

int fl_image_reader_read_row(fl_image_reader *reader, uint8_t *rgba, fl_image_row *row) {
    if (reader->status != FL_IMAGE_OK) return reader->status;
    if (setjmp(reader->jump)) return reader->status;
    if (reader->kind == FL_IMAGE_KIND_JPEG) {
        fl_jpeg_read_row(reader, rgba, row);
    } else {
        fl_png_read_row(reader, rgba, row);
    }
    return reader->status;
}

int fl_image_reader_finish(fl_image_reader *reader) {
    if (reader->status == FL_IMAGE_NO_MORE_ROWS) reader->status = FL_IMAGE_OK;
    if (reader->status != FL_IMAGE_OK) return reader->status;
    if (setjmp(reader->jump)) return reader->status;
    if (reader->kind == FL_IMAGE_KIND_JPEG) {
        fl_jpeg_finish(reader);
    } else if (reader->png_warned) {
        // Like png_image, the decode read every row; then the warning fails it.
        reader->status = FL_IMAGE_WARNING_AS_ERROR;
    }
    return reader->status;
}

const char *fl_image_reader_message(const fl_image_reader *reader) {
    return reader->message;
}

uint32_t fl_image_reader_scan_count(const fl_image_reader *reader) {
    // PNG has no scans to count.
    return reader->jpeg_created ? (uint32_t)reader->decompressor.input_scan_number : 0;
}

fl_image_sums fl_image_reader_sums(const fl_image_reader *reader) {
    return reader->sums;
}

uint64_t fl_image_reader_peak_library_bytes(const fl_image_reader *reader) {
    return reader->library_bytes_peak;
}

void fl_image_reader_close(fl_image_reader *reader) {
    if (reader == NULL) return;
    if (reader->jpeg_created) jpeg_destroy_decompress(&reader->decompressor);
    if (reader->png != NULL) png_destroy_read_struct(&reader->png, &reader->png_info, NULL);
    free(reader);
}
