// libpng / libjpeg glue for ImageProbe: every call that can longjmp lives in C.
//
// A decode is a reader that hands out one row at a time, so no caller ever needs the whole frame:
// open it (header only), read rows, finish, close. Each function that calls into a library sets its
// own jump point, so no longjmp ever crosses a Swift frame. Library messages never reach stderr:
// they come back through fl_image_reader_message.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// How a call ended.
typedef enum fl_image_status {
    FL_IMAGE_OK = 0,
    FL_IMAGE_DECODE_ERROR = 1,       ///< the library reported an error
    FL_IMAGE_WARNING_AS_ERROR = 2,   ///< the library warned (corrupt data); verification fails
    FL_IMAGE_OVER_PIXEL_BUDGET = 3,  ///< the declared size is above options.pixel_budget
    FL_IMAGE_TOO_MANY_SCANS = 4,     ///< a progressive JPEG has more scans than allowed
    FL_IMAGE_OUT_OF_MEMORY = 5,
    FL_IMAGE_NO_MORE_ROWS = 6,       ///< fl_image_reader_read_row: every row has been read
} fl_image_status;

/// Which library decodes.
typedef enum fl_image_kind {
    FL_IMAGE_KIND_JPEG = 1,
    FL_IMAGE_KIND_PNG = 2,
} fl_image_kind;

/// What the caller allows.
typedef struct fl_image_decode_options {
    uint64_t pixel_budget;           ///< largest width × height that will be decoded
    int32_t max_progressive_scans;   ///< JPEG only; 0 means no limit
    int32_t scale_denominator;       ///< JPEG DCT scaling 1/1, 1/2, 1/4 or 1/8; PNG ignores it
} fl_image_decode_options;

/// What the header says, known once the reader is open.
typedef struct fl_image_reader_info {
    uint32_t width, height;                  ///< declared size
    uint32_t decoded_width, decoded_height;  ///< after JPEG scaling
    /// The most the library will allocate for this decode, estimated from the header (for a progressive JPEG,
    /// mostly its whole-image coefficient buffer). libjpeg is held to it (max_memory_to_use).
    uint64_t library_bytes;
} fl_image_reader_info;

/// Where the pixels of one row sit in the decoded image: `count` pixels at x = first_x + i * x_step of row y.
/// Rows of a non-interlaced image are whole (first_x 0, x_step 1); those of an Adam7 pass are not.
typedef struct fl_image_row {
    uint32_t y, first_x, x_step, count;
} fl_image_row;

/// What the rows held: alpha-weighted colour sums for the average colour.
typedef struct fl_image_sums {
    uint64_t pixel_count;                    ///< pixels read
    uint64_t red, green, blue;               ///< alpha-weighted channel sums (value × alpha)
    uint64_t alpha;                          ///< sum of alpha (255 per opaque pixel)
} fl_image_sums;

/// One decode in progress.
typedef struct fl_image_reader fl_image_reader;

/// Reads the header of a JPEG or PNG held in memory and prepares the decode (the bytes must stay valid until
/// fl_image_reader_close). Sets `*reader` (NULL only when out of memory), which must be closed whatever the
/// status. Returns FL_IMAGE_OK, or the status of a failure (message in fl_image_reader_message).
int fl_image_reader_open(fl_image_kind kind, const void *data, size_t size, const fl_image_decode_options *options,
                         fl_image_reader **reader, fl_image_reader_info *info);

/// Decodes the next row as 8-bit RGBA (not premultiplied) into `rgba`, which holds decoded_width pixels, and says
/// where it sits. Returns FL_IMAGE_OK, FL_IMAGE_NO_MORE_ROWS after the last, or a failure's status.
int fl_image_reader_read_row(fl_image_reader *reader, uint8_t *rgba, fl_image_row *row);

/// Ends a decode whose rows have all been read; a warning met on the way (corrupt data) fails it here.
/// Returns FL_IMAGE_OK or a failure's status.
int fl_image_reader_finish(fl_image_reader *reader);

/// The library's message after a failure ("" otherwise).
const char *fl_image_reader_message(const fl_image_reader *reader);

/// JPEG scans read so far (1 for baseline, more for progressive); 0 for PNG.
uint32_t fl_image_reader_scan_count(const fl_image_reader *reader);

/// The colour sums of the rows read so far.
fl_image_sums fl_image_reader_sums(const fl_image_reader *reader);

/// The most bytes the library held at once during this decode, counted through its allocator hooks (libpng's
/// malloc_fn, libjpeg's memory manager); an upper bound, as libjpeg frees only whole pools.
uint64_t fl_image_reader_peak_library_bytes(const fl_image_reader *reader);

/// Releases the reader and everything the library holds for it.
void fl_image_reader_close(fl_image_reader *reader);
