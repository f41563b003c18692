// The only file that includes ICU's headers; fl_icu.h says why.
#include "fl_icu.h"
#include <unicode/ubrk.h>
#include <unicode/uchar.h>
#include <unicode/utypes.h>

_Static_assert(sizeof(UChar) == sizeof(uint16_t), "UTF-16 code units are 16 bits");
_Static_assert(sizeof(UErrorCode) == sizeof(int32_t), "ICU status codes fit in int32_t");
_Static_assert(sizeof(UChar32) == sizeof(int32_t), "code points fit in int32_t");

fl_icu_break_iterator *fl_icu_line_break_open(const char *locale, int32_t *status) {
    return (fl_icu_break_iterator *)ubrk_open(UBRK_LINE, locale, NULL, 0, (UErrorCode *)status);
}

void fl_icu_break_set_text(fl_icu_break_iterator *iterator, const uint16_t *text, int32_t length, int32_t *status) {
    ubrk_setText((UBreakIterator *)iterator, (const UChar *)text, length, (UErrorCode *)status);
}

int32_t fl_icu_break_first(fl_icu_break_iterator *iterator) { return ubrk_first((UBreakIterator *)iterator); }

int32_t fl_icu_break_next(fl_icu_break_iterator *iterator) { return ubrk_next((UBreakIterator *)iterator); }

void fl_icu_break_close(fl_icu_break_iterator *iterator) { ubrk_close((UBreakIterator *)iterator); }

int32_t fl_icu_break_done(void) { return UBRK_DONE; }

int32_t fl_icu_char_type(int32_t code_point) { return (int32_t)u_charType(code_point); }

int fl_icu_is_emoji_presentation(int32_t code_point) {
    return u_hasBinaryProperty(code_point, UCHAR_EMOJI_PRESENTATION);
}
