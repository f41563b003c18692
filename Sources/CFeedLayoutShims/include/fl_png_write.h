// libpng writing glue for PreviewRender: the classic write API under its own setjmp, so no
// longjmp ever crosses a Swift frame and libpng's messages come back instead of reaching stderr.
#pragma once
#include <stddef.h>
#include <stdint.h>

/// How a write ended.
typedef enum fl_png_write_status {
    FL_PNG_WRITE_OK = 0,
    FL_PNG_WRITE_OPEN_FAILED = 1,   ///< the file could not be created (errno's text in message)
    FL_PNG_WRITE_LIBPNG_ERROR = 2,  ///< libpng reported an error
    FL_PNG_WRITE_IO_ERROR = 3,      ///< writing or closing the file failed (disk full, say)
} fl_png_write_status;

/// Writes an 8-bit RGB image (rows `stride` bytes apart, `width * 3` of them used) to `path`,
/// replacing the file, compressed for speed (Paeth filter, zlib's run-length strategy).
/// Returns an fl_png_write_status; on failure `message` (of `message_size` bytes) says what
/// went wrong. A failed write may leave a partial file behind: write to a temporary name and
/// rename.
int fl_png_write_rgb(const char *path, const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                     char *message, size_t message_size);
