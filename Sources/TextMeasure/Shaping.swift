internal import CFeedLayoutShims
internal import CHarfBuzz
import Synchronization

/// What one piece of text measures when shaped on its own.
struct ShapedMetrics: Sendable {
    /// The advance width in pixels (sum of the HarfBuzz advances, 16.16 converted exactly).
    var width: Double
    /// The tallest half-leading box among the fonts the piece uses (see
    /// ``FontVerticalMetrics/halfLeadingBox``); only consulted for `line-height: normal`.
    /// Pixels above the baseline.
    var lineBoxAbove: Int
    /// Pixels below the baseline.
    var lineBoxBelow: Int
}

/// The fonts one measurer shapes with: the primary face and the style's fallback faces, in order. A grapheme
/// cluster is shaped with the first of them that has it, as Blink walks a CSS `font-family` list; fallback faces
/// are loaded when a character first needs them. All mutable state sits behind one lock.
final class FontSet: Sendable {
    let primary: LoadedFont
    /// The fallback faces in the style's order (the primary face left out).
    private let fallbacks: [FontFace]
    private let size: Double
    private let subpixelPositioning: Bool

    private struct FallbackState {
        /// Each fallback face once loaded; nil until a character needs it.
        var loaded: [LoadedFont?]
        /// Faces that failed to load (a file removed since the run began): they cover nothing.
        var failed: Set<Int> = []
        /// The first fallback with a glyph for a code point (the high bit marks a request for its emoji variation
        /// sequence); -1 when none has it. Consulted before asking the faces one by one.
        var firstWithGlyph: [UInt32: Int] = [:]
    }
    /// Bounds the per-code-point cache; a feed in many scripts could otherwise grow it to every code point seen.
    private static let codePointCacheLimit = 8192
    private let fallbackState: Mutex<FallbackState>

    init(primary: LoadedFont, fallbacks: [FontFace], size: Double, subpixelPositioning: Bool) {
        self.primary = primary
        self.fallbacks = fallbacks
        self.size = size
        self.subpixelPositioning = subpixelPositioning
        fallbackState = Mutex(FallbackState(loaded: Array(repeating: nil, count: fallbacks.count)))
    }

    /// The face to shape a grapheme cluster with.
    ///
    /// The primary face when it has every visible character of the cluster; otherwise the first fallback face that
    /// does. A cluster that asks for emoji presentation with U+FE0F needs a face that lists the variation sequence
    /// (Blink's variation-selector-aware font choice). When no face has it, the primary face, which then shows its
    /// .notdef glyph.
    func face<Cluster: Collection<Unicode.Scalar>>(for cluster: Cluster) -> LoadedFont {
        // One pass and no allocation: every line's shaping asks this once per cluster, and the
        // ellipsis search shapes a line several times.
        var firstVisible: Unicode.Scalar?
        var primaryHasVisible = true
        var asksForEmojiVariation = false
        var visibleCount = 0
        for scalar in cluster {
            if scalar.value == 0xFE0F { asksForEmojiVariation = true }
            if Self.isDefaultIgnorable(scalar.value) { continue }
            if firstVisible == nil { firstVisible = scalar }
            visibleCount += 1
            if primaryHasVisible && !primary.hasGlyph(for: scalar.value) { primaryHasVisible = false }
        }
        guard let first = firstVisible else { return primary }
        if primaryHasVisible
            && (!asksForEmojiVariation || primary.hasVariationGlyph(for: first.value, selector: 0xFE0F))
        {
            return primary
        }
        return fallbackFace(for: cluster, first: first.value, visibleCount: visibleCount, variation: asksForEmojiVariation)
            ?? primary
    }

    private func fallbackFace<Cluster: Collection<Unicode.Scalar>>(
        for cluster: Cluster, first: UInt32, visibleCount: Int, variation: Bool
    ) -> LoadedFont? {
        // Whether a face has the cluster's first character (as the variation sequence, when it asks for one).
        func hasFirst(_ face: LoadedFont) -> Bool {
            variation ? face.hasVariationGlyph(for: first, selector: 0xFE0F) : face.hasGlyph(for: first)
        }
        return fallbackState.withLock { state -> LoadedFont? in
            let key = first | (variation ? 0x8000_0000 : 0)
            let start: Int
            if let known = state.firstWithGlyph[key] {
                start = known
            } else {
                start = fallbacks.indices.first { load($0, &state).map(hasFirst) ?? false } ?? -1
                if state.firstWithGlyph.count >= Self.codePointCacheLimit {
                    state.firstWithGlyph.removeAll(keepingCapacity: true)
                }
                state.firstWithGlyph[key] = start
            }
            guard start >= 0 else { return nil }
            for index in start..<fallbacks.count {
                guard let face = load(index, &state), hasFirst(face) else { continue }
                // The first character decided where to start looking; a cluster of several needs them all.
                if visibleCount == 1
                    || cluster.allSatisfy({ Self.isDefaultIgnorable($0.value) || face.hasGlyph(for: $0.value) })
                {
                    return face
                }
            }
            return nil
        }
    }

