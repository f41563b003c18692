import Synchronization

/// Measures how a text wraps in a box of a given width, as Chromium lays it out.
///
/// The box is assumed to have CSS `white-space: normal` (or `pre-line`, see
/// ``TextStyle/whiteSpace``), `overflow-wrap: break-word`, default kerning and ligatures,
/// and the measurer's ``TextStyle``. The pipeline is Chromium's on Linux: whitespace
/// collapsing; Blink's break opportunities (its own table between ASCII characters, ICU's
/// UAX #14 rules with `lb=normal` around anything else); HarfBuzz shaping at 16.16
/// precision, kerning across break opportunities and CJK punctuation collapsing
/// (`text-spacing-trim: normal`) included; font fallback through the style's ordered font list, as Blink walks a `font-family` list;
/// greedy line filling with hanging trailing spaces; and Blink's `LayoutUnit` (1/64 px)
/// fit test. On 2,400 generated cases in 18 kinds of text it gives
/// exactly Chromium's line count and height every time (`Tests/TextMeasureTests/Chromium/compare-chromium`).
///
/// A measurer is safe to share between concurrent tasks: its fonts are immutable, and its
/// caches (segment widths, fallback faces, ICU iterators) sit behind locks and are bounded.
public final class TextMeasurer: Sendable {
    /// The style this measurer was created with.
    public let style: TextStyle
    /// The font files it measures with, in the order a character looks for its glyph: the primary font first.
    public let fontFaces: [FontFace]
    let fonts: FontSet
    private let breakOpportunities = LineBreakOpportunities()
    private let segmentCache = Mutex(SegmentCache<SegmentMetrics>(limit: 16_384))
    /// Where truncated last lines were cut, by line content and available width.
    private let ellipsisCache = Mutex(BoundedCache<UTF16Key, EllipsisCut>(limit: 4_096))
    /// Whole texts' measurements (this measurer's own, or shared with others of a catalog), under ``serial``.
    private let measurements: MeasurementCache
    /// This measurer's entries in ``measurements``: a number no other measurer of the process has.
    private let serial: Int
    private static let serials = Atomic<Int>(0)
    /// What a measurer made without a shared cache keeps of whole measurements: a run's repeated titles and captions
    /// (its first ones; it does not evict).
    public static let ownMeasurementBytes = 4 << 20
    /// What a soft hyphen shows when a line breaks there: U+2010 when the font has it,
    /// else "-" (Blink's `HyphenString`).
    private let hyphen: String
    private let hyphenMetrics: ShapedMetrics
    private let ellipsis = "\u{2026}"
    private let ellipsisMetrics: ShapedMetrics
    /// The fixed line height in pixels, or nil for `line-height: normal`.
    let fixedLineHeight: Double?

    /// Loads the style's font.
    ///
    /// - Parameters:
    ///   - style: The font, size, weight and line height.
    ///   - measurements: Where whole measurements are kept (``TextMeasurerCatalog`` shares one between its
    ///     measurers); `nil` gives the measurer its own of ``ownMeasurementBytes``.
    /// - Throws: ``TextMeasureError`` when a font file (primary or fallback) cannot be read, a family is not
    ///   installed, or the size or line height is not a positive finite number.
    public init(style: TextStyle, measurements: MeasurementCache? = nil) throws(TextMeasureError) {
        guard style.size.isFinite, style.size > 0 else {
            throw TextMeasureError(
                code: .invalidStyle, message: "font size \(style.size) must be a positive number of pixels")
        }
        self.style = style
        self.measurements = measurements ?? MeasurementCache(byteLimit: Self.ownMeasurementBytes, evicts: false)
        serial = Self.serials.wrappingAdd(1, ordering: .relaxed).oldValue
        fontFaces = try style.resolvedFonts()
        let primary = try LoadedFont(
            path: fontFaces[0].path, faceIndex: fontFaces[0].faceIndex, size: style.size,
            subpixelPositioning: style.subpixelPositioning, indexingBasicPlane: true)
        fonts = FontSet(
            primary: primary, fallbacks: Array(fontFaces.dropFirst()), size: style.size,
            subpixelPositioning: style.subpixelPositioning)

        switch style.lineHeight {
        case .normal:
            fixedLineHeight = nil
        case .pixels(let pixels):
            guard pixels.isFinite, pixels > 0 else {
                throw TextMeasureError(
                    code: .invalidStyle, message: "line height \(pixels)px must be a positive number of pixels")
            }
            // ComputedLineHeightAsFixed: LayoutUnit::FromFloatRound.
            fixedLineHeight = (Double(Float(pixels)) * 64).rounded(.toNearestOrAwayFromZero) / 64
        case .multiple(let factor):
            guard factor.isFinite, factor > 0 else {
                throw TextMeasureError(
                    code: .invalidStyle, message: "line height multiple \(factor) must be a positive number")
            }
            // A unitless line-height is a percentage of the font size rounded to a
            // LayoutUnit; the product is computed in float and truncated to a LayoutUnit.
            let fontSizeFixed = (Double(Float(style.size)) * 64).rounded(.toNearestOrAwayFromZero) / 64
            let product = Float(fontSizeFixed) * Float(factor * 100) / 100
            fixedLineHeight = (Double(product) * 64).rounded(.towardZero) / 64
        }

        hyphen = primary.hasGlyph(for: 0x2010) ? "\u{2010}" : "-"
        hyphenMetrics = Self.shape(Array(hyphen.utf16), fonts: fonts)
        ellipsisMetrics = Self.shape(Array(ellipsis.utf16), fonts: fonts)
    }

