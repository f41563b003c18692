internal import CFeedLayoutShims
import Synchronization

/// An ICU break iterator owned by Swift; closed when the last reference goes.
final class BreakIteratorHandle: @unchecked Sendable {
    // Only ever used by one thread at a time: it lives in a pool and is checked out.
    let iterator: OpaquePointer

    init(iterator: OpaquePointer) { self.iterator = iterator }
    deinit { fl_icu_break_close(iterator) }
}

/// A span of text between two line-break opportunities.
struct BreakSegment: Sendable, Equatable {
    /// Where the segment starts (UTF-16 offset into the text content).
    var start: Int
    /// Where its content ends: hanging spaces and forced breaks after it take no width.
    var contentEnd: Int
    /// Where the next segment starts.
    var end: Int
    /// Whether a line must end after this segment (a newline kept by `pre-line`).
    var forcedBreakAfter: Bool
}

/// Finds line-break opportunities with ICU's UAX #14 line iterator, as Blink's
/// `LazyLineBreakIterator` does for `line-break: auto; word-break: normal`.
///
/// Opening an ICU break iterator loads its rules and costs far more than using one, so
/// iterators are pooled: each call checks one out, uses it, and puts it back.
final class LineBreakOpportunities: Sendable {
    private let pool = Mutex<[BreakIteratorHandle]>([])
    private static let poolLimit = 16

    /// Splits text content into segments that end at break opportunities.
    ///
    /// Blink does not use ICU alone (`LazyLineBreakIterator::NextBreakablePosition` for
    /// `word-break: normal`): a line may break after every breakable space and never
    /// before one; between two printable ASCII characters its own table decides (break
    /// before an opening bracket after some punctuation, after "-" and "?", no break after
    /// "/" or "."); ICU's UAX #14 boundaries decide only when a non-ASCII character (other
    /// than a no-break space) is on either side.
    ///
    /// ICU's answers come from ``PairLineBreaking`` where two neighbours decide them, and
    /// from ICU's iterator, run once over the whole text, everywhere else.
    ///
    /// - Parameters:
    ///   - units: The text content (already whitespace-collapsed).
    ///   - consultingICUEverywhere: Ask ICU's iterator at every position it decides, never
    ///     the pair table (tests compare the two).
    /// - Returns: The segments in order, covering the whole text.
    func segments(of units: [UInt16], consultingICUEverywhere: Bool = false) -> [BreakSegment] {
        guard !units.isEmpty else { return [] }
        // ICU (or the pair table standing in for it) is only consulted next to non-ASCII
        // text; plain ASCII never pays for it, nor for loading the tables.
        guard units.contains(where: Self.needsUnicodeRules) else {
            return units.withUnsafeBufferPointer { buffer in
                segments(of: units, buffer, classes: nil, decisions: nil, consultingICUEverywhere: true)
            }
        }
        return PairLineBreaking.classes.withUnsafeBufferPointer { classes in
            PairLineBreaking.decisions.withUnsafeBufferPointer { decisions in
                units.withUnsafeBufferPointer { buffer in
                    segments(
                        of: units, buffer, classes: classes, decisions: decisions,
                        consultingICUEverywhere: consultingICUEverywhere)
                }
            }
        }
    }

