/* What TextMeasure's FontCatalog.locate does with fontconfig, COUNT times (argument, default 4), freeing everything
 * it makes, then exits without FcFini as feedlayout does (FcFini with CALL_FCFINI=1). `run` builds it with
 * -fsanitize=address and shows what LeakSanitizer reports at exit: the same bytes for 4 lookups as for 400. */
#include <stdio.h>
#include <stdlib.h>
#include <fontconfig/fontconfig.h>

int main(int argc, char **argv) {
    const char *families[] = {"DejaVu Sans", "sans-serif", "Noto Sans CJK JP", "serif"};
    int count = argc > 1 ? atoi(argv[1]) : 4;
    for (int i = 0; i < count; i++) {
        if (!FcInit()) return 1;
        FcPattern *pattern = FcPatternCreate();
        FcPatternAddString(pattern, FC_FAMILY, (const FcChar8 *)families[i % 4]);
        FcPatternAddInteger(pattern, FC_WEIGHT, FcWeightFromOpenType(400));
        FcPatternAddInteger(pattern, FC_SLANT, FC_SLANT_ROMAN);
        FcConfigSubstitute(NULL, pattern, FcMatchPattern);
        FcDefaultSubstitute(pattern);
        FcResult result = FcResultNoMatch;
        FcPattern *match = FcFontMatch(NULL, pattern, &result);
        if (match) FcPatternDestroy(match);
        FcPatternDestroy(pattern);
    }
    if (getenv("CALL_FCFINI")) FcFini();
    printf("%d lookups\n", count);
    return 0;
}
