// Umbrella header for the system library; the module map points here.
#pragma once
#include <zlib.h>

/// deflateInit2 is a macro Swift cannot call: this starts a deflate stream that writes the gzip format
/// (window bits 15 + 16), at the given level.
static inline int fl_deflate_init_gzip(z_streamp stream, int level) {
    return deflateInit2(stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
}

/// inflateInit2 likewise, reading the gzip format only.
static inline int fl_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}
