internal import CFreeType
internal import CHarfBuzz

/// The vertical metrics of one font at one size, rounded the way Blink rounds them.
///
/// Blink (`SimpleFontData::PlatformInit` with `FontMetrics::AscentDescentWithHacks`) takes
/// Skia's FreeType metrics: ascent, descent and line gap from the face's `hhea`-derived
/// values, or from the OS/2 typo values when the font sets USE_TYPO_METRICS, scaled to the
/// size in single precision. Ascent and descent are rounded to whole pixels (Blink's
/// Linux-only "borrow a pixel for a rounded-down descent" hack does not fire in Chromium's
/// Linux builds: its font render style reports no subpixel positioning). The line spacing
/// is the sum of the three rounded values.
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
    /// For bitmap-only faces (colour emoji), each glyph's advance in 16.16 pixels as the
    /// bitmap strike gives it, scaled to the size: Skia reports these, not `hmtx`, so they
    /// are what Chromium lays out with. Nil for outline fonts.
    let bitmapAdvances: [Int32]?
    /// How Chromium's punctuation trimming treats this font, or nil when it has no `halt`.
    let hanKerning: HanKerning.FontData?
    /// For a primary face, the BMP code points its cmap lists with a glyph, a bit each (8 KB): font choice asks
    /// the primary face about every character it shapes, and HarfBuzz's cmap lookup cost more than the bit. A
    /// clear bit still asks HarfBuzz (a lookup may map code points the listing leaves out). Fallback faces are
    /// asked only when a code point's fallback is first looked for: nil.
    private let basicPlaneCoverage: [UInt64]?

    /// Loads a face and scales it.
    ///
    /// - Parameters:
    ///   - path: The font file.
    ///   - faceIndex: The face inside the file.
    ///   - size: The font size in pixels.
    ///   - subpixelPositioning: Whether advances keep fractional pixels.
    /// - Throws: ``TextMeasureError/Code/fontFileUnreadable`` when the file is missing or
    ///   not a font.
    init(
        path: String, faceIndex: Int, size: Double, subpixelPositioning: Bool, indexingBasicPlane: Bool = false
    ) throws(TextMeasureError) {
        self.path = path
        self.faceIndex = faceIndex
        self.subpixelPositioning = subpixelPositioning
        let faceFacts = try Self.readFaceFacts(path: path, faceIndex: faceIndex, size: size)
        self.metrics = faceFacts.metrics
        self.bitmapAdvances = faceFacts.bitmapAdvances

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
        self.hanKerning = HanKerning.fontData(for: font)
        if indexingBasicPlane, let mapped = hb_set_create() {
            defer { hb_set_destroy(mapped) }
            // The code points the cmap lists, each confirmed by the lookup `hasGlyph` would make.
            hb_face_collect_unicodes(face, mapped)
            var coverage = [UInt64](repeating: 0, count: 0x1_0000 / 64)
            var codePoint = hb_codepoint_t.max  // HB_SET_VALUE_INVALID: start before the first
            var glyph: hb_codepoint_t = 0
            while hb_set_next(mapped, &codePoint) != 0, codePoint < 0x1_0000 {
                if hb_font_get_nominal_glyph(font, codePoint, &glyph) != 0 {
                    coverage[Int(codePoint) >> 6] |= 1 << UInt64(codePoint & 63)
                }
            }
            self.basicPlaneCoverage = coverage
        } else {
            self.basicPlaneCoverage = nil
        }
    }

    deinit {
        hb_font_destroy(harfBuzzFont)
    }

    /// Whether the font maps this code point to a glyph.
    func hasGlyph(for codePoint: UInt32) -> Bool {
        if codePoint < 0x1_0000, let coverage = basicPlaneCoverage,
            coverage[Int(codePoint) >> 6] & (1 << UInt64(codePoint & 63)) != 0
        {
            return true
        }
        var glyph: hb_codepoint_t = 0
        return hb_font_get_nominal_glyph(harfBuzzFont, codePoint, &glyph) != 0
    }

    /// Whether the font has a glyph for this code point followed by this variation
    /// selector (its cmap format 14 lists the sequence).
    func hasVariationGlyph(for codePoint: UInt32, selector: UInt32) -> Bool {
        var glyph: hb_codepoint_t = 0
        return hb_font_get_variation_glyph(harfBuzzFont, codePoint, selector, &glyph) != 0
    }

    /// The unshaped (`hmtx`) advance of a glyph in 16.16 pixels. The shaper swaps it for
    /// what Blink's font functions would give (`SkiaTextMetrics::GetGlyphWidthForHarfBuzz`):
    /// rounded without subpixel positioning, the strike's advance for bitmap faces.
    func nominalAdvance(ofGlyph glyph: UInt32) -> Int32 {
        hb_font_get_glyph_h_advance(harfBuzzFont, glyph)
    }

    /// Reads ascent, descent and line gap through FreeType as Skia's FreeType scaler does,
    /// then rounds them as Blink does; for bitmap-only faces (colour emoji) also every
    /// glyph's strike advance, which is what Skia reports and Chromium lays out with.
    private static func readFaceFacts(
        path: String, faceIndex: Int, size: Double
    ) throws(TextMeasureError) -> (metrics: FontVerticalMetrics, bitmapAdvances: [Int32]?) {
        let library = try FreeTypeLibrary()
        let faceHandle = try library.openFace(path: path, faceIndex: faceIndex)
        // The face goes first; the library must outlive it.
        defer { _ = withExtendedLifetime(library) { FT_Done_Face(faceHandle) } }
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
        var bitmapAdvances: [Int32]?
        let isScalable = (face.face_flags & FT_Long(FT_FACE_FLAG_SCALABLE)) != 0
        if !isScalable, face.num_fixed_sizes > 0 {
            // A bitmap-only face (colour emoji): Chromium lays its glyphs out with the
            // bitmap strike's advances scaled to the size, but its line metrics come from
            // the hhea table over head's units per em (FreeType reports no outline metrics
            // for such faces). Both measured: ten U+1F389 at 20 px are 249.546875 px wide
            // (136 px at 109 ppem), and line heights over 10-30 px in quarter pixels only
            // match with hhea.
            if let strike = FreeTypeLibrary.selectStrike(of: faceHandle, atLeast: Int(FT_Pos(size * 64))) {
                bitmapAdvances = Self.strikeAdvances(faceHandle, ppem: Double(strike) / 64, size: size)
            }
            if let hheaTable = FT_Get_Sfnt_Table(faceHandle, FT_SFNT_HHEA),
                let headTable = FT_Get_Sfnt_Table(faceHandle, FT_SFNT_HEAD)
            {
                let hhea = hheaTable.assumingMemoryBound(to: TT_HoriHeader.self).pointee
                let designUnitsPerEm = Float(headTable.assumingMemoryBound(to: TT_Header.self).pointee.Units_Per_EM)
                if designUnitsPerEm > 0 {
                    ascentPerEm = -Float(hhea.Ascender) / designUnitsPerEm
                    descentPerEm = -Float(hhea.Descender) / designUnitsPerEm
                    leadingPerEm = Float(hhea.Line_Gap) / designUnitsPerEm
                }
            }
        }
        let textSize = Float(size)
        let skiaAscent = ascentPerEm * textSize  // negative: above the baseline
        let skiaDescent = descentPerEm * textSize
        let skiaLeading = leadingPerEm * textSize

        // Blink would move a pixel from the ascent to a rounded-down descent when the font's
        // render style asks for subpixel positioning (AscentDescentWithHacks); Chromium on
        // Linux never does here: mixed-font line heights over 10-30 px only match without.
        let ascent = (-skiaAscent).rounded(.toNearestOrAwayFromZero)
        let descent = skiaDescent.rounded(.toNearestOrAwayFromZero)
        let lineSpacing =
            Int(ascent.rounded(.toNearestOrAwayFromZero)) + Int(descent.rounded(.toNearestOrAwayFromZero))
            + Int(skiaLeading.rounded(.toNearestOrAwayFromZero))
        let metrics = FontVerticalMetrics(
            ascent: Int(ascent), descent: Int(descent), lineGap: skiaLeading, lineSpacing: lineSpacing)
        return (metrics, bitmapAdvances)
    }

    /// Every glyph's advance in the selected bitmap strike, scaled to `size`, in 16.16
    /// pixels. Only metrics are loaded, never the bitmaps, so this stays cheap.
    private static func strikeAdvances(_ face: FT_Face, ppem: Double, size: Double) -> [Int32] {
        let glyphCount = Int(face.pointee.num_glyphs)
        var advances = [Int32](repeating: 0, count: max(glyphCount, 0))
        let flags = FT_Int32(FT_LOAD_COLOR) | FT_Int32(FT_LOAD_BITMAP_METRICS_ONLY)
        for glyph in 0..<glyphCount {
            guard FT_Load_Glyph(face, FT_UInt(glyph), flags) == 0, let slot = face.pointee.glyph else { continue }
            let strikeAdvance = Double(slot.pointee.advance.x) / 64
            advances[glyph] = Int32(clamping: Int64(strikeAdvance / ppem * size * 65536))
        }
        return advances
    }
}