    /// The height of one line in pixels: the fixed line height, or for `normal` the
    /// primary font's line spacing (lines that use taller fallback fonts can be taller).
    public var lineHeightInPixels: Double {
        fixedLineHeight ?? Double(fonts.primary.metrics.lineSpacing)
    }

    /// Measures a text at a width.
    ///
    /// - Parameters:
    ///   - text: The text; whitespace collapses as in CSS, control characters are dropped.
    ///   - width: The available width in CSS pixels.
    ///   - maxLines: At most this many lines; the last one then ends with "…". Nil or a
    ///     value below 1 means no limit.
    /// - Returns: Lines, height, widest line, whether it was truncated, and the line texts.
    ///
    /// A text measured before at the same width (in LayoutUnits) and line limit is answered from the measurer's
    /// ``MeasurementCache``: the same measurement, without shaping it again.
    public func measure(_ text: String, width: Double, maxLines: Int? = nil) -> TextMeasurement {
        measurements.measurement(
            measurer: serial, available: Self.layoutUnits(floorOf: max(0, width.isFinite ? width : 0)),
            lineLimit: maxLines.flatMap { $0 >= 1 ? $0 : nil } ?? 0, text: text
        ) {
            measure(text, width: width, maxLines: maxLines, firstWindow: nil)
        }
    }

    /// ``measure(_:width:maxLines:)`` with the first window of break opportunities chosen: `nil` for the usual one,
    /// 0 for the whole text (tests compare them, and small windows that must grow).
    func measure(_ text: String, width: Double, maxLines: Int?, firstWindow: Int?) -> TextMeasurement {
        let units = TextPreparation.collapse(text, preservingNewlines: style.whiteSpace == .preLine)
        guard !units.isEmpty else {
            return TextMeasurement(lines: 0, height: 0, width: 0, truncated: false, lineTexts: [])
        }
        let available = Self.layoutUnits(floorOf: max(0, width.isFinite ? width : 0))
        let lineLimit = maxLines.flatMap { $0 >= 1 ? $0 : nil }
        // A caption cut to a few lines shows only its start: find the break opportunities of a window of it wide
        // enough for those lines at 3 px a character, and widen the window when the lines reach its end.
        var windowEnd = lineLimit.map { ($0 + 1) * max(64, Self.unitsPerLineAtMost(available)) } ?? units.count
        if let firstWindow { windowEnd = firstWindow > 0 ? firstWindow : units.count }
        while true {
            let (segments, coversAll) = breakOpportunities.segments(of: units, atLeastUpTo: windowEnd)
            if let measurement = layOut(
                units, segments, available: available, lineLimit: lineLimit, complete: coversAll)
            {
                return measurement
            }
            windowEnd *= 2
        }
    }

