// Umbrella header for the system library; the module map points here.
#pragma once
#include <unicode/utypes.h>
#include <unicode/ubrk.h>
#include <unicode/utext.h>
#include <unicode/uchar.h>
