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

// TextMeasure mirrors these ULineBreak values; these assertions keep the mirror honest.
_Static_assert(U_LB_UNKNOWN == 0 && U_LB_AMBIGUOUS == 1 && U_LB_ALPHABETIC == 2 && U_LB_BREAK_BOTH == 3,
               "ULineBreak values as TextMeasure's LineBreakClass has them");
_Static_assert(U_LB_BREAK_AFTER == 4 && U_LB_BREAK_BEFORE == 5 && U_LB_CLOSE_PUNCTUATION == 8 &&
                   U_LB_EXCLAMATION == 11 && U_LB_GLUE == 12 && U_LB_HYPHEN == 13 && U_LB_IDEOGRAPHIC == 14,
               "ULineBreak values as TextMeasure's LineBreakClass has them");
_Static_assert(U_LB_INSEPARABLE == 15 && U_LB_INFIX_NUMERIC == 16 && U_LB_NONSTARTER == 18 && U_LB_NUMERIC == 19 &&
                   U_LB_OPEN_PUNCTUATION == 20 && U_LB_POSTFIX_NUMERIC == 21 && U_LB_PREFIX_NUMERIC == 22 &&
                   U_LB_QUOTATION == 23,
               "ULineBreak values as TextMeasure's LineBreakClass has them");
_Static_assert(U_LB_SPACE == 26 && U_LB_BREAK_SYMBOLS == 27 && U_LB_CLOSE_PARENTHESIS == 36 &&
                   U_LB_CONDITIONAL_JAPANESE_STARTER == 37,
               "ULineBreak values as TextMeasure's LineBreakClass has them");

int32_t fl_icu_line_break_class(int32_t code_point) {
    return u_getIntPropertyValue(code_point, UCHAR_LINE_BREAK);
}

int fl_icu_is_east_asian_wide(int32_t code_point) {
    int32_t width = u_getIntPropertyValue(code_point, UCHAR_EAST_ASIAN_WIDTH);
    return width == U_EA_FULLWIDTH || width == U_EA_WIDE || width == U_EA_HALFWIDTH;
}