    /// How many UTF-16 units a line of `available` LayoutUnits holds at most, for sizing what to look at ahead: a
    /// character is taken as 3 px wide (narrower ones only make the window grow once more).
    private static func unitsPerLineAtMost(_ available: Int) -> Int { available / 64 / 3 }

    /// Lays the text out in lines from its segments.
    ///
    /// - Parameter complete: Whether the segments cover the whole text; when not, the layout holds only if its
    ///   lines end before the last segment, and is nil otherwise.
    private func layOut(
        _ units: [UInt16], _ segments: [BreakSegment], available: Int, lineLimit: Int?, complete: Bool
    ) -> TextMeasurement? {
        var segments = segments
        var memo = SegmentMemo(count: segments.count)
        // Every line needs its segments from the shared cache: without a line limit all are looked up at once. A
        // limited caption needs only its first lines' segments: they are looked up a line's worth (at 3 px a
        // character) at a time, ahead of filling each line.
        let lookAhead = max(16, Self.unitsPerLineAtMost(available))
        return units.withUnsafeBufferPointer { buffer -> TextMeasurement? in
            var lookedUpEnd = 0
            if lineLimit == nil {
                lookUpCachedSegments(buffer, segments, segments.indices, into: &memo)
                lookedUpEnd = segments.count
            }
            // Only the last line is kept whole: truncation may still cut it.
            var spans: [LineSpan] = []
            var heightBeforeLast = 0.0
            var widestBeforeLast = 0.0
            var lastLine: LaidOutLine?
            var index = 0
            var truncated = false
            while index < segments.count {
                if let lineLimit, spans.count == lineLimit {
                    truncated = true
                    break
                }
                if lookedUpEnd < segments.count
                    && (lookedUpEnd <= index || segments[lookedUpEnd - 1].end < segments[index].start + lookAhead)
                {
                    var end = max(index, lookedUpEnd)
                    while end < segments.count && segments[end].start < segments[index].start + 2 * lookAhead {
                        end += 1
                    }
                    lookUpCachedSegments(buffer, segments, max(index, lookedUpEnd)..<end, into: &memo)
                    lookedUpEnd = end
                }
                let countBefore = segments.count
                let line = fillLine(buffer, segments: &segments, memo: &memo, from: index, available: available)
                // A segment too long for any line was split in two: the memo moved along.
                lookedUpEnd += segments.count - countBefore
                if let previous = lastLine {
                    heightBeforeLast += height(of: previous)
                    widestBeforeLast = max(widestBeforeLast, previous.width)
                }
                spans.append(line.span)
                lastLine = line
                index = line.lastSegment + 1
            }
            // The lines reached the window's end (no segment was left over for a line past the limit): more text
            // could have joined the last one.
            guard complete || truncated else { return nil }
            guard var last = lastLine else {
                return TextMeasurement(lines: 0, height: 0, width: 0, truncated: false, lineTexts: [])
            }
            if truncated {
                last = ellipsize(buffer, line: last, available: available)
                spans[spans.count - 1] = last.span
            }
            let widest = max(widestBeforeLast, last.width)
            return TextMeasurement(
                lines: spans.count, height: heightBeforeLast + height(of: last),
                width: Double(Self.layoutUnits(ceilingOf: widest)) / 64, truncated: truncated, content: units,
                lineSpans: spans)
        }
    }

    /// A line box's height: the fixed line height, or what the line's fonts ask for.
    private func height(of line: LaidOutLine) -> Double {
        fixedLineHeight ?? Double(line.lineBoxAbove + line.lineBoxBelow)
    }

    /// Measures UTF-8 bytes, replacing invalid sequences with U+FFFD first.
    ///
    /// - Parameters:
    ///   - utf8: The bytes, possibly not valid UTF-8.
    ///   - width: The available width in CSS pixels.
    ///   - maxLines: At most this many lines (see ``measure(_:width:maxLines:)``).
    /// - Returns: The measurement of the repaired text.
    public func measure(utf8 bytes: some Collection<UInt8>, width: Double, maxLines: Int? = nil) -> TextMeasurement {
        measure(String(decoding: bytes, as: UTF8.self), width: width, maxLines: maxLines)
    }

    // MARK: - Line filling

    private struct LaidOutLine {
        var lastSegment: Int
        var width: Double
        /// The line's visible text: a slice of the content and what is shown after it.
        var span: LineSpan
        var lineBoxAbove: Int
        var lineBoxBelow: Int
        var start: Int
        var contentEnd: Int
    }

