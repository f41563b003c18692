// Version-free names for the ICU functions TextMeasure uses. Debian's ICU renames every
// function per version (ubrk_open_72); these wrappers hide that from Swift, which only ever
// sees the `fl_icu_` names below.
//
// This header includes no ICU header and uses only plain C types, on purpose: Foundation on
// Linux carries its own ICU (_FoundationICU) whose headers declare the same C types with other
// definitions, and a Swift module that sees both (any module that imports Foundation and, even
// through `internal import`, this target) fails to build. The bodies live in fl_icu.c, the one
// file that includes <unicode/...>.
#pragma once
#include <stdint.h>

/// An ICU line-break iterator (UBreakIterator), opaque to Swift.
typedef struct fl_icu_break_iterator fl_icu_break_iterator;

// ICU status codes travel as int32_t: 0 is success, negative values are warnings, positive errors.

/// Opens a line-break (UAX #14) iterator for a locale (which may carry an `@lb=` keyword)
/// with no text attached yet. Returns NULL and sets *status on failure.
fl_icu_break_iterator *fl_icu_line_break_open(const char *locale, int32_t *status);

/// Points an iterator at UTF-16 text. The text is not copied: it must outlive its use.
void fl_icu_break_set_text(fl_icu_break_iterator *iterator, const uint16_t *text, int32_t length, int32_t *status);

/// The first boundary (always 0) and each following one, then fl_icu_break_done().
int32_t fl_icu_break_first(fl_icu_break_iterator *iterator);
int32_t fl_icu_break_next(fl_icu_break_iterator *iterator);

void fl_icu_break_close(fl_icu_break_iterator *iterator);

/// The value fl_icu_break_next returns when there are no more boundaries (UBRK_DONE).
int32_t fl_icu_break_done(void);

/// The Unicode general category of a code point, as ICU's UCharCategory value.
int32_t fl_icu_char_type(int32_t code_point);

/// The UAX #14 line-break class of a code point (ICU's ULineBreak value).
int32_t fl_icu_line_break_class(int32_t code_point);

/// True for code points whose East Asian Width is F, W or H (what LB30 leaves out).
int fl_icu_is_east_asian_wide(int32_t code_point);
