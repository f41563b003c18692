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
    /// Whether a line must end after this segment (U+2028, U+2029).
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
    /// - Parameter units: The text content (already whitespace-collapsed).
    /// - Returns: The segments in order, covering the whole text.
    func segments(of units: [UInt16]) -> [BreakSegment] {
        guard !units.isEmpty else { return [] }
        guard let handle = checkOut() else {
            // Without ICU, the text is one unbreakable word; break-word still wraps it.
            return [Self.segment(units, start: 0, end: units.count, forced: false)]
        }
        defer { checkIn(handle) }
        var segments: [BreakSegment] = []
        units.withUnsafeBufferPointer { buffer in
            var status = U_ZERO_ERROR
            fl_icu_break_set_text(handle.iterator, buffer.baseAddress, Int32(buffer.count), &status)
            guard status.rawValue <= U_ZERO_ERROR.rawValue else {
                segments = [Self.segment(units, start: 0, end: units.count, forced: false)]
                return
            }
            var start = Int(fl_icu_break_first(handle.iterator))
            while true {
                let boundary = fl_icu_break_next(handle.iterator)
                if boundary == fl_icu_break_done() { break }
                let end = Int(boundary)
                let forced = fl_icu_line_break_is_hard(fl_icu_break_rule_status(handle.iterator)) != 0
                segments.append(Self.segment(units, start: start, end: end, forced: forced && end < units.count))
                start = end
            }
            // ICU keeps a pointer to the buffer; detach it before the buffer goes away.
            fl_icu_break_set_text(handle.iterator, nil, 0, &status)
        }
        return segments
    }

    private static func segment(_ units: [UInt16], start: Int, end: Int, forced: Bool) -> BreakSegment {
        var contentEnd = end
        while contentEnd > start, TextPreparation.hangsAtLineEnd(units[contentEnd - 1]) { contentEnd -= 1 }
        return BreakSegment(start: start, contentEnd: contentEnd, end: end, forcedBreakAfter: forced)
    }

    private func checkOut() -> BreakIteratorHandle? {
        if let pooled = pool.withLock({ $0.popLast() }) { return pooled }
        var status = U_ZERO_ERROR
        guard let iterator = fl_icu_line_break_open(&status), status.rawValue <= U_ZERO_ERROR.rawValue else { return nil }
        return BreakIteratorHandle(iterator: iterator)
    }

    private func checkIn(_ handle: BreakIteratorHandle) {
        pool.withLock { pooled in
            if pooled.count < Self.poolLimit { pooled.append(handle) }
        }
    }
}