    /// Segments longer than this many UTF-16 units are probed with a prefix first.
    private static let longSegmentProbe = 256

    /// Fills one line greedily, starting at `segments[first]`.
    ///
    /// The line ends at the last break opportunity whose content (plus a hyphen when the
    /// opportunity is a soft hyphen) passes Blink's fit test; spaces after it hang. When
    /// not even the first segment fits, the segment is split at grapheme boundaries
    /// (`overflow-wrap: break-word`) and the fitting part fills the line.
    private func fillLine(
        _ units: UnsafeBufferPointer<UInt16>, segments: inout [BreakSegment], memo: inout SegmentMemo, from first: Int,
        available: Int
    ) -> LaidOutLine {
        var penPosition = 0.0
        var chosen: (segment: Int, width: Double, hyphenated: Bool)?
        var current = first
        while current < segments.count {
            let segment = segments[current]
            // A very long word (a pasted URL, a run of CJK-free digits) is shaped a piece at
            // a time when it is wrapped; do not shape all of it only to learn it overflows.
            if segment.contentEnd - segment.start > Self.longSegmentProbe {
                var probeEnd = segment.start + Self.longSegmentProbe
                if UTF16.isLeadSurrogate(units[probeEnd - 1]) { probeEnd += 1 }
                if !Self.fits(penPosition + Self.shape(units, segment.start..<probeEnd, fonts: fonts).width, available)
                {
                    break
                }
            }
            // Only a line start after CJK punctuation measures differently from the same
            // segment mid-line (see `segmentMetrics`); anything else shares the memo.
            let startsLineAfterNarrowingPunctuation =
                current == first && segment.start > 0 && Self.narrowsFollowingPunctuation(units[segment.start - 1])
            let pieces =
                startsLineAfterNarrowingPunctuation
                ? segmentMetrics(units, segment, startsLine: true)
                : memo.metrics(at: current) { segmentMetrics(units, segment) }
            var contentEnd = penPosition + pieces.contentWidthAtLineEnd
            if !Self.fits(contentEnd, available) {
                // `text-spacing-trim: normal` allows the end: a fullwidth closing mark that
                // ends the line is set half-width when that makes the line fit.
                guard pieces.lineEndTrim > 0, Self.fits(contentEnd - pieces.lineEndTrim, available) else { break }
                contentEnd -= pieces.lineEndTrim
            }
            let endsWithSoftHyphen =
                segment.contentEnd > segment.start && units[segment.contentEnd - 1] == TextPreparation.softHyphen
                && !segment.forcedBreakAfter && current + 1 < segments.count
            let breakWidth = endsWithSoftHyphen ? contentEnd + hyphenMetrics.width : contentEnd
            if Self.fits(breakWidth, available) || current + 1 == segments.count || segment.forcedBreakAfter {
                chosen = (current, breakWidth, endsWithSoftHyphen)
            }
            if segment.forcedBreakAfter { break }
            penPosition += pieces.contentWidth + pieces.trailingWidth
            current += 1
        }

        if chosen == nil {
            let segment = segments[first]
            let isLong = segment.contentEnd - segment.start > Self.longSegmentProbe
            let content = isLong ? nil : memo.metrics(at: first) { segmentMetrics(units, segment) }
            if let content, Self.fits(content.contentWidthAtLineEnd, available) {
                // Only the hyphen of a soft-hyphen break overflows: take that break anyway,
                // a browser would rather overflow by a hyphen than split the syllable.
                chosen = (first, content.contentWidthAtLineEnd + hyphenMetrics.width, true)
            } else {
                let split = splitOverlongSegment(units, segment, available: available)
                // A single grapheme wider than the box is the whole segment: nothing is left
                // over to carry to the next line.
                if split.offset < segment.contentEnd {
                    memo.split(at: first)
                    segments[first] = BreakSegment(
                        start: segment.start, contentEnd: split.offset, end: split.offset, forcedBreakAfter: false)
                    segments.insert(
                        BreakSegment(
                            start: split.offset, contentEnd: segment.contentEnd, end: segment.end,
                            forcedBreakAfter: segment.forcedBreakAfter),
                        at: first + 1)
                }
                chosen = (first, split.width, false)
            }
        }
        let (last, lineWidth, hyphenated) = chosen!

        let primaryBox = fonts.primary.metrics.halfLeadingBox
        var above = primaryBox.above
        var below = primaryBox.below
        for index in first...last {
            let segment = segments[index]
            let piece = memo.metrics(at: index) { segmentMetrics(units, segment) }
            above = max(above, piece.lineBoxAbove)
            below = max(below, piece.lineBoxBelow)
        }
        // A line's segments are contiguous: its text is one slice.
        let span = LineSpan(range: segments[first].start..<segments[last].contentEnd, suffix: hyphenated ? hyphen : "")
        if hyphenated {
            above = max(above, hyphenMetrics.lineBoxAbove)
            below = max(below, hyphenMetrics.lineBoxBelow)
        }
        return LaidOutLine(
            lastSegment: last, width: lineWidth, span: span, lineBoxAbove: above, lineBoxBelow: below,
            start: segments[first].start, contentEnd: segments[last].contentEnd)
    }

