// Umbrella header for the system library; the module map points here.
#pragma once
#include <zlib.h>

/// inflateInit2 is a macro Swift cannot call: this starts an inflate stream that reads the gzip format only
/// (window bits 15 + 16). (Pages are compressed by libdeflate: CLibDeflate.)
static inline int fl_inflate_init_gzip(z_streamp stream) {
    return inflateInit2(stream, 15 + 16);
}
