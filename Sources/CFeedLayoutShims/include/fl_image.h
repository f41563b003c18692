// libpng / libjpeg glue for ImageProbe: every call that can longjmp lives in C.
#pragma once
#include <stddef.h>
#include <stdint.h>