    /// The longest run of whole grapheme clusters at the start of a segment that fits,
    /// and never less than one cluster, so every line makes progress.
    private func splitOverlongSegment(
        _ units: UnsafeBufferPointer<UInt16>, _ segment: BreakSegment, available: Int
    ) -> (offset: Int, width: Double) {
        // Look at a window of the word that doubles until it no longer fits, so a
        // 10,000-character URL costs work in proportion to one line, not to the URL.
        var windowLength = 64
        while true {
            var windowEnd = min(segment.contentEnd, segment.start + windowLength)
            if windowEnd < segment.contentEnd && UTF16.isLeadSurrogate(units[windowEnd - 1]) { windowEnd += 1 }
            let reachesEnd = windowEnd == segment.contentEnd
            if !reachesEnd && Self.fits(Self.shape(units, segment.start..<windowEnd, fonts: fonts).width, available) {
                windowLength *= 2
                continue
            }
            var boundaries = Self.graphemeBoundaries(units, segment.start..<windowEnd)
            // The window may end inside a cluster; only boundaries before it are real.
            if !reachesEnd && boundaries.count > 1 { boundaries.removeLast() }
            return longestFittingPrefix(units, from: segment.start, boundaries: boundaries, available: available)
        }
    }

    /// Binary search over grapheme boundaries (widths grow with the prefix); each probe
    /// reshapes the prefix, as Blink reshapes the text before a break that is not safe to
    /// break at. Returns at least the first cluster.
    private func longestFittingPrefix(
        _ units: UnsafeBufferPointer<UInt16>, from start: Int, boundaries: [Int], available: Int
    ) -> (offset: Int, width: Double) {
        var low = 1
        var high = boundaries.count - 1
        var best = (offset: boundaries[0], width: Self.shape(units, start..<boundaries[0], fonts: fonts).width)
        while low <= high {
            let middle = (low + high) / 2
            let width = Self.shape(units, start..<boundaries[middle], fonts: fonts).width
            if Self.fits(width, available) {
                best = (boundaries[middle], width)
                low = middle + 1
            } else {
                high = middle - 1
            }
        }
        return best
    }

    /// Cuts the last line so that "…" fits after it, at a grapheme boundary, as Blink's
    /// line truncation for `-webkit-line-clamp` does.
    private func ellipsize(_ units: UnsafeBufferPointer<UInt16>, line: LaidOutLine, available: Int) -> LaidOutLine {
        var result = line
        result.lineBoxAbove = max(result.lineBoxAbove, ellipsisMetrics.lineBoxAbove)
        result.lineBoxBelow = max(result.lineBoxBelow, ellipsisMetrics.lineBoxBelow)
        let contentRange = line.start..<line.contentEnd
        // Finding the cut reshapes the line several times; remember it per line and width.
        var keyUnits = Array(UnsafeBufferPointer(rebasing: units[contentRange]))
        keyUnits.append(UInt16(truncatingIfNeeded: available))
        keyUnits.append(UInt16(truncatingIfNeeded: available >> 16))
        let key = UTF16Key(keyUnits)
        let cut =
            ellipsisCache.withLock { $0[key] }
            ?? {
                let computed = ellipsisCut(units, contentRange, available: available)
                ellipsisCache.withLock { $0[key] = computed }
                return computed
            }()
        let keptEnd = line.start + cut.keptLength
        result.span = LineSpan(range: line.start..<keptEnd, suffix: ellipsis)
        result.width = cut.keptWidth + ellipsisMetrics.width
        return result
    }

