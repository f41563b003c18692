/// Something bytes are appended to one or a few at a time: an array, or a ``GrowableBytes``.
public protocol ByteAppending {
    mutating func append(_ byte: UInt8)
}

extension Array: ByteAppending where Element == UInt8 {}

/// A growable byte buffer written through a pointer: the input sanitizer's output, a captured field's text,
/// JSONWriter's bytes.
///
/// Each of these appends many short runs (a line of text, a tag name, a quote, a key), and into an `[UInt8]` each
/// append paid a uniqueness check (a runtime call) and the generic sequence copy: about three times the copy
/// itself. A buffer is a reference, used by one owner at a time (so without dynamic exclusivity checks); an owner
/// that must behave as a value copies it (``copy()``) before writing to one it shares.
public final class GrowableBytes: @unchecked Sendable {
    @usableFromInline @exclusivity(unchecked) var start: UnsafeMutablePointer<UInt8>
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    /// How many bytes were appended.
    @usableFromInline @exclusivity(unchecked) var used = 0

    public init(capacity: Int) {
        self.capacity = max(capacity, 16)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// How many bytes were appended.
    @inlinable public var count: Int { used }

    /// The room allocated.
    public var allocated: Int { capacity }

    @inlinable
    public func append(_ byte: UInt8) {
        if used == capacity { grow(toHold: used + 1) }
        start[used] = byte
        used &+= 1
    }

    @inlinable
    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        let end = used + bytes.count
        if end > capacity { grow(toHold: end) }
        UnsafeMutableRawPointer(start + used).copyMemory(from: source, byteCount: bytes.count)
        used = end
    }

    /// ``append(_:)-(UnsafeRawBufferPointer)`` for runs that are mostly short (a number, a key), copied by
    /// ``copy(to:from:count:)``. Only for such runs: the general append stays small enough to be inlined where it is
    /// called (with this copy in it, it was not, and a captured field's appends cost more).
    @inlinable
    public func appendShort(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress else { return }
        let end = used + bytes.count
        if end > capacity { grow(toHold: end) }
        Self.copy(to: UnsafeMutableRawPointer(start + used), from: source, count: bytes.count)
        used = end
    }

    /// Copies `count` bytes; up to 16 (a number, a key, a quote and a colon: most appends) without calling
    /// `memmove`, whose call and size dispatch cost more than such a copy.
    @inlinable @inline(__always)
    public static func copy(to target: UnsafeMutableRawPointer, from source: UnsafeRawPointer, count: Int) {
        switch count {
        case 8...16:
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        case 4..<8:
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        case 1..<4:
            for offset in 0..<count {
                target.storeBytes(of: source.load(fromByteOffset: offset, as: UInt8.self), toByteOffset: offset, as: UInt8.self)
            }
        case ...0:
            return
        default:
            target.copyMemory(from: source, byteCount: count)
        }
    }

    @inlinable
    public func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        append(UnsafeRawBufferPointer(bytes))
    }

    @inlinable
    public func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// Appends `count` bytes the caller writes at once through the pointer returned (all of them, before any other
    /// use of the buffer).
    @inlinable
    public func appendUninitialized(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        let end = used + count
        if end > capacity { grow(toHold: end) }
        let target = start + used
        used = end
        return target
    }

    /// Appends again the bytes at `range` of those appended.
    @inlinable
    public func appendCopy(of range: Range<Int>) {
        precondition(range.upperBound <= used, "GrowableBytes.appendCopy: the range is past the bytes appended")
        // Room first: growing moves the bytes, so they are read from where they are after it.
        let target = appendUninitialized(range.count)
        target.update(from: start + range.lowerBound, count: range.count)
    }

    /// Forgets the bytes appended after the first `count`.
    @inlinable
    public func removeBytes(after count: Int) {
        used = min(used, count)
    }

    /// Forgets the bytes, keeping the room.
    public func removeAll() {
        used = 0
    }

    /// A buffer of its own with the same bytes.
    public func copy() -> GrowableBytes {
        let copy = GrowableBytes(capacity: capacity)
        copy.start.update(from: start, count: used)
        copy.used = used
        return copy
    }

    /// Calls `body` with the bytes appended, in place.
    @inlinable
    public func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        try body(UnsafeBufferPointer(start: start, count: used))
    }

    /// How many bytes appended at or after `offset` satisfy `predicate`.
    @inlinable
    public func count(from offset: Int, where predicate: (UInt8) -> Bool) -> Int {
        UnsafeBufferPointer(start: start + offset, count: max(0, used - offset)).count(where: predicate)
    }

    /// Makes room for at least `needed` bytes, doubling.
    @usableFromInline
    func grow(toHold needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: start, count: used)
        start.deallocate()
        start = moved
        capacity = larger
    }
}

extension GrowableBytes: ByteAppending {}

extension ByteAppending {
    /// Appends a Unicode scalar's UTF-8 bytes (the caller has checked it is a scalar: no surrogate, at most
    /// U+10FFFF).
    @inlinable
    public mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            append(UInt8(scalar))
        case 0x80..<0x800:
            append(UInt8(0xC0 | scalar >> 6))
            append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            append(UInt8(0xE0 | scalar >> 12))
            append(UInt8(0x80 | scalar >> 6 & 0x3F))
            append(UInt8(0x80 | scalar & 0x3F))
        default:
            append(UInt8(0xF0 | scalar >> 18))
            append(UInt8(0x80 | scalar >> 12 & 0x3F))
            append(UInt8(0x80 | scalar >> 6 & 0x3F))
            append(UInt8(0x80 | scalar & 0x3F))
        }
    }
}
