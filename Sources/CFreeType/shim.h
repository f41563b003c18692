// Umbrella header for the system library; the module map points here.
#pragma once
#include <ft2build.h>
#include <freetype/freetype.h>
#include <freetype/tttables.h>
#include <freetype/ftsizes.h>
