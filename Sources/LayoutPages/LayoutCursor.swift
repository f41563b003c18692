import ByteTools
import WaterfallLayout

/// Everything the next page needs, packed into an opaque string: `--resume` takes it back.
///
/// Layout: a version byte; the options' fingerprint (fonts included); a digest of the ids of every item before the
/// cursor (so a cursor refuses a feed that changed under it); a 16-bit tag of each font's digest (so a refusal can
/// name the font that differs); then the next page's index, the running quality totals and the
/// engine state as LEB128 varints; then an FNV-1a checksum of all of it, and the whole in base64url behind the
/// prefix `fl3.` or `fl4.`. The checksum catches damage and casual edits; it is not a signature, so a cursor
/// from an untrusted client must not be given more trust than its feed.
///
/// Version 3 carries a waterfall's columns only, and is what a layout without sections writes. Version 4 adds the mode (waterfall or flow), the section fields, the flow rows'
/// follow lanes, and a hash of the current section's key (the next item starts a new section when its key
/// differs); its integers are zigzag-encoded, since frames may start left of zero.
/// (Versions 1 and 2 were the same without font tags, from before fonts were part of a layout; they are refused
/// with a message that says so.)
package struct LayoutCursor: Hashable {
    static let prefixes = ["fl3.", "fl4."]
    static let firstVersion: UInt8 = 3

    var fingerprint: UInt64
    var feedDigest: UInt64
    /// The first 16 bits of each font's digest (``LayoutFonts/tags``).
    var fontTags: [Int]
    var pageIndex: Int
    var state: EngineState
    /// A hash of the current section's key (`<fl:section>`); 0 before any.
    var sectionKey: UInt64
    /// Running totals of the order measures, so resumed pages report the same totals as one run.
    var qualityTotals: LayoutQualityTotals

    init(
        fingerprint: UInt64, feedDigest: UInt64, fontTags: [Int] = [], pageIndex: Int, state: EngineState,
        sectionKey: UInt64 = 0, qualityTotals: LayoutQualityTotals = LayoutQualityTotals()
    ) {
        self.fingerprint = fingerprint
        self.feedDigest = feedDigest
        self.fontTags = fontTags
        self.pageIndex = pageIndex
        self.state = state
        self.sectionKey = sectionKey
        self.qualityTotals = qualityTotals
    }

    init(
        fingerprint: UInt64, feedDigest: UInt64, fontTags: [Int] = [], pageIndex: Int, state: WaterfallState,
        qualityTotals: LayoutQualityTotals = LayoutQualityTotals()
    ) {
        self.init(
            fingerprint: fingerprint, feedDigest: feedDigest, fontTags: fontTags, pageIndex: pageIndex,
            state: .waterfall(state), qualityTotals: qualityTotals)
    }

    /// The version this cursor needs: 3 when a plain waterfall state says it all.
    private var version: UInt8 {
        if case .waterfall = state, !state.hasSections, sectionKey == 0 { return 3 }
        return 4
    }

    func encoded() -> String {
        let version = version
        var payload: [UInt8] = [version]
        appendFixed(fingerprint, to: &payload)
        appendFixed(feedDigest, to: &payload)
        appendVarint(UInt64(fontTags.count), to: &payload)
        for tag in fontTags { appendVarint(UInt64(UInt16(truncatingIfNeeded: tag)), to: &payload) }
        if version == 3, case .waterfall(let state) = state {
            let fields = [
                pageIndex, state.nextIndex, state.contentBottom, state.placementCursor,
                qualityTotals.orderInversions, qualityTotals.largestDisplacement, state.columnHeights.count,
            ]
            // A state of a run is never negative here; a hostile one built in a test must not trap the encoder.
            for value in fields + state.columnHeights { appendVarint(UInt64(truncatingIfNeeded: value), to: &payload) }
        } else {
            appendFixed(sectionKey, to: &payload)
            var fields = [pageIndex, qualityTotals.orderInversions, qualityTotals.largestDisplacement]
            switch state {
            case .waterfall(let state):
                fields += [0, state.nextIndex, state.contentBottom, state.placementCursor]
                fields += [state.columnHeights.count] + state.columnHeights
                fields += sectionFields(
                    state.section.index, state.section.start, state.section.begun, state.section.headerLength,
                    state.section.firstIndex, state.section.itemBounds)
            case .flow(let state):
                fields += [1, state.nextIndex, state.rowTop, state.contentBottom]
                fields += sectionFields(
                    state.section.index, state.section.start, state.section.begun, state.section.headerLength,
                    state.section.firstIndex, state.section.itemBounds)
                fields.append(state.followSegments.count)
                for segment in state.followSegments { fields += [segment.x, segment.width, segment.bottom] }
                fields += [state.followLanes.count] + state.followLanes
            }
            for value in fields { appendVarint(zigzag(value), to: &payload) }
        }
        appendFixed(checksum(payload), to: &payload)
        return Self.prefixes[Int(version - Self.firstVersion)] + Base64.encode(payload, alphabet: .urlSafe, padded: false)
    }

    /// Reads a cursor string.
    ///
    /// - Throws: `LayoutError.invalidCursor` when the string is not a cursor, was cut or changed, or comes from
    ///   another version of FeedLayout.
    init(decoding text: String) throws(LayoutError) {
        func invalid(_ why: String) -> LayoutError {
            LayoutError(
                .invalidCursor,
                "--resume: the cursor is not valid (\(why)); pass the `cursor` string of a page exactly as written")
        }
        if text.hasPrefix("fl1.") || text.hasPrefix("fl2.") {
            throw LayoutError(
                .cursorMismatch,
                "--resume: the cursor was made by an earlier FeedLayout, before fonts were part of a layout, so it "
                    + "cannot tell whether this run's fonts match; lay the feed out again from the first page")
        }
        guard text.utf8.count <= Self.maximumLength else {
            throw invalid("it is \(text.utf8.count) bytes long; cursors are at most \(Self.maximumLength)")
        }
        guard let prefix = Self.prefixes.first(where: { text.hasPrefix($0) }),
            let bytes = Base64.decode(text.dropFirst(prefix.count).utf8, alphabet: .urlSafe, padded: false)
        else {
            throw invalid("it does not start with fl3. or fl4. followed by base64url")
        }
        guard bytes.count > 17 + 8 else { throw invalid("it is too short") }
        let body = Array(bytes[..<(bytes.count - 8)])
        var reader = ByteReader(bytes: bytes, offset: bytes.count - 8)
        guard reader.fixed() == checksum(body) else {
            throw invalid("its checksum does not match: it was cut or changed")
        }
        guard body[0] == 3 || body[0] == 4, prefix == Self.prefixes[Int(body[0] - Self.firstVersion)] else {
            throw invalid("it is version \(body[0]); this feedlayout reads versions 3 and 4")
        }
        reader = ByteReader(bytes: body, offset: 1)
        guard let fingerprint = reader.fixed(), let feedDigest = reader.fixed(),
            let fontTags = reader.list(signed: false, limit: Self.maximumFontTags)
        else {
            throw invalid("its fields are incomplete or out of range")
        }
        guard fontTags.allSatisfy({ (0...Int(UInt16.max)).contains($0) }) else {
            throw invalid("its font tags are not 16-bit")
        }
        self.fingerprint = fingerprint
        self.feedDigest = feedDigest
        self.fontTags = fontTags
        if body[0] == 3 {
            guard let pageIndex = reader.varint(), let nextIndex = reader.varint(), let contentBottom = reader.varint(),
                let placementCursor = reader.varint(), let inversions = reader.varint(),
                let displacement = reader.varint(),
                let heights = reader.list(signed: false, limit: WaterfallLimits.maximumColumns)
            else { throw invalid("its fields are incomplete or out of range") }
            self.pageIndex = pageIndex
            state = .waterfall(
                WaterfallState(
                    nextIndex: nextIndex, columnHeights: heights, contentBottom: contentBottom,
                    placementCursor: placementCursor))
            sectionKey = 0
            qualityTotals = LayoutQualityTotals(orderInversions: inversions, largestDisplacement: displacement)
        } else {
            guard let sectionKey = reader.fixed(), let pageIndex = reader.signed(), let inversions = reader.signed(),
                let displacement = reader.signed(), let mode = reader.signed(), let decoded = reader.engineState(mode)
            else { throw invalid("its fields are incomplete or out of range") }
            self.sectionKey = sectionKey
            self.pageIndex = pageIndex
            state = decoded
            qualityTotals = LayoutQualityTotals(orderInversions: inversions, largestDisplacement: displacement)
        }
        guard reader.offset == body.count else { throw invalid("it has trailing bytes") }
        if let why = fieldProblem { throw invalid(why) }
    }

    /// The longest cursor read, in bytes: far above any cursor a layout writes (its lists hold at most 10,000
    /// entries), and short enough that decoding one costs little.
    static let maximumLength = 1 << 20
    /// The most font tags a cursor carries: a layout has a title font, a caption font and their fallbacks.
    static let maximumFontTags = 256

    /// What is wrong with the fields that do not depend on the run, or nil. The engine state is checked against
    /// the run's grid when the engine resumes from it (`WaterfallEngine(configuration:resumingFrom:)`).
    ///
    /// Every page holds at least one item, so the pages before the cursor are at most the items before it; the
    /// order totals are sums and maximums of per-page measures of those items.
    private var fieldProblem: String? {
        let nextIndex = state.nextIndex
        guard WaterfallLimits.isCoordinate(nextIndex) else { return "its next item \(nextIndex) is out of range" }
        guard pageIndex >= 1, pageIndex <= nextIndex else {
            return "its page \(pageIndex) cannot follow \(nextIndex) items"
        }
        guard (0...nextIndex).contains(qualityTotals.largestDisplacement),
            WaterfallLimits.isCoordinate(qualityTotals.orderInversions)
        else {
            return "its order totals (\(qualityTotals.orderInversions) inversions, largest displacement "
                + "\(qualityTotals.largestDisplacement)) cannot come from \(nextIndex) items"
        }
        return nil
    }
}