    /// Where to cut a line's content so that "…" fits after it.
    private func ellipsisCut(
        _ units: UnsafeBufferPointer<UInt16>, _ contentRange: Range<Int>, available: Int
    ) -> EllipsisCut {
        let start = contentRange.lowerBound
        // Cuts at grapheme boundaries, hanging spaces dropped.
        let prefixEnds = Self.graphemeBoundaries(units, contentRange).map { boundary in
            var end = boundary
            while end > start, TextPreparation.hangsAtLineEnd(units[end - 1]) { end -= 1 }
            return end
        }
        // One shaping of the whole line gives its width and, summing the advances before each cut, every prefix's
        // width to within the kerning or ligature at the cut. The estimate finds the cut; shaping the prefixes
        // around it on their own (what the width of a kept prefix is) confirms or moves it, unless HarfBuzz says the
        // estimate is already exact there. Widths grow with the prefix, so this lands where a binary search over
        // exact shapings would, with at most about two of them instead of one per halving.
        let shaped = Shaper.measure(
            units, range: contentRange, boundaries: prefixEnds + [contentRange.upperBound],
            fontsUpTo: contentRange.upperBound, fonts: fonts, reportingExactPrefixes: true)
        let fullWidth = shaped.widths[prefixEnds.count]
        if Self.fits(fullWidth + ellipsisMetrics.width, available) {
            return EllipsisCut(keptLength: contentRange.count, keptWidth: fullWidth)
        }
        func exactCut(_ index: Int) -> EllipsisCut {
            // Where HarfBuzz says cutting there changes nothing, the line's own shaping is the prefix's.
            EllipsisCut(
                keptLength: prefixEnds[index] - start,
                keptWidth: shaped.exactPrefixes[index]
                    ? shaped.widths[index] : Self.shape(units, start..<prefixEnds[index], fonts: fonts).width)
        }
        func fitsWithEllipsis(_ cut: EllipsisCut) -> Bool {
            Self.fits(cut.keptWidth + ellipsisMetrics.width, available)
        }
        // Blink keeps at least one character on the line (`leave_one_character`), even when it and the ellipsis
        // overflow: index 0 is the floor.
        var index = 0
        while index + 1 < prefixEnds.count, Self.fits(shaped.widths[index + 1] + ellipsisMetrics.width, available) {
            index += 1
        }
        var cut = exactCut(index)
        while index > 0, !fitsWithEllipsis(cut) {
            index -= 1
            cut = exactCut(index)
        }
        while index + 1 < prefixEnds.count {
            let longer = exactCut(index + 1)
            guard fitsWithEllipsis(longer) else { break }
            index += 1
            cut = longer
        }
        return cut
    }

    // MARK: - Measuring pieces

    /// How much of a truncated line's content stays before the ellipsis.
    struct EllipsisCut: Sendable {
        /// UTF-16 units of the content kept.
        var keptLength: Int
        /// Their width in pixels.
        var keptWidth: Double
    }

    /// The metrics of this measurement's segments, looked up once each: the shared cache
    /// takes a lock per lookup, and a line asks for each segment more than once.
    struct SegmentMemo {
        private var entries: [SegmentMetrics?]

        init(count: Int) { entries = Array(repeating: nil, count: count) }

        /// Records metrics found in the shared cache.
        mutating func remember(_ metrics: SegmentMetrics, at index: Int) { entries[index] = metrics }

        mutating func metrics(at index: Int, compute: () -> SegmentMetrics) -> SegmentMetrics {
            if let known = entries[index] { return known }
            let computed = compute()
            entries[index] = computed
            return computed
        }

        /// A segment was cut in two: both halves need measuring afresh.
        mutating func split(at index: Int) {
            entries[index] = nil
            entries.insert(nil, at: index + 1)
        }
    }