    private func load(_ index: Int, _ state: inout FallbackState) -> LoadedFont? {
        if let face = state.loaded[index] { return face }
        guard !state.failed.contains(index) else { return nil }
        let font = fallbacks[index]
        guard
            let face = try? LoadedFont(
                path: font.path, faceIndex: font.faceIndex, size: size, subpixelPositioning: subpixelPositioning)
        else {
            state.failed.insert(index)
            return nil
        }
        state.loaded[index] = face
        return face
    }

    /// Code points HarfBuzz renders invisibly with no advance (default ignorables); they
    /// must not force a fallback font.
    static func isDefaultIgnorable(_ value: UInt32) -> Bool {
        switch value {
        case 0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B...0x180F, 0x200B...0x200F, 0x202A...0x202E,
            0x2060...0x206F, 0x3164, 0xFE00...0xFE0F, 0xFEFF, 0xFFA0, 0xFFF0...0xFFF8, 0x1BCA0...0x1BCA3,
            0x1D173...0x1D17A, 0xE0000...0xE0FFF:
            return true
        default:
            return false
        }
    }
}

/// Shapes text with HarfBuzz, one font run at a time.
enum Shaper {
    /// The OpenType `chws` feature (contextual half-width spacing) over the whole buffer.
    static let contextualHalfWidthSpacing = hb_feature_t(
        tag: (UInt32(UInt8(ascii: "c")) << 24) | (UInt32(UInt8(ascii: "h")) << 16) | (UInt32(UInt8(ascii: "w")) << 8)
            | UInt32(UInt8(ascii: "s")),
        value: 1, start: 0, end: UInt32.max)

    /// Shapes `units[range]` and sums its advances.
    ///
    /// - Parameters:
    ///   - units: The text content.
    ///   - range: The UTF-16 range to shape.
    ///   - fonts: The primary and fallback faces.
    /// - Returns: The width and the line-box extent of the faces used.
    static func measure(_ units: UnsafeBufferPointer<UInt16>, range: Range<Int>, fonts: FontSet) -> ShapedMetrics {
        let piece = measure(
            units, range: range, boundaries: [range.upperBound], fontsUpTo: range.upperBound, fonts: fonts)
        return ShapedMetrics(width: piece.widths[0], lineBoxAbove: piece.lineBoxAbove, lineBoxBelow: piece.lineBoxBelow)
    }

