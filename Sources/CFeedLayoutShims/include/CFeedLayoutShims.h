// Umbrella header of the C shim target. Each area has its own header so that its owner
// can change it without touching the others. Every exported symbol is prefixed `fl_`.
#pragma once
#include "fl_xml.h"
#include "fl_image.h"
#include "fl_icu.h"
#include "fl_png_write.h"
#include "fl_file.h"
