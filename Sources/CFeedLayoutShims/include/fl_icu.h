// Version-free names for the ICU functions TextMeasure uses. Debian's ICU renames every
// function per version (ubrk_open_72); these inline wrappers hide that from Swift.
#pragma once
#include <unicode/ubrk.h>
