internal import CFeedLayoutShims
internal import CHarfBuzz

/// Chromium's default `text-spacing-trim: normal` for CJK punctuation ("fullwidth
/// punctuation collapsing"): when two fullwidth punctuation marks meet, one of them is
/// set half-width with the font's `halt` feature. Blink does this in its `HanKerning`
/// class for fonts that have `halt` but no `chws`; this restates its rules.
///
/// Measured in Chromium with Noto Sans CJK at 16 px: in "」。" and "。。" the first mark
/// is 8 px wide, in "（「", "」（", "。（" and "：「" the second is; "！」" is untouched.
enum HanKerning {
    /// The text-spacing classes of CSS Text 4, as Blink resolves them for a font.
    enum CharacterClass: Equatable, Sendable {
        case other, open, close, middle, openNarrow, closeNarrow
        /// Classes that depend on where the font draws the glyph.
        case dot, colon, semicolon, openQuote, closeQuote
    }

    /// How one font draws the marks whose class depends on the font.
    struct FontData: Sendable {
        var classForDot: CharacterClass
        var classForColon: CharacterClass
        var classForSemicolon: CharacterClass
        var quotesAreFullwidth: Bool
    }

    /// The OpenType tag `halt` (alternate half widths).
    static let halfWidthTag: UInt32 =
        (UInt32(UInt8(ascii: "h")) << 24) | (UInt32(UInt8(ascii: "a")) << 16) | (UInt32(UInt8(ascii: "l")) << 8)
        | UInt32(UInt8(ascii: "t"))

    /// Studies a font as Blink's `HanKerning::FontData` does, or returns nil when the
    /// font cannot set punctuation half-width (no `halt`), so nothing is trimmed.
    static func fontData(for font: OpaquePointer) -> FontData? {
        // A font has usable `halt` when it narrows an opening bracket.
        guard let full = advance(of: 0x300C, in: font, halfWidth: false),
            let half = advance(of: 0x300C, in: font, halfWidth: true), half < full
        else { return nil }
        let dotClass = sharedClass(of: [0x3001, 0x3002, 0xFF0C, 0xFF0E], in: font)
        let quotesOpen = sharedClass(of: [0x201C, 0x2018], in: font)
        let quotesClose = sharedClass(of: [0x201D, 0x2019], in: font)
        return FontData(
            classForDot: dotClass, classForColon: glyphClass(of: 0xFF1A, in: font) ?? .other,
            classForSemicolon: glyphClass(of: 0xFF1B, in: font) ?? .other,
            quotesAreFullwidth: quotesOpen == .open && quotesClose == .close)
    }

    /// The class of a code point before the font is consulted (Blink's
    /// `Character::GetHanKerningCharType`).
    static func characterClass(of codePoint: UInt32) -> CharacterClass {
        switch codePoint {
        case 0x2018, 0x201C: return .openQuote
        case 0x2019, 0x201D: return .closeQuote
        case 0x3000, 0x00B7, 0x2027, 0x30FB: return .middle
        case 0x3001, 0x3002, 0xFF0C, 0xFF0E: return .dot
        case 0xFF1A: return .colon
        case 0xFF1B: return .semicolon
        // ASCII, kana, ideographs and Hangul syllables are most of CJK text: their only opening and closing
        // punctuation are ASCII brackets, so they need no ICU lookup (`CJKPunctuationTests` checks this against ICU).
        case 0x28, 0x5B, 0x7B: return .openNarrow
        case 0x29, 0x5D, 0x7D: return .closeNarrow
        case 0..<0x80, 0x3040...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3: return .other
        default: return classFromICU(of: codePoint)
        }
    }

    /// `characterClass(of:)` for punctuation the explicit cases leave out: from ICU's general category.
    static func classFromICU(of codePoint: UInt32) -> CharacterClass {
        let category = fl_icu_char_type(Int32(bitPattern: codePoint))
        let startPunctuation: Int32 = 20  // U_START_PUNCTUATION
        let endPunctuation: Int32 = 21  // U_END_PUNCTUATION
        guard category == startPunctuation || category == endPunctuation else { return .other }
        let isWide =
            (0x3000...0x303F).contains(codePoint) || (0xFF01...0xFF60).contains(codePoint)
            || (0xFFE0...0xFFE6).contains(codePoint)
        if category == startPunctuation { return isWide ? .open : .openNarrow }
        return isWide ? .close : .closeNarrow
    }

    /// The class of a code point in a font (`HanKerning::GetCharType`).
    static func resolvedClass(of codePoint: UInt32, in data: FontData) -> CharacterClass {
        switch characterClass(of: codePoint) {
        case .dot: return data.classForDot
        case .colon: return data.classForColon
        case .semicolon: return data.classForSemicolon
        case .openQuote: return data.quotesAreFullwidth ? .open : .openNarrow
        case .closeQuote: return data.quotesAreFullwidth ? .close : .closeNarrow
        case let other: return other
        }
    }

    /// `HanKerning::ShouldKern`: the second of a pair loses its leading half.
    static func trimsSecond(previous: CharacterClass, current: CharacterClass) -> Bool {
        current == .open && [.open, .middle, .close, .openNarrow].contains(previous)
    }

    /// `HanKerning::ShouldKernLast`: the first of a pair loses its trailing half.
    static func trimsFirst(previous: CharacterClass, current: CharacterClass) -> Bool {
        previous == .close && [.close, .middle, .closeNarrow].contains(current)
    }

