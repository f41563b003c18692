/// A cache key made of UTF-16 code units.
///
/// `[UInt16]` is Hashable already, but it feeds the hasher one element at a time; keys of
/// up to ``inlineCapacity`` units live in three integers instead, and longer ones hash
/// their units as one block of bytes. ``TextMeasurer`` keys where truncated lines were cut
/// with these; segment widths, looked up for every word, use ``SegmentCache``, which
/// hashes the text in place without building a key.
struct UTF16Key: Hashable, Sendable {
    /// The most units a key holds without allocating.
    static let inlineCapacity = 12

    private var word0: UInt64 = 0
    private var word1: UInt64 = 0
    private var word2: UInt64 = 0
    private var count = 0
    /// All the units when there are more than ``inlineCapacity``; empty otherwise.
    private var spilled: [UInt16] = []

    /// A key of the given units.
    init(_ units: [UInt16]) {
        if units.count <= Self.inlineCapacity {
            for unit in units { appendInline(unit) }
        } else {
            spilled = units
            count = units.count
        }
    }

    private mutating func appendInline(_ unit: UInt16) {
        let shift = UInt64(count % 4) * 16
        switch count / 4 {
        case 0: word0 |= UInt64(unit) << shift
        case 1: word1 |= UInt64(unit) << shift
        default: word2 |= UInt64(unit) << shift
        }
        count += 1
    }

    func hash(into hasher: inout Hasher) {
        if count <= Self.inlineCapacity {
            // One combine instead of four: the hasher's rounds dominate a lookup, and
            // equality still compares every unit, so a rare collision costs nothing but time.
            var mixed = word0 &* 0x9E37_79B9_7F4A_7C15
            mixed = (mixed ^ word1) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ word2) &* 0x94D0_49BB_1331_11EB
            hasher.combine(mixed ^ UInt64(count))
        } else {
            spilled.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    static func == (left: UTF16Key, right: UTF16Key) -> Bool {
        guard left.count == right.count, left.word0 == right.word0, left.word1 == right.word1,
            left.word2 == right.word2
        else { return false }
        if left.count <= inlineCapacity { return true }
        return left.spilled.withUnsafeBufferPointer { leftBuffer in
            right.spilled.withUnsafeBufferPointer { rightBuffer in leftBuffer.elementsEqual(rightBuffer) }
        }
    }
}
