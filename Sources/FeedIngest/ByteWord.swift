/// Eight bytes at a time: the classic word tricks that tell whether any byte of a `UInt64` is below a bound or
/// equal to a value, without looking at the bytes one by one. The scanners of the input sanitizer, of caption
/// text and of JSON strings use them to pass over runs of ordinary text.
public enum ByteWord {
    @usableFromInline static let ones: UInt64 = 0x0101_0101_0101_0101
    @usableFromInline static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `offset`, unaligned, the first in the lowest bits (as ``offset(ofFirst:)`` counts).
    @inlinable
    public static func load(_ base: UnsafeRawPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Whether a byte of `word` is below `bound` (at most 0x80). Bytes with the high bit set are never below it.
    @inlinable
    public static func hasByte(below bound: UInt8, in word: UInt64) -> Bool {
        bytes(below: bound, in: word) != 0
    }

    /// Whether a byte of `word` equals `value` (any value).
    @inlinable
    public static func hasByte(_ value: UInt8, in word: UInt64) -> Bool {
        bytes(equalTo: value, in: word) != 0
    }

    /// The high bit of the bytes of `word` below `bound` (at most 0x80). The lowest bit set is exact (in memory
    /// order: the first such byte); a borrow can also mark bytes after it.
    @inlinable
    public static func bytes(below bound: UInt8, in word: UInt64) -> UInt64 {
        (word &- ones &* UInt64(bound)) & ~word & highs
    }

    /// The high bit of the bytes of `word` equal to `value`, exact for the lowest as ``bytes(below:in:)``.
    @inlinable
    public static func bytes(equalTo value: UInt8, in word: UInt64) -> UInt64 {
        let matches = word ^ (ones &* UInt64(value))
        return (matches &- ones) & ~matches & highs
    }

    /// Scans from `start` eight bytes at a time, while `marks` (a mask as ``bytes(below:in:)`` gives, its lowest bit
    /// exact) marks no byte of the word, and returns the offset of the first marked byte, or of the first of the last
    /// bytes before `limit` too few for a word. The caller looks at the bytes from there one by one.
    @inlinable @inline(__always)
    public static func endOfUnmarkedWords(
        _ base: UnsafeRawPointer, from start: Int, to limit: Int, marks: (UInt64) -> UInt64
    ) -> Int {
        var end = start
        while end &+ 8 <= limit {
            let marked = marks(load(base, at: end))
            guard marked == 0 else { return end &+ offset(ofFirst: marked) }
            end &+= 8
        }
        return end
    }

    /// How many bytes come before the one whose high bit is the lowest set in `mask` (not zero), in memory order.
    @inlinable
    public static func offset(ofFirst mask: UInt64) -> Int {
        mask.trailingZeroBitCount &>> 3
    }

    /// The high bit of every byte of `word` that equals `value`, and of no other: exact, unlike the borrow trick
    /// of ``hasByte(_:in:)``, so that neighbouring matches can be compared.
    @inlinable
    public static func positions(of value: UInt8, in word: UInt64) -> UInt64 {
        let matches = word ^ (ones &* UInt64(value))
        // A byte's low seven bits plus 0x7F carry into its high bit unless they are all zero (and never beyond it).
        return ~(((matches & ~highs) &+ ~highs) | matches) & highs
    }

    /// Whether every byte of `word` is ASCII.
    @inlinable
    public static func isASCII(_ word: UInt64) -> Bool {
        word & highs == 0
    }
}
