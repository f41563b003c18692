import WaterfallLayout

/// Everything the next page needs, packed into an opaque string: `--resume` takes it back.
///
/// Layout: a version byte; the options' fingerprint; a digest of the ids of every item before the cursor (so a
/// cursor refuses a feed that changed under it); the next page's index; the engine state (next item, content
/// bottom, the round robin's next column, the running quality totals, column heights in device pixels) as
/// LEB128 varints; then an FNV-1a checksum of all of it, and the
/// whole in base64url behind the prefix `fl1.`. The checksum catches damage and casual edits; it is not a
/// signature, so a cursor from an untrusted client must not be given more trust than its feed.
struct LayoutCursor: Hashable {
    static let version: UInt8 = 1
    static let prefix = "fl1."

    var fingerprint: UInt64
    var feedDigest: UInt64
    var pageIndex: Int
    var state: WaterfallState
    /// Running totals of the order measures, so resumed pages report the same totals as one run.
    var qualityTotals: LayoutQualityTotals

    func encoded() -> String {
        var payload: [UInt8] = [Self.version]
        appendFixed(fingerprint, to: &payload)
        appendFixed(feedDigest, to: &payload)
        let fields = [
            pageIndex, state.nextIndex, state.contentBottom, state.nextRoundRobinColumn, qualityTotals.orderInversions,
            qualityTotals.largestDisplacement, state.columnHeights.count,
        ]
        for value in fields + state.columnHeights {
            appendVarint(UInt64(value), to: &payload)
        }
        appendFixed(checksum(payload), to: &payload)
        return Self.prefix + Base64URL.encode(payload)
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
        guard text.hasPrefix(Self.prefix), let bytes = Base64URL.decode(text.dropFirst(Self.prefix.count)) else {
            throw invalid("it does not start with \(Self.prefix) followed by base64url")
        }
        guard bytes.count > 17 + 8 else { throw invalid("it is too short") }
        let body = Array(bytes[..<(bytes.count - 8)])
        var reader = ByteReader(bytes: bytes, offset: bytes.count - 8)
        guard reader.fixed() == checksum(body) else { throw invalid("its checksum does not match: it was cut or changed") }
        guard body[0] == Self.version else {
            throw invalid("it is version \(body[0]); this feedlayout reads version \(Self.version)")
        }
        reader = ByteReader(bytes: body, offset: 1)
        guard let fingerprint = reader.fixed(), let feedDigest = reader.fixed(), let pageIndex = reader.varint(),
            let nextIndex = reader.varint(), let contentBottom = reader.varint(), let roundRobin = reader.varint(),
            let inversions = reader.varint(), let displacement = reader.varint(), let count = reader.varint(),
            count <= 10_000
        else { throw invalid("its fields are incomplete") }
        var heights: [Int] = []
        for _ in 0..<count {
            guard let height = reader.varint() else { throw invalid("its column heights are incomplete") }
            heights.append(height)
        }
        guard reader.offset == body.count else { throw invalid("it has trailing bytes") }
        self.fingerprint = fingerprint
        self.feedDigest = feedDigest
        self.pageIndex = pageIndex
        state = WaterfallState(
            nextIndex: nextIndex, columnHeights: heights, contentBottom: contentBottom, nextRoundRobinColumn: roundRobin)
        qualityTotals = LayoutQualityTotals(orderInversions: inversions, largestDisplacement: displacement)
    }

    init(
        fingerprint: UInt64, feedDigest: UInt64, pageIndex: Int, state: WaterfallState,
        qualityTotals: LayoutQualityTotals = LayoutQualityTotals()
    ) {
        self.fingerprint = fingerprint
        self.feedDigest = feedDigest
        self.pageIndex = pageIndex
        self.state = state
        self.qualityTotals = qualityTotals
    }
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

    mutating func varint() -> Int? {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count, shift < 63 {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value <= UInt64(Int.max) ? Int(value) : nil }
            shift += 7
        }
        return nil
    }
}

/// base64url without padding (RFC 4648 §5): cursors travel in URLs and query strings.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var group: UInt32 = 0
            for (position, byte) in chunk.enumerated() { group |= UInt32(byte) << UInt32(16 - 8 * position) }
            for position in 0...chunk.count { output.append(alphabet[Int((group >> UInt32(18 - 6 * position)) & 63)]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        var output: [UInt8] = []
        var group: UInt32 = 0
        var bits = 0
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            group = (group << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: group >> UInt32(bits)))
            }
        }
        return output
    }
}
