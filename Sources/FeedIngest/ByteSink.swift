/// Something bytes are appended to one or a few at a time: an array, or a ``ByteSink``.
protocol ByteAppending: ~Copyable {
    mutating func append(_ byte: UInt8)
}

extension Array: ByteAppending where Element == UInt8 {}

/// A growable byte buffer written through a pointer.
///
/// The input sanitizer appends dozens of short runs per feed item (a line of text, a tag name, an attribute
/// value, a rewritten reference). Into an `[UInt8]`, each `append(contentsOf:)` cost about three times the copy
/// itself (uniqueness and capacity checks, the generic sequence copy): a quarter of the sanitizer's time.
struct ByteSink: ~Copyable, ByteAppending {
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// How many bytes were appended.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The byte at `index` (below `count`).
    subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < count, "ByteSink index out of range")
        return start[index]
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(toHold: count + 1) }
        start[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress else { return }
        let end = count + bytes.count
        if end > capacity { grow(toHold: end) }
        (start + count).update(from: source, count: bytes.count)
        count = end
    }

    mutating func append(contentsOf bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append(contentsOf: $0) }
    }

    /// Whether a byte appended at or after `offset` satisfies `predicate`.
    func contains(from offset: Int, where predicate: (UInt8) -> Bool) -> Bool {
        UnsafeBufferPointer(start: start + offset, count: max(0, count - offset)).contains(where: predicate)
    }

    /// Calls `body` with the bytes appended, in place.
    func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        body(UnsafeBufferPointer(start: start, count: count))
    }

    private mutating func grow(toHold needed: Int) {
        let larger = max(needed, capacity * 2)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.update(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = larger
    }
}
