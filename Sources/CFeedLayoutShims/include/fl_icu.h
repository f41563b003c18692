// Version-free names for the ICU functions TextMeasure uses. Debian's ICU renames every
// function per version (ubrk_open_72); these inline wrappers hide that from Swift, which
// only ever sees the `fl_icu_` names below.
#pragma once
#include <unicode/utypes.h>
#include <unicode/ubrk.h>
#include <unicode/uchar.h>

/// Opens a line-break (UAX #14) iterator for a locale (which may carry an `@lb=` keyword)
/// with no text attached yet. Returns NULL and sets *status on failure.
static inline UBreakIterator *fl_icu_line_break_open(const char *locale, UErrorCode *status) {
    return ubrk_open(UBRK_LINE, locale, NULL, 0, status);
}

/// Points an iterator at UTF-16 text. The text is not copied: it must outlive its use.
static inline void fl_icu_break_set_text(UBreakIterator *iterator, const UChar *text, int32_t length,
                                         UErrorCode *status) {
    ubrk_setText(iterator, text, length, status);
}

/// Moves to the start of the text and returns that boundary (0).
static inline int32_t fl_icu_break_first(UBreakIterator *iterator) { return ubrk_first(iterator); }

/// Moves to the next boundary and returns it, or `fl_icu_break_done()` at the end.
static inline int32_t fl_icu_break_next(UBreakIterator *iterator) { return ubrk_next(iterator); }

/// Frees an iterator.
static inline void fl_icu_break_close(UBreakIterator *iterator) { ubrk_close(iterator); }

/// The value ubrk_next returns when there are no more boundaries (UBRK_DONE).
static inline int32_t fl_icu_break_done(void) { return UBRK_DONE; }

/// The Unicode general category of a code point, as ICU's UCharCategory value.
static inline int32_t fl_icu_char_type(UChar32 code_point) { return (int32_t)u_charType(code_point); }

/// True for code points with the Emoji_Presentation property (shown as colour emoji by default).
static inline int fl_icu_is_emoji_presentation(UChar32 code_point) {
    return u_hasBinaryProperty(code_point, UCHAR_EMOJI_PRESENTATION);
}
