internal import CFreeType
internal import CHarfBuzz

/// The vertical metrics of one font at one size, rounded the way Blink rounds them.
///
/// Blink (`SimpleFontData::PlatformInit` with `FontMetrics::AscentDescentWithHacks`) takes
/// Skia's FreeType metrics: ascent, descent and line gap from the face's `hhea`-derived
/// values, or from the OS/2 typo values when the font sets USE_TYPO_METRICS, scaled to the
/// size in single precision. Ascent and descent are rounded to whole pixels; on Linux with
/// subpixel positioning a descent that was rounded down borrows a pixel from the ascent so
/// descenders are not clipped. The line spacing is the sum of the three rounded values.
struct FontVerticalMetrics: Sendable, Equatable {
    /// Rounded ascent in pixels.
    var ascent: Int
    /// Rounded descent in pixels (positive below the baseline).
    var descent: Int
    /// The line gap (Skia's leading) in pixels, unrounded.
    var lineGap: Float
    /// `round(ascent) + round(descent) + round(lineGap)`: the height of a `line-height:
    /// normal` line that uses only this font.
    var lineSpacing: Int

    /// The ascent and descent of this font's line box once half the leading of its own
    /// line spacing is added to each side, as Blink's `InlineBoxState::AccumulateUsedFonts`
    /// does for every font a line uses when `line-height` is `normal`.
    var halfLeadingBox: (above: Int, below: Int) {
        let contentHeight = ascent + descent
        // Blink floors half of the leading onto the ascent side and gives the rest to the
        // descent side, so an odd leading biases downwards.
        let leadingAbove = Int((Double(lineSpacing - contentHeight) / 2).rounded(.down))
        let leadingBelow = lineSpacing - contentHeight - leadingAbove
        return (ascent + leadingAbove, descent + leadingBelow)
    }
}

/// One font face at one size, ready for shaping: an immutable HarfBuzz font plus the
/// metrics Blink would derive for it.
///
/// Only HarfBuzz state is kept after initialisation; FreeType is used once, to read the
/// face's metrics the way Skia does, and released. An immutable `hb_font_t` is safe to
/// shape with from several threads at once, which is why this type can be shared.
final class LoadedFont: @unchecked Sendable {
    /// The font file this face came from.
    let path: String
    /// The face index inside the file (collections such as `.ttc` hold several).
    let faceIndex: Int
    /// The HarfBuzz font, scaled so one unit is 1/65536 px (16.16), as Blink scales it.
    let harfBuzzFont: OpaquePointer
    /// Vertical metrics at the measurer's size.
    let metrics: FontVerticalMetrics
    /// Whether glyph advances keep fractional pixels (see ``TextStyle/subpixelPositioning``).
    let subpixelPositioning: Bool

    /// Loads a face and scales it.
    ///
    /// - Parameters:
    ///   - path: The font file.
    ///   - faceIndex: The face inside the file.
    ///   - size: The font size in pixels.
    ///   - subpixelPositioning: Whether advances keep fractional pixels.
    /// - Throws: ``TextMeasureError/Code/fontFileUnreadable`` when the file is missing or
    ///   not a font.
    init(path: String, faceIndex: Int, size: Double, subpixelPositioning: Bool) throws(TextMeasureError) {
        self.path = path
        self.faceIndex = faceIndex
        self.subpixelPositioning = subpixelPositioning
        self.metrics = try Self.readVerticalMetrics(path: path, faceIndex: faceIndex, size: size, subpixelPositioning: subpixelPositioning)

        guard let blob = hb_blob_create_from_file_or_fail(path) else {
            throw TextMeasureError(
                code: .fontFileUnreadable,
                message: "cannot read font file '\(path)': check that it exists and is readable, or pass a family name")
        }
        defer { hb_blob_destroy(blob) }
        let face = hb_face_create(blob, UInt32(faceIndex))
        defer { hb_face_destroy(face) }
        guard hb_face_get_glyph_count(face) > 0 else {
            throw TextMeasureError(
                code: .fontFileUnreadable,
                message: "'\(path)' (face \(faceIndex)) holds no glyphs: pass an OpenType or TrueType font file")
        }
        let font = hb_font_create(face)!
        // Blink hands HarfBuzz the size in 16.16 fixed point (SkiaScalarToHarfBuzzPosition
        // truncates), so positions come back in 1/65536 px.
        let scale = Int32(clamping: Int64(size * 65536))
        hb_font_set_scale(font, scale, scale)
        hb_font_make_immutable(font)
        self.harfBuzzFont = font
    }