    /// What a segment contributes to a line.
    struct SegmentMetrics: Sendable {
        /// The content's advance when the line goes on after it (pair kerning with what
        /// follows included, as in the paragraph's shaping).
        var contentWidth: Double
        /// The content's width when the line ends after it: Blink reshapes a line end
        /// that is not safe to break, so kerning across a break without a space is lost.
        var contentWidthAtLineEnd: Double
        /// How much narrower the content gets when its final fullwidth closing mark is set
        /// half-width at the end of a line that would not fit otherwise; 0 when it does not
        /// end with one.
        var lineEndTrim: Double
        /// The advance of the hanging spaces after the content.
        var trailingWidth: Double
        var lineBoxAbove: Int
        var lineBoxBelow: Int
    }

    /// Looks segments up in the shared cache under one lock: a lock per segment would cost
    /// more than the lookups, CJK text having a segment per character. Segments not found
    /// are measured later, when a line needs them.
    private func lookUpCachedSegments(
        _ units: UnsafeBufferPointer<UInt16>, _ segments: [BreakSegment], _ range: Range<Int>,
        into memo: inout SegmentMemo
    ) {
        guard !range.isEmpty else { return }
        withUnsafeTemporaryAllocation(of: SegmentKey.self, capacity: range.count) { keys in
            for index in range {
                keys.initializeElement(
                    at: index - range.lowerBound, to: Self.segmentKey(units, segments[index], startsLine: false))
            }
            segmentCache.withLock { cache in
                cache.values(of: UnsafeBufferPointer(keys), in: units) { index, known in
                    memo.remember(known, at: range.lowerBound + index)
                }
            }
        }
    }

    /// The cache key of a segment: its UTF-16 text plus the first code point after it,
    /// because pair kerning with that code point changes the segment's advance, and the
    /// character before it when that can narrow it (see ``segmentMetrics``).
    ///
    /// Where the content ends follows from the text itself; `head` and `tail` say how much
    /// of `range` is context, so "ab" before "c" and a final "abc" differ.
    private static func segmentKey(
        _ units: UnsafeBufferPointer<UInt16>, _ segment: BreakSegment, startsLine: Bool
    ) -> SegmentKey {
        var lookAheadEnd = segment.end
        if lookAheadEnd < units.count {
            lookAheadEnd += UTF16.isLeadSurrogate(units[lookAheadEnd]) && lookAheadEnd + 1 < units.count ? 2 : 1
        }
        // CJK punctuation after punctuation can be narrowed by the pair (`chws`), so such a
        // segment is shaped after its predecessor, unless it starts the line: Blink
        // reshapes a line start that is not safe to break, losing that context.
        var lookBehindStart = segment.start
        if !startsLine && segment.start > 0 && narrowsFollowingPunctuation(units[segment.start - 1]) {
            lookBehindStart -= 1
        }
        return SegmentKey(
            head: UInt16(segment.start - lookBehindStart), range: lookBehindStart..<lookAheadEnd,
            tail: UInt16(lookAheadEnd - segment.end))
    }

    /// The metrics of one segment, from the bounded cache when possible.
    private func segmentMetrics(
        _ units: UnsafeBufferPointer<UInt16>, _ segment: BreakSegment, startsLine: Bool = false
    ) -> SegmentMetrics {
        let key = Self.segmentKey(units, segment, startsLine: startsLine)
        let body = UnsafeBufferPointer(rebasing: units[key.range])
        if let cached = segmentCache.withLock({ $0.value(head: key.head, body: body, tail: key.tail) }) {
            return cached
        }
        let lookBehindStart = key.range.lowerBound
        let lookAheadEnd = key.range.upperBound
        // Shape outside the lock so concurrent measurements do not queue behind HarfBuzz.
        let shaped = Shaper.measure(
            units, range: lookBehindStart..<lookAheadEnd, countingFrom: segment.start,
            boundaries: [segment.contentEnd, segment.end], fontsUpTo: segment.end, fonts: fonts)
        var atLineEnd = shaped.widths[0]
        if segment.contentEnd == segment.end && lookAheadEnd > segment.end {
            atLineEnd =
                Shaper.measure(
                    units, range: lookBehindStart..<segment.contentEnd, countingFrom: segment.start,
                    boundaries: [segment.contentEnd], fontsUpTo: segment.contentEnd, fonts: fonts
                ).widths[0]
        }
        let metrics = SegmentMetrics(
            contentWidth: shaped.widths[0], contentWidthAtLineEnd: atLineEnd,
            lineEndTrim: lineEndTrim(units, segment),
            trailingWidth: shaped.widths[1] - shaped.widths[0],
            lineBoxAbove: shaped.lineBoxAbove, lineBoxBelow: shaped.lineBoxBelow)
        segmentCache.withLock { $0.insert(metrics, head: key.head, body: body, tail: key.tail) }
        return metrics
    }