/// The section fields of an engine state, in cursor order.
private func sectionFields(
    _ index: Int, _ start: Int?, _ begun: Bool, _ headerLength: Int, _ firstIndex: Int, _ bounds: DeviceRect?
) -> [Int] {
    var fields = [index, start.map { $0 + 1 } ?? 0, begun ? 1 : 0, headerLength, firstIndex]
    if let bounds { fields += [1, bounds.x, bounds.y, bounds.width, bounds.height] } else { fields.append(0) }
    return fields
}

private func zigzag(_ value: Int) -> UInt64 {
    UInt64(bitPattern: Int64((value << 1) ^ (value >> 63)))
}

private func checksum(_ bytes: [UInt8]) -> UInt64 {
    var hash = StableHash()
    for byte in bytes { hash.combine(byte) }
    return hash.value
}

private func appendFixed(_ value: UInt64, to bytes: inout [UInt8]) {
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
}

private func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest >>= 7
    }
    bytes.append(UInt8(rest))
}

private struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    mutating func fixed() -> UInt64? {
        guard offset + 8 <= bytes.count else { return nil }
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        offset += 8
        return value
    }

    /// A count (at most `limit`) followed by that many values.
    mutating func list(signed isSigned: Bool, limit: Int = 10_000) -> [Int]? {
        guard let count = isSigned ? signed() : varint(), (0...limit).contains(count) else { return nil }
        var values: [Int] = []
        for _ in 0..<count {
            guard let value = isSigned ? signed() : varint() else { return nil }
            values.append(value)
        }
        return values
    }

    /// A zigzag-encoded varint.
    mutating func signed() -> Int? {
        guard let raw = unsignedVarint() else { return nil }
        return Int(Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1))))
    }

    /// The section fields of `sectionFields`.
    mutating func section() -> (Int, Int?, Bool, Int, Int, DeviceRect?)? {
        // The start is written plus one (0 for none), and the flags as 0 or 1: anything else is no cursor's.
        guard let index = signed(), let start = signed(), start >= 0, let begun = signed(), (0...1).contains(begun),
            let header = signed(), let first = signed(), let hasBounds = signed(), (0...1).contains(hasBounds)
        else { return nil }
        var bounds: DeviceRect?
        if hasBounds == 1 {
            // Range-checked with the rest of the section before any arithmetic (`SectionProgress.isConsistent`).
            guard let x = signed(), let y = signed(), let width = signed(), let height = signed() else { return nil }
            bounds = DeviceRect(x: x, y: y, width: width, height: height)
        }
        return (index, start == 0 ? nil : start - 1, begun == 1, header, first, bounds)
    }

    /// A version 4 engine state of mode 0 (waterfall) or 1 (flow).
    mutating func engineState(_ mode: Int) -> EngineState? {
        switch mode {
        case 0:
            guard let next = signed(), let bottom = signed(), let placementCursor = signed(),
                let heights = list(signed: true, limit: WaterfallLimits.maximumColumns), let section = section()
            else { return nil }
            return .waterfall(
                WaterfallState(
                    nextIndex: next, columnHeights: heights, contentBottom: bottom, placementCursor: placementCursor,
                    section: SectionProgress(
                        index: section.0, start: section.1, begun: section.2, headerLength: section.3,
                        firstIndex: section.4, itemBounds: section.5)))
        case 1:
            guard let next = signed(), let rowTop = signed(), let bottom = signed(), let section = section(),
                let segmentCount = signed(), (0...10_000).contains(segmentCount)
            else { return nil }
            var segments: [FollowSegment] = []
            for _ in 0..<segmentCount {
                guard let x = signed(), let width = signed(), let segmentBottom = signed() else { return nil }
                segments.append(FollowSegment(x: x, width: width, bottom: segmentBottom))
            }
            guard let lanes = list(signed: true) else { return nil }
            return .flow(
                FlowState(
                    nextIndex: next, rowTop: rowTop, contentBottom: bottom,
                    section: SectionProgress(
                        index: section.0, start: section.1, begun: section.2, headerLength: section.3,
                        firstIndex: section.4, itemBounds: section.5), followSegments: segments,
                    followLanes: lanes))
        default:
            return nil
        }
    }

    mutating func varint() -> Int? {
        guard let value = unsignedVarint() else { return nil }
        return value <= UInt64(Int.max) ? Int(value) : nil
    }

    mutating func unsignedVarint() -> UInt64? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 63 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
        return nil
    }
}
