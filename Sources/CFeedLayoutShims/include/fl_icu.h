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

/// Opens a grapheme-cluster (UAX #29 extended) iterator for the root locale.
static inline UBreakIterator *fl_icu_character_break_open(UErrorCode *status) {
    return ubrk_open(UBRK_CHARACTER, "", NULL, 0, status);
}

/// Points an iterator at UTF-16 text. The text is not copied: it must outlive its use.
static inline void fl_icu_break_set_text(UBreakIterator *iterator, const UChar *text, int32_t length,
                                         UErrorCode *status) {
    ubrk_setText(iterator, text, length, status);
}

static inline int32_t fl_icu_break_first(UBreakIterator *iterator) { return ubrk_first(iterator); }
static inline int32_t fl_icu_break_next(UBreakIterator *iterator) { return ubrk_next(iterator); }
static inline int32_t fl_icu_break_following(UBreakIterator *iterator, int32_t offset) {
    return ubrk_following(iterator, offset);
}
static inline int32_t fl_icu_break_rule_status(UBreakIterator *iterator) {
    return ubrk_getRuleStatus(iterator);
}
static inline void fl_icu_break_close(UBreakIterator *iterator) { ubrk_close(iterator); }

/// The value ubrk_next returns when there are no more boundaries (UBRK_DONE).
static inline int32_t fl_icu_break_done(void) { return UBRK_DONE; }

/// True when the rule status of the boundary just returned is a mandatory (hard) line break.
static inline int fl_icu_line_break_is_hard(int32_t rule_status) {
    return rule_status >= UBRK_LINE_HARD && rule_status < UBRK_LINE_HARD_LIMIT;
}

/// The Unicode general category of a code point, as ICU's UCharCategory value.
static inline int32_t fl_icu_char_type(UChar32 code_point) { return (int32_t)u_charType(code_point); }

/// True for code points with the Emoji_Presentation property (shown as colour emoji by default).
static inline int fl_icu_is_emoji_presentation(UChar32 code_point) {
    return u_hasBinaryProperty(code_point, UCHAR_EMOJI_PRESENTATION);
}

/// True for code points with the Extended_Pictographic property.
static inline int fl_icu_is_extended_pictographic(UChar32 code_point) {
    return u_hasBinaryProperty(code_point, UCHAR_EXTENDED_PICTOGRAPHIC);
}