    /// Shapes `units[range]` and reports the advance of everything before each boundary.
    ///
    /// The range is split into runs of grapheme clusters that use the same face (so marks
    /// stay with their base); each run is shaped with the whole range as context. Pair
    /// kerning lands on the first glyph of a pair, so shaping a little past the piece of
    /// interest and summing the glyphs before a boundary gives that piece's width as the
    /// whole paragraph's shaping would, which is what Blink measures lines with. Without
    /// subpixel positioning each glyph's nominal advance is rounded to a whole pixel while
    /// kerning and other GPOS adjustments keep their fractions, as Blink's HarfBuzz font
    /// functions produce.
    ///
    /// - Parameters:
    ///   - units: The text content.
    ///   - range: The UTF-16 range to shape.
    ///   - countStart: Glyphs of clusters before this offset shape look-behind context
    ///     only and count towards nothing (defaults to the start of `range`).
    ///   - boundaries: Offsets in `range`; for each, the advance of the glyphs whose
    ///     cluster starts before it.
    ///   - fontsUpTo: Faces of runs starting at or after this offset do not count
    ///     towards the line box (they shape look-ahead context only).
    ///   - fonts: The primary and fallback faces.
    ///   - reportingExactPrefixes: Also say, per boundary, whether the width before it is exactly what shaping
    ///     `range.lowerBound..<boundary` on its own gives; otherwise `exactPrefixes` is empty.
    static func measure(
        _ units: UnsafeBufferPointer<UInt16>, range: Range<Int>, countingFrom countStart: Int? = nil, boundaries: [Int],
        fontsUpTo: Int, fonts: FontSet, reportingExactPrefixes: Bool = false
    ) -> (widths: [Double], lineBoxAbove: Int, lineBoxBelow: Int, exactPrefixes: [Bool]) {
        let countStart = countStart ?? range.lowerBound
        let primaryBox = fonts.primary.metrics.halfLeadingBox
        var above = primaryBox.above
        var below = primaryBox.below
        // Only the ellipsis search asks; segment measurement, the hot path, allocates nothing for it.
        var exactPrefixes = reportingExactPrefixes ? [Bool](repeating: false, count: boundaries.count) : []
        guard !range.isEmpty, let base = units.baseAddress else {
            return ([Double](repeating: 0, count: boundaries.count), above, below, exactPrefixes)
        }
        let runs = fontRuns(units, range, fonts: fonts)
        guard let buffer = hb_buffer_create() else {
            return ([Double](repeating: 0, count: boundaries.count), above, below, exactPrefixes)
        }
        defer { hb_buffer_destroy(buffer) }
        // The advance of the glyphs of each cluster, by the cluster's offset from `range.lowerBound`; a boundary's
        // width is then a prefix sum (16.16 integers, so the order of the additions changes nothing).
        var advanceAt = [Int64](repeating: 0, count: range.count)
        // Whether each cluster start may be cut without reshaping (see `exactPrefixes` below): 0 no glyph starts
        // there, 1 every glyph there is safe to break, 2 one is not.
        let tracksCuts = reportingExactPrefixes && runs.count == 1
        var cutState = [UInt8](repeating: 0, count: tracksCuts ? range.count : 0)
        for run in runs {
            hb_buffer_clear_contents(buffer)
            hb_buffer_add_utf16(
                buffer, base + range.lowerBound, Int32(range.count),
                UInt32(run.range.lowerBound - range.lowerBound), Int32(run.range.count))
            hb_buffer_guess_segment_properties(buffer)
            // Chromium's default `text-spacing-trim: normal` collapses the space between
            // adjacent CJK punctuation: through the font's `chws` feature when it has one,
            // else by setting single marks half-width with `halt`, as Blink's HanKerning.
            if let hanKerning = run.face.hanKerning {
                let features =
                    [Self.contextualHalfWidthSpacing]
                    + HanKerning.features(
                        for: UnsafeBufferPointer(rebasing: units[range]),
                        runRange: (run.range.lowerBound - range.lowerBound)..<(run.range.upperBound - range.lowerBound),
                        data: hanKerning)
                hb_shape(run.face.harfBuzzFont, buffer, features, UInt32(features.count))
            } else {
                withUnsafePointer(to: Self.contextualHalfWidthSpacing) {
                    hb_shape(run.face.harfBuzzFont, buffer, $0, 1)
                }
            }
            var glyphCount: UInt32 = 0
            guard let positions = hb_buffer_get_glyph_positions(buffer, &glyphCount),
                let infos = hb_buffer_get_glyph_infos(buffer, &glyphCount)
            else { continue }
            let face = run.face
            for index in 0..<Int(glyphCount) {
                let advance = Self.advance(of: infos[index].codepoint, shaped: positions[index].x_advance, face: face)
                // Clusters are offsets into the text handed to HarfBuzz, which starts at range.lowerBound.
                let cluster = Int(infos[index].cluster)
                if tracksCuts {
                    let unsafe = infos[index].mask & UInt32(HB_GLYPH_FLAG_UNSAFE_TO_BREAK.rawValue) != 0
                    cutState[cluster] = max(cutState[cluster], unsafe ? 2 : 1)
                }
                guard cluster + range.lowerBound >= countStart else { continue }
                advanceAt[cluster] += advance
            }
            if run.face !== fonts.primary && run.range.lowerBound < fontsUpTo && run.range.upperBound > countStart {
                let box = run.face.metrics.halfLeadingBox
                above = max(above, box.above)
                below = max(below, box.below)
            }
        }
        // sumBefore[k]: the advance of every glyph whose cluster starts before range.lowerBound + k.
        var sumBefore = [Int64](repeating: 0, count: range.count + 1)
        for offset in 0..<range.count { sumBefore[offset + 1] = sumBefore[offset] + advanceAt[offset] }
        let widths = boundaries.map { boundary in
            Double(sumBefore[min(max(boundary - range.lowerBound, 0), range.count)]) / 65536
        }
        if reportingExactPrefixes {
            // A prefix shaped on its own gives the same glyphs as the whole range up to a boundary when HarfBuzz
            // marks no glyph of the cluster starting there unsafe to break, the range is one font run, the prefix
            // holds the range's first character of a real script (so HarfBuzz guesses the same script and
            // direction for both), and Han kerning gives the prefix the same features: they depend on the
            // neighbours, which HarfBuzz cannot see, and only the prefix's last mark can lose its trailing half
            // to what follows it. The whole range is its own prefix.
            let firstScriptedOffset = tracksCuts ? Self.firstScriptedCharacter(units, range) : nil
            let hanKerning = tracksCuts ? runs[0].face.hanKerning : nil
            for (index, boundary) in boundaries.enumerated() {
                if boundary == range.upperBound {
                    exactPrefixes[index] = true
                } else if tracksCuts, range.contains(boundary), cutState[boundary - range.lowerBound] == 1,
                    firstScriptedOffset.map({ boundary > $0 }) ?? true,
                    hanKerning.map({ !HanKerning.trimsLast(before: boundary, in: units, range: range, data: $0) })
                        ?? true
                {
                    exactPrefixes[index] = true
                }
            }
        }
        return (widths, above, below, exactPrefixes)
    }