    /// Half the advance of a segment's last character when it is a fullwidth closing
    /// bracket the font can set half-width, else 0. Measured in Chromium: "（笑）" ends a
    /// line with its ")" halved to fit, while "。" and "、" are never halved there.
    private func lineEndTrim(_ units: UnsafeBufferPointer<UInt16>, _ segment: BreakSegment) -> Double {
        guard segment.contentEnd > segment.start else { return 0 }
        var lastStart = segment.contentEnd - 1
        if UTF16.isTrailSurrogate(units[lastStart]) && lastStart > segment.start { lastStart -= 1 }
        let last = String(
            decoding: UnsafeBufferPointer(rebasing: units[lastStart..<segment.contentEnd]), as: UTF16.self)
        guard let scalar = last.unicodeScalars.first,
            fonts.face(for: last.unicodeScalars).hanKerning != nil,
            HanKerning.characterClass(of: scalar.value) == .close
        else { return 0 }
        return Self.shape(units, lastStart..<segment.contentEnd, fonts: fonts).width / 2
    }

    /// Full-width CJK punctuation and quotes: the characters after which `chws` may
    /// narrow the next punctuation mark.
    private static func narrowsFollowingPunctuation(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x2018...0x201F, 0x3000...0x303F, 0x30FB, 0xFE10...0xFE1F, 0xFE30...0xFE4F, 0xFF01...0xFF65: return true
        default: return false
        }
    }

    private static func shape(_ units: UnsafeBufferPointer<UInt16>, _ range: Range<Int>, fonts: FontSet)
        -> ShapedMetrics
    {
        Shaper.measure(units, range: range, fonts: fonts)
    }

    private static func shape(_ units: [UInt16], fonts: FontSet) -> ShapedMetrics {
        units.withUnsafeBufferPointer { Shaper.measure($0, range: 0..<$0.count, fonts: fonts) }
    }

    /// UTF-16 offsets of the grapheme-cluster boundaries after the start of a range,
    /// ending with the range's end.
    private static func graphemeBoundaries(_ units: UnsafeBufferPointer<UInt16>, _ range: Range<Int>) -> [Int] {
        let boundaries = GraphemeClusters.ends(units, range)
        return boundaries.isEmpty ? [range.upperBound] : boundaries
    }

    // MARK: - LayoutUnit arithmetic

    /// Blink's fit test: a line fits when its width, rounded up to a LayoutUnit, is at most
    /// the available width plus one LayoutUnit (`LineBreaker::AvailableWidthToFit` adds
    /// that epsilon against rounding errors). Measured in Chromium: "iiii" (15.5586 px in
    /// DejaVu Sans 14 px, 996/64 rounded up) fits boxes 995/64 px wide but not 994/64.
    private static func fits(_ width: Double, _ available: Int) -> Bool {
        layoutUnits(ceilingOf: width) <= available + 1
    }

    /// Pixels to LayoutUnits (1/64 px), rounding up; a hair of tolerance absorbs the float
    /// noise of summing 16.16 advances.
    static func layoutUnits(ceilingOf pixels: Double) -> Int {
        // `rounded(.up)` is a libm call on baseline x86-64; this runs for every segment.
        let scaled = pixels * 64 - 1e-6
        let truncated = Int(scaled)
        return Double(truncated) < scaled ? truncated + 1 : truncated
    }

    /// Pixels to LayoutUnits, truncating as `LayoutUnit(float)` does; a hair of tolerance
    /// absorbs the float noise of summing 16.16 advances.
    static func layoutUnits(floorOf pixels: Double) -> Int {
        Int((pixels * 64 + 1e-6).rounded(.down))
    }
}