    deinit {
        hb_font_destroy(harfBuzzFont)
    }

    /// Whether the font maps this code point to a glyph.
    func hasGlyph(for codePoint: UInt32) -> Bool {
        var glyph: hb_codepoint_t = 0
        return hb_font_get_nominal_glyph(harfBuzzFont, codePoint, &glyph) != 0
    }

    /// The unshaped advance of a glyph in 16.16 pixels, rounded to a whole pixel unless
    /// subpixel positioning is on (Blink's `SkiaTextMetrics::GetGlyphWidthForHarfBuzz`).
    func nominalAdvance(ofGlyph glyph: UInt32) -> Int32 {
        hb_font_get_glyph_h_advance(harfBuzzFont, glyph)
    }

    /// Reads ascent, descent and line gap through FreeType exactly as Skia's FreeType
    /// scaler does, then rounds them as Blink does.
    private static func readVerticalMetrics(
        path: String, faceIndex: Int, size: Double, subpixelPositioning: Bool
    ) throws(TextMeasureError) -> FontVerticalMetrics {
        var library: FT_Library?
        guard FT_Init_FreeType(&library) == 0, let library else {
            throw TextMeasureError(code: .libraryFailure, message: "FreeType failed to initialise")
        }
        defer { FT_Done_FreeType(library) }
        var faceHandle: FT_Face?
        guard FT_New_Face(library, path, FT_Long(faceIndex), &faceHandle) == 0, let faceHandle else {
            throw TextMeasureError(
                code: .fontFileUnreadable,
                message: "cannot open font file '\(path)' (face \(faceIndex)): check the path, or pass a family name such as \"DejaVu Sans\"")
        }
        defer { FT_Done_Face(faceHandle) }
        let face = faceHandle.pointee
        let unitsPerEm = Float(face.units_per_EM == 0 ? 1000 : face.units_per_EM)

        var ascentPerEm = -Float(face.ascender) / unitsPerEm
        var descentPerEm = -Float(face.descender) / unitsPerEm
        var leadingPerEm = Float(Int(face.height) + Int(face.descender) - Int(face.ascender)) / unitsPerEm
        // FreeType itself always prefers hhea; Skia honours USE_TYPO_METRICS (fsSelection
        // bit 7) on top of it.
        let useTypoMetricsBit: UInt16 = 1 << 7
        if let table = FT_Get_Sfnt_Table(faceHandle, FT_SFNT_OS2) {
            let os2 = table.assumingMemoryBound(to: TT_OS2.self).pointee
            if os2.version != 0xFFFF && (os2.fsSelection & useTypoMetricsBit) != 0 {
                ascentPerEm = -Float(os2.sTypoAscender) / unitsPerEm
                descentPerEm = -Float(os2.sTypoDescender) / unitsPerEm
                leadingPerEm = Float(os2.sTypoLineGap) / unitsPerEm
            }
        }
        let textSize = Float(size)
        let skiaAscent = ascentPerEm * textSize  // negative: above the baseline
        let skiaDescent = descentPerEm * textSize
        let skiaLeading = leadingPerEm * textSize

        var ascent = (-skiaAscent).rounded(.toNearestOrAwayFromZero)
        var descent = skiaDescent.rounded(.toNearestOrAwayFromZero)
        if descent < skiaDescent && subpixelPositioning && ascent >= 1 {
            descent += 1
            ascent -= 1
        }
        let lineSpacing = Int(ascent.rounded(.toNearestOrAwayFromZero)) + Int(descent.rounded(.toNearestOrAwayFromZero))
            + Int(skiaLeading.rounded(.toNearestOrAwayFromZero))
        return FontVerticalMetrics(ascent: Int(ascent), descent: Int(descent), lineGap: skiaLeading, lineSpacing: lineSpacing)
    }
}