    /// The segments of the text's start, up to the first break after a breakable space at or after
    /// `minimumEnd`, or of the whole text when no such break comes.
    ///
    /// They are the whole text's first segments: a line may always break after a breakable space, and whether it
    /// may break anywhere else depends on the characters of that run between spaces alone (UAX #14's rules that
    /// reach across spaces decide positions next to one, which Blink decides itself), so what follows the window
    /// changes nothing in it. `LineBreakWindowTests` compares the two over generated text.
    ///
    /// - Returns: The segments, and whether they cover the whole text.
    func segments(
        of units: [UInt16], atLeastUpTo minimumEnd: Int, consultingICUEverywhere: Bool = false
    ) -> (segments: [BreakSegment], coversAll: Bool) {
        var end = max(1, minimumEnd)
        while end < units.count && !Self.isBreakableSpace(units[end - 1]) { end += 1 }
        guard end < units.count else {
            return (segments(of: units, consultingICUEverywhere: consultingICUEverywhere), true)
        }
        var window = segments(of: Array(units[..<end]), consultingICUEverywhere: consultingICUEverywhere)
        // In the whole text the window's end is a break like any other: forced after a kept newline.
        window[window.count - 1].forcedBreakAfter = units[end - 1] == TextPreparation.newline
        return (window, false)
    }

    /// The work of ``segments(of:consultingICUEverywhere:)``; `classes` and `decisions`
    /// are ``PairLineBreaking``'s tables, nil when the pair table is not to be used.
    private func segments(
        of units: [UInt16], _ buffer: UnsafeBufferPointer<UInt16>,
        classes: UnsafeBufferPointer<PairLineBreaking.PairClass>?,
        decisions: UnsafeBufferPointer<PairLineBreaking.Decision>?, consultingICUEverywhere: Bool
    ) -> [BreakSegment] {
        let classCount = PairLineBreaking.PairClass.allCases.count
        let asciiRules = AsciiLineBreaking.rules
        // The pair table stands in for ICU unless a character needs rules that look further.
        var pairTableApplies = !consultingICUEverywhere
        // Whether the text holds code points beyond the BMP (surrogate pairs), which the pair table looks up apart.
        var hasSurrogatePairs = false
        if pairTableApplies, let classes {
            for unit in buffer where classes[Int(unit)] == .unsupported {
                guard UTF16.isLeadSurrogate(unit) || UTF16.isTrailSurrogate(unit) else {
                    pairTableApplies = false
                    break
                }
                hasSurrogatePairs = true
            }
            if hasSurrogatePairs && pairTableApplies {
                pairTableApplies = Self.pairTableCoversSurrogates(buffer)
            }
        }
        var icuBoundaries: [Bool]?
        var segments: [BreakSegment] = []
        // CJK text has a segment per character; growing the array by doubling cost more.
        segments.reserveCapacity(units.count)
        var start = 0
        for position in 1..<units.count {
            let previous = buffer[position - 1]
            let current = buffer[position]
            let breaks: Bool
            if Self.isAsciiAlphanumeric(previous) && Self.isAsciiAlphanumeric(current) {
                // Inside a Latin word, the commonest pair: every rule below says no.
                breaks = false
            } else if Self.isBreakableSpace(previous) {
                breaks = true
            } else if Self.isBreakableSpace(current) {
                breaks = false
            } else if let asciiRule = asciiRules.breaksBetween(
                beforePrevious: position > 1 ? buffer[position - 2] : 0, previous: previous, next: current)
            {
                breaks = asciiRule
            } else if Self.needsUnicodeRules(previous) || Self.needsUnicodeRules(current) {
                var decision = PairLineBreaking.Decision.needsContext
                if pairTableApplies, let classes, let decisions {
                    if hasSurrogatePairs && UTF16.isTrailSurrogate(current) {
                        // Surrogates here are whole pairs (a lone one made the pair table step aside): no break
                        // inside one.
                        decision = .keeps
                    } else {
                        // A pair's class is its code point's (asked only of texts that hold one).
                        let previousClass =
                            hasSurrogatePairs && UTF16.isTrailSurrogate(previous)
                            ? PairLineBreaking.supplementaryClass(lead: buffer[position - 2], trail: previous)
                            : classes[Int(previous)]
                        let currentClass =
                            hasSurrogatePairs && UTF16.isLeadSurrogate(current)
                            ? PairLineBreaking.supplementaryClass(lead: current, trail: buffer[position + 1])
                            : classes[Int(current)]
                        decision = decisions[Int(previousClass.rawValue) * classCount + Int(currentClass.rawValue)]
                    }
                }
                let icuBreaks: Bool
                switch decision {
                case .breaks:
                    icuBreaks = true
                case .keeps:
                    icuBreaks = false
                case .needsContext:
                    if icuBoundaries == nil { icuBoundaries = unicodeBoundaries(of: units) }
                    icuBreaks = position < icuBoundaries!.count && icuBoundaries![position]
                }
                // Only quotation marks can break by LB19a.
                let nextToQuote = (0x2018...0x201F).contains(previous) || (0x2018...0x201F).contains(current)
                breaks = icuBreaks || (nextToQuote && Self.breaksAroundEastAsianQuote(units, at: position))
            } else {
                breaks = false
            }
            if breaks {
                segments.append(
                    Self.segment(buffer, start: start, end: position, forced: previous == TextPreparation.newline))
                start = position
            }
        }
        segments.append(Self.segment(buffer, start: start, end: units.count, forced: false))
        return segments
    }