    /// `halt` features for the clusters of `text` (UTF-16 offsets from its start) that
    /// Blink would set half-width, looking only at `runRange` but using its neighbours
    /// in `text` as context.
    static func features(
        for text: UnsafeBufferPointer<UInt16>, runRange: Range<Int>, data: FontData
    ) -> [hb_feature_t] {
        var scalars: [(offset: Int, kind: CharacterClass)] = []
        TextPreparation.forEachScalar(in: text) { offset, value in
            scalars.append((offset, resolvedClass(of: value, in: data)))
            return true
        }
        var trimmed = [Bool](repeating: false, count: scalars.count)
        for index in scalars.indices.dropFirst() {
            let previous = scalars[index - 1].kind
            let current = scalars[index].kind
            if trimsSecond(previous: previous, current: current) { trimmed[index] = true }
            if trimsFirst(previous: previous, current: current) { trimmed[index - 1] = true }
        }
        return scalars.indices.compactMap { index in
            let cluster = scalars[index].offset
            guard trimmed[index], runRange.contains(cluster) else { return nil }
            return hb_feature_t(tag: halfWidthTag, value: 1, start: UInt32(cluster), end: UInt32(cluster + 1))
        }
    }

    /// Whether the mark just before `boundary` in `units[range]` loses its trailing half to the mark after it:
    /// the one `halt` feature that shaping the text up to `boundary` on its own would not give.
    static func trimsLast(
        before boundary: Int, in units: UnsafeBufferPointer<UInt16>, range: Range<Int>, data: FontData
    ) -> Bool {
        guard boundary > range.lowerBound, boundary < range.upperBound,
            let last = scalar(endingAt: boundary, in: units, from: range.lowerBound),
            let next = scalar(startingAt: boundary, in: units, before: range.upperBound)
        else { return false }
        return trimsFirst(previous: resolvedClass(of: last, in: data), current: resolvedClass(of: next, in: data))
    }

    private static func scalar(endingAt end: Int, in units: UnsafeBufferPointer<UInt16>, from start: Int) -> UInt32? {
        let unit = units[end - 1]
        if UTF16.isTrailSurrogate(unit), end - 2 >= start, UTF16.isLeadSurrogate(units[end - 2]) {
            return TextPreparation.codePoint(lead: units[end - 2], trail: unit)
        }
        return Unicode.Scalar(unit)?.value
    }

    private static func scalar(startingAt start: Int, in units: UnsafeBufferPointer<UInt16>, before end: Int) -> UInt32?
    {
        let unit = units[start]
        if UTF16.isLeadSurrogate(unit), start + 1 < end, UTF16.isTrailSurrogate(units[start + 1]) {
            return TextPreparation.codePoint(lead: unit, trail: units[start + 1])
        }
        return Unicode.Scalar(unit)?.value
    }

    private static func glyph(of codePoint: UInt32, in font: OpaquePointer) -> hb_codepoint_t? {
        var glyph: hb_codepoint_t = 0
        return hb_font_get_nominal_glyph(font, codePoint, &glyph) != 0 ? glyph : nil
    }

    private static func advance(of codePoint: UInt32, in font: OpaquePointer, halfWidth: Bool) -> Int32? {
        guard glyph(of: codePoint, in: font) != nil, let buffer = hb_buffer_create() else { return nil }
        defer { hb_buffer_destroy(buffer) }
        var units = Array(String(UnicodeScalar(codePoint)!).utf16)
        hb_buffer_add_utf16(buffer, &units, Int32(units.count), 0, Int32(units.count))
        hb_buffer_guess_segment_properties(buffer)
        let features = halfWidth ? [hb_feature_t(tag: halfWidthTag, value: 1, start: 0, end: UInt32.max)] : []
        hb_shape(font, buffer, features, UInt32(features.count))
        var count: UInt32 = 0
        guard let positions = hb_buffer_get_glyph_positions(buffer, &count), count > 0 else { return nil }
        return positions[0].x_advance
    }

    /// Where the ink of a glyph sits in its advance (`CharTypeFromBounds`).
    private static func glyphClass(of codePoint: UInt32, in font: OpaquePointer) -> CharacterClass? {
        guard let glyph = glyph(of: codePoint, in: font) else { return nil }
        var extents = hb_glyph_extents_t()
        guard hb_font_get_glyph_extents(font, glyph, &extents) != 0 else { return nil }
        let halfAdvance = hb_font_get_glyph_h_advance(font, glyph) / 2
        let left = extents.x_bearing
        let right = extents.x_bearing + extents.width
        if right <= halfAdvance { return .close }
        if left >= halfAdvance { return .open }
        return .middle
    }

    /// The class several glyphs share, or `.other` when their advances or classes differ.
    private static func sharedClass(of codePoints: [UInt32], in font: OpaquePointer) -> CharacterClass {
        var shared: (advance: Int32, kind: CharacterClass)?
        for codePoint in codePoints {
            guard let glyph = glyph(of: codePoint, in: font), let kind = glyphClass(of: codePoint, in: font) else {
                continue
            }
            let advance = hb_font_get_glyph_h_advance(font, glyph)
            if let known = shared {
                if known.advance != advance || known.kind != kind { return .other }
            } else {
                shared = (advance, kind)
            }
        }
        return shared?.kind ?? .other
    }
}
