// libpng / libjpeg glue for ImageProbe: every call that can longjmp lives in C.
//
// Each decode function sets its own jump point (libjpeg) or uses libpng's simplified
// png_image API, which catches its own longjmp; no longjmp ever crosses a Swift frame.
// Library messages never reach stderr: they come back in `message`.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// How a decode ended.
typedef enum fl_image_status {
    FL_IMAGE_OK = 0,
    FL_IMAGE_DECODE_ERROR = 1,       ///< the library reported an error
    FL_IMAGE_WARNING_AS_ERROR = 2,   ///< the library warned (corrupt data); verification fails
    FL_IMAGE_OVER_PIXEL_BUDGET = 3,  ///< the declared size is above options.pixel_budget
    FL_IMAGE_TOO_MANY_SCANS = 4,     ///< a progressive JPEG has more scans than allowed
    FL_IMAGE_OUT_OF_MEMORY = 5,
} fl_image_status;

/// What the caller allows.
typedef struct fl_image_decode_options {
    uint64_t pixel_budget;           ///< largest width × height that will be decoded
    int32_t max_progressive_scans;   ///< JPEG only; 0 means no limit
    int32_t scale_denominator;       ///< JPEG DCT scaling 1/1, 1/2, 1/4 or 1/8; PNG ignores it
    int32_t keep_pixels;             ///< non-zero: hand back the decoded RGBA in result->pixels
    int32_t reserved;
} fl_image_decode_options;

/// What the decode found.
typedef struct fl_image_decode_result {
    int32_t status;                  ///< an fl_image_status
    uint32_t width, height;          ///< declared size
    uint32_t decoded_width, decoded_height;  ///< after JPEG scaling
    uint32_t scan_count;             ///< JPEG scans read
    uint32_t reserved;
    uint64_t pixel_count;            ///< pixels averaged
    uint64_t sum_red, sum_green, sum_blue;  ///< alpha-weighted channel sums (value × alpha)
    uint64_t sum_alpha;              ///< sum of alpha (255 per opaque pixel)
    uint8_t *pixels;                 ///< RGBA, decoded_width × decoded_height, rows packed; release
                                     ///< with fl_image_free_pixels (NULL unless keep_pixels)
    char message[200];               ///< the library's message when status != FL_IMAGE_OK
} fl_image_decode_result;

_Static_assert(sizeof(((fl_image_decode_result *)0)->message) == 200, "Swift reads 200 message bytes");

/// Releases result->pixels.
void fl_image_free_pixels(uint8_t *pixels);

/// Decodes a JPEG from memory with libjpeg-turbo, summing colours for a placeholder.
/// Returns result->status.
int fl_jpeg_decode(const void *data, size_t size, const fl_image_decode_options *options,
                   fl_image_decode_result *result);

/// Decodes a PNG from memory with libpng's png_image API as RGBA, summing colours.
/// Returns result->status.
int fl_png_decode(const void *data, size_t size, const fl_image_decode_options *options,
                  fl_image_decode_result *result);