    /// A glyph's advance as Blink measures and draws it, in 16.16 pixels: HarfBuzz's (`shaped`), with a bitmap
    /// strike's own advance in place of the outline's, and without subpixel positioning the nominal advance rounded
    /// to a whole pixel while kerning and other GPOS adjustments keep their fractions. Measuring and drawing both
    /// take advances from here, so a drawn line is exactly as wide as the measured one.
    @inline(__always)
    static func advance(of glyph: UInt32, shaped: Int32, face: LoadedFont) -> Int64 {
        var advance = Int64(shaped)
        if let strike = face.bitmapAdvances, Int(glyph) < strike.count {
            // Keep HarfBuzz's adjustments, swap its hmtx advance for the strike's.
            advance += Int64(strike[Int(glyph)]) - Int64(face.nominalAdvance(ofGlyph: glyph))
        }
        if !face.subpixelPositioning {
            let nominal = Int64(face.nominalAdvance(ofGlyph: glyph))
            let rounded = ((nominal + 0x8000) >> 16) << 16
            advance += rounded - nominal
        }
        return advance
    }

    /// The face of one grapheme cluster, `units[start..<end]`: the primary font, or the first fallback that has
    /// it. Measuring (``fontRuns(_:_:fonts:)``) and drawing (`TextMeasurer.glyphLines`) both split text into
    /// clusters with ``GraphemeClusters`` and ask here, so they use the same faces.
    @inline(__always)
    static func face(
        ofCluster units: UnsafeBufferPointer<UInt16>, _ start: Int, _ end: Int, fonts: FontSet
    ) -> LoadedFont {
        if end == start + 1, let scalar = Unicode.Scalar(units[start]) {
            return fonts.face(for: CollectionOfOne(scalar))
        }
        return fonts.face(
            for: String(decoding: UnsafeBufferPointer(rebasing: units[start..<end]), as: UTF16.self).unicodeScalars)
    }

    /// Splits `units[range]` into runs of grapheme clusters that use the same face.
    private static func fontRuns(
        _ units: UnsafeBufferPointer<UInt16>, _ range: Range<Int>, fonts: FontSet
    ) -> [(face: LoadedFont, range: Range<Int>)] {
        var runs: [(face: LoadedFont, range: Range<Int>)] = []
        var start = range.lowerBound
        for end in GraphemeClusters.ends(units, range) {
            let face = face(ofCluster: units, start, end, fonts: fonts)
            if let last = runs.last, last.face === face {
                runs[runs.count - 1].range = last.range.lowerBound..<end
            } else {
                runs.append((face, start..<end))
            }
            start = end
        }
        return runs
    }

    /// The offset of the first character in `units[range]` whose script is neither Common, Inherited nor
    /// Unknown: the one `hb_buffer_guess_segment_properties` takes the script from.
    private static func firstScriptedCharacter(_ units: UnsafeBufferPointer<UInt16>, _ range: Range<Int>) -> Int? {
        let functions = hb_unicode_funcs_get_default()
        var found: Int?
        TextPreparation.forEachScalar(in: UnsafeBufferPointer(rebasing: units[range])) { offset, value in
            let script = hb_unicode_script(functions, value)
            guard script == HB_SCRIPT_COMMON || script == HB_SCRIPT_INHERITED || script == HB_SCRIPT_UNKNOWN else {
                found = range.lowerBound + offset
                return false
            }
            return true
        }
        return found
    }
}