    /// Whether every surrogate in the text is half of a pair whose code point the pair table covers (an emoji or an
    /// ideograph beyond the BMP, not an emoji modifier or a regional indicator).
    private static func pairTableCoversSurrogates(_ buffer: UnsafeBufferPointer<UInt16>) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let unit = buffer[offset]
            if UTF16.isLeadSurrogate(unit), offset + 1 < buffer.count, UTF16.isTrailSurrogate(buffer[offset + 1]) {
                guard PairLineBreaking.supplementaryClass(lead: unit, trail: buffer[offset + 1]) != .unsupported else {
                    return false
                }
                offset += 2
            } else {
                guard !UTF16.isTrailSurrogate(unit) && !UTF16.isLeadSurrogate(unit) else { return false }
                offset += 1
            }
        }
        return true
    }

    /// Unicode 15.1's rule LB19a, which Chromium's newer ICU has and Debian's ICU 72 lacks:
    /// a quotation mark between East Asian characters no longer glues to its neighbours,
    /// so a line may break before an opening quote (“) or after a closing one (”) there.
    /// Earlier rules still hold: never after an opening bracket, never before closing
    /// punctuation.
    static func breaksAroundEastAsianQuote(_ units: [UInt16], at position: Int) -> Bool {
        let current = units[position]
        let previous = units[position - 1]
        if isInitialQuote(current), position + 1 < units.count {
            return isEastAsian(previous) && isEastAsian(units[position + 1]) && !isOpeningPunctuation(previous)
        }
        if isFinalQuote(previous), position >= 2 {
            return isEastAsian(units[position - 2]) && isEastAsian(current) && !isClosingOrNonStarter(current)
        }
        return false
    }

    private static func isInitialQuote(_ unit: UInt16) -> Bool {
        unit == 0x2018 || unit == 0x201C || unit == 0x201B || unit == 0x201F
    }

    private static func isFinalQuote(_ unit: UInt16) -> Bool {
        unit == 0x2019 || unit == 0x201D
    }

    /// East Asian Width F, W or H, by block (enough for the scripts that use these quotes).
    private static func isEastAsian(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA960...0xA97F,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6:
            return true
        default:
            // Supplementary ideographs arrive as surrogates; treat them as East Asian.
            return UTF16.isLeadSurrogate(unit) || UTF16.isTrailSurrogate(unit)
        }
    }

    private static func isOpeningPunctuation(_ unit: UInt16) -> Bool {
        fl_icu_char_type(Int32(unit)) == 20  // U_START_PUNCTUATION
    }

    /// Closing punctuation and the marks that may not start a line (。、！？ and the like).
    private static func isClosingOrNonStarter(_ unit: UInt16) -> Bool {
        let category = fl_icu_char_type(Int32(unit))
        let endPunctuation: Int32 = 21
        let otherPunctuation: Int32 = 23
        return category == endPunctuation || category == otherPunctuation
            || (0x3041...0x30FF).contains(unit)
                && [
                    0x3041, 0x3043, 0x3045, 0x3047, 0x3049, 0x3063, 0x3083, 0x3085, 0x3087,
                    0x308E, 0x30A1, 0x30A3, 0x30A5, 0x30A7, 0x30A9, 0x30C3, 0x30E3, 0x30E5, 0x30E7, 0x30EE, 0x30F5,
                    0x30F6, 0x30FC,
                ].contains(unit)
    }

    /// Blink's breakable spaces: the characters `white-space: normal` lets a line break
    /// after (tabs and newlines have already collapsed to spaces here).
    private static func isBreakableSpace(_ unit: UInt16) -> Bool {
        unit == 0x20 || unit == 0x09 || unit == 0x0A
    }

    @inline(__always)
    private static func isAsciiAlphanumeric(_ unit: UInt16) -> Bool {
        (0x30...0x39).contains(unit) || (0x41...0x5A).contains(unit) || (0x61...0x7A).contains(unit)
    }

    /// Whether Blink consults ICU for a pair involving this unit.
    private static func needsUnicodeRules(_ unit: UInt16) -> Bool {
        unit > 0x7F && unit != 0xA0
    }

    /// ICU's UAX #14 boundaries. Their mandatory-break status is ignored: Blink treats
    /// U+2028 and U+2029 as ordinary break opportunities and handles newlines itself.
    ///
    /// - Returns: One flag per UTF-16 offset (and one for the end), true at a boundary;
    ///   empty when no iterator could be opened.
    private func unicodeBoundaries(of units: [UInt16]) -> [Bool] {
        guard let handle = checkOut() else { return [] }
        defer { checkIn(handle) }
        // A flag per offset: the caller asks about every offset, and a Set's hashing cost
        // more than the ICU iteration itself.
        var boundaries = [Bool](repeating: false, count: units.count + 1)
        units.withUnsafeBufferPointer { buffer in
            var status: Int32 = 0  // U_ZERO_ERROR
            fl_icu_break_set_text(handle.iterator, buffer.baseAddress, Int32(buffer.count), &status)
            guard status <= 0 else { return }
            _ = fl_icu_break_first(handle.iterator)
            while true {
                let boundary = fl_icu_break_next(handle.iterator)
                if boundary == fl_icu_break_done() { break }
                if boundary >= 0 && Int(boundary) < boundaries.count { boundaries[Int(boundary)] = true }
            }
            // ICU keeps a pointer to the buffer; detach it before the buffer goes away.
            fl_icu_break_set_text(handle.iterator, nil, 0, &status)
        }
        return boundaries
    }

    private static func segment(_ units: UnsafeBufferPointer<UInt16>, start: Int, end: Int, forced: Bool)
        -> BreakSegment
    {
        var contentEnd = end
        while contentEnd > start, TextPreparation.hangsAtLineEnd(units[contentEnd - 1]) { contentEnd -= 1 }
        return BreakSegment(start: start, contentEnd: contentEnd, end: end, forcedBreakAfter: forced)
    }

    private func checkOut() -> BreakIteratorHandle? {
        if let pooled = pool.withLock({ $0.popLast() }) { return pooled }
        var status: Int32 = 0  // U_ZERO_ERROR
        // CSS `line-break: auto` breaks before small kana and the prolonged sound mark
        // (class CJ), as Chromium does; ICU's default rules are the strict ones, its
        // `lb=normal` rules are what browsers ship.
        guard let iterator = fl_icu_line_break_open("en@lb=normal", &status), status <= 0
        else { return nil }
        return BreakIteratorHandle(iterator: iterator)
    }

    private func checkIn(_ handle: BreakIteratorHandle) {
        pool.withLock { pooled in
            if pooled.count < Self.poolLimit { pooled.append(handle) }
        }
    }
}
