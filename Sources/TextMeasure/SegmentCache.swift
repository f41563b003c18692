/// A segment's cache key: `head` units of look-behind context, the segment, then `tail`
/// units of look-ahead context, all in `range` of the text content.
struct SegmentKey: Sendable {
    var head: UInt16
    var range: Range<Int>
    var tail: UInt16
}

/// A bounded cache from a segment's key (its UTF-16 text with a little context) to
/// values, built for the warm path of ``TextMeasurer``, which looks up every segment of
/// every caption (every character of CJK text).
///
/// A `Dictionary` keyed by an array of units costs a key object per lookup, a SipHash
/// pass, and three scattered memory reads per probe (metadata, key, value). Here one pass
/// over the caller's units (``KeyDigest``) gives both the hash and, for a short key, the
/// key itself as three words; a lookup probes an open-addressing index and compares those
/// words with an entry that holds the value next to them (long keys compare against an
/// arena): two cache lines per hit and no allocation.
///
/// The hash is a multiply-and-rotate over 64-bit words, keyed by a random seed per cache,
/// so the slot a text lands in cannot be predicted from outside; the table never fills
/// past half (linear probing stays short), and two generations bound it as
/// ``BoundedCache`` does: hits in the older generation move to the newer one, and when the
/// newer one reaches the limit the older one is dropped.
struct SegmentCache<Value: Sendable>: Sendable {
    private var recent: SegmentTable<Value>
    private var older: SegmentTable<Value>
    /// Entries per generation.
    let limit: Int
    /// Mixed into every hash, drawn from the system's random source.
    private let seed = UInt64.random(in: UInt64.min...UInt64.max)

    /// - Parameter limit: Entries per generation (the cache holds at most twice this).
    init(limit: Int) {
        precondition(limit > 0, "a cache needs room for at least one entry")
        self.limit = limit
        recent = SegmentTable(limit: limit)
        older = SegmentTable(limit: 1)
    }

    /// Looks up many keys (under one lock, for the caller), calling `found` with the
    /// position and value of each one held.
    mutating func values(
        of keys: UnsafeBufferPointer<SegmentKey>, in units: UnsafeBufferPointer<UInt16>, found: (Int, Value) -> Void
    ) {
        for position in keys.indices {
            let key = keys[position]
            let body = UnsafeBufferPointer(rebasing: units[key.range])
            if let value = value(head: key.head, body: body, tail: key.tail) { found(position, value) }
        }
    }

    /// The number of entries held across both generations.
    var count: Int { recent.count + older.count }

    /// The value stored for `head`, the units of `body`, then `tail`, if any.
    mutating func value(head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16) -> Value? {
        let digest = KeyDigest(head: head, body: body, tail: tail, seed: seed)
        if let found = recent.value(digest, body: body) { return found }
        guard older.count > 0, let found = older.value(digest, body: body) else { return nil }
        insert(found, digest: digest, body: body)
        return found
    }

    /// Stores a value for a key (replacing nothing: a key is only stored after a miss).
    mutating func insert(_ value: Value, head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16) {
        let digest = KeyDigest(head: head, body: body, tail: tail, seed: seed)
        if recent.value(digest, body: body) != nil { return }
        insert(value, digest: digest, body: body)
    }

    private mutating func insert(_ value: Value, digest: KeyDigest, body: UnsafeBufferPointer<UInt16>) {
        if recent.isFull(adding: body.count) {
            older = recent
            recent = SegmentTable(limit: limit)
        }
        recent.insert(value, digest: digest, body: body)
    }
}

/// What one pass over a key gives: its hash, its shape (head, tail and length in one
/// word), and its first 12 units as three words, zero-padded.
struct KeyDigest: Sendable {
    /// The most body units the words hold: keys up to this long compare by words alone.
    static let inlineCapacity = 12

    var hash: UInt64
    var shape: UInt64
    var word0: UInt64 = 0
    var word1: UInt64 = 0
    var word2: UInt64 = 0

    @inline(__always)
    init(head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16, seed: UInt64) {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        shape = UInt64(head) << 48 | UInt64(tail) << 32 | UInt64(body.count)
        var hash = seed ^ shape
        hash = (hash ^ (hash >> 31)) &* multiplier
        if let base = body.baseAddress {
            let raw = UnsafeRawPointer(base)
            let byteCount = body.count * 2
            var offset = 0
            var wordIndex = 0
            while offset < byteCount {
                var word: UInt64
                if offset + 8 <= byteCount {
                    word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                } else {
                    // The last one to three units, zero-padded.
                    word = 0
                    var shift: UInt64 = 0
                    var tailOffset = offset
                    while tailOffset < byteCount {
                        word |= UInt64(raw.load(fromByteOffset: tailOffset, as: UInt16.self)) << shift
                        shift += 16
                        tailOffset += 2
                    }
                }
                switch wordIndex {
                case 0: word0 = word
                case 1: word1 = word
                case 2: word2 = word
                default: break
                }
                hash = ((hash ^ word) &* multiplier).rotatedLeft(by: 29)
                wordIndex += 1
                offset += 8
            }
        }
        hash ^= hash >> 32
        hash &*= 0xD6E8_FEB8_6659_FD93
        self.hash = hash ^ (hash >> 32)
    }
}

/// One generation of a ``SegmentCache``: an open-addressing index over densely stored
/// entries, with long keys' units in one arena.
///
/// The index grows with the entries (it stays at most half full), so a measurer that
/// has seen a thousand words touches tens of kilobytes, not a table sized for the limit:
/// a lookup is then one probe into a small index and one read of its entry.
struct SegmentTable<Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        var hash: UInt64
        var shape: UInt64
        /// A body of up to ``KeyDigest/inlineCapacity`` units is held here, four to a
        /// word, so that a lookup of a short key (a CJK character, a short word) reads no
        /// arena; a longer body's units start in the arena at the offset in `word0`.
        var word0: UInt64
        var word1: UInt64
        var word2: UInt64
        var value: Value
    }

    /// Per slot: 0 when empty, else the high half of the key's hash and the entry's
    /// position plus one.
    private var index: [UInt64]
    private var entries: [Entry] = []
    private var arena: [UInt16] = []
    private var mask: Int
    private let limit: Int
    var count: Int { entries.count }
    /// The arena never grows past this many units, however long the segments are.
    private static var arenaLimit: Int { 1 << 20 }

    init(limit: Int) {
        self.limit = limit
        index = Array(repeating: 0, count: 64)
        mask = index.count - 1
    }

    /// Whether storing one more key of `bodyLength` units would pass the limits.
    func isFull(adding bodyLength: Int) -> Bool {
        count >= limit || (bodyLength > KeyDigest.inlineCapacity && arena.count + bodyLength > Self.arenaLimit)
    }

    func value(_ digest: KeyDigest, body: UnsafeBufferPointer<UInt16>) -> Value? {
        let tag = digest.hash >> 32
        return index.withUnsafeBufferPointer { index in
            entries.withUnsafeBufferPointer { entries in
                var slot = Int(truncatingIfNeeded: digest.hash) & mask
                while true {
                    let marker = index[slot]
                    if marker == 0 { return nil }
                    if marker >> 32 == tag {
                        let entry = entries[Int(truncatingIfNeeded: marker & 0xFFFF_FFFF) - 1]
                        if entry.shape == digest.shape && matches(entry, digest, body) { return entry.value }
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    /// Whether an entry of the same shape holds this key.
    @inline(__always)
    private func matches(_ entry: Entry, _ digest: KeyDigest, _ body: UnsafeBufferPointer<UInt16>) -> Bool {
        if body.count <= KeyDigest.inlineCapacity {
            return entry.word0 == digest.word0 && entry.word1 == digest.word1 && entry.word2 == digest.word2
        }
        return arena.withUnsafeBufferPointer { arena in
            memoryEqual(arena.baseAddress! + Int(entry.word0), body.baseAddress!, count: body.count)
        }
    }

    mutating func insert(_ value: Value, digest: KeyDigest, body: UnsafeBufferPointer<UInt16>) {
        if (entries.count + 1) * 2 > index.count { grow() }
        var words = (digest.word0, digest.word1, digest.word2)
        if body.count > KeyDigest.inlineCapacity {
            words = (UInt64(arena.count), 0, 0)
            arena.append(contentsOf: body)
        }
        entries.append(
            Entry(
                hash: digest.hash, shape: digest.shape, word0: words.0, word1: words.1, word2: words.2, value: value))
        place(hash: digest.hash, position: entries.count)
    }

    private mutating func place(hash: UInt64, position: Int) {
        var slot = Int(truncatingIfNeeded: hash) & mask
        while index[slot] != 0 { slot = (slot + 1) & mask }
        index[slot] = (hash >> 32) << 32 | UInt64(position)
    }

    private mutating func grow() {
        index = Array(repeating: 0, count: index.count * 2)
        mask = index.count - 1
        for position in entries.indices { place(hash: entries[position].hash, position: position + 1) }
    }
}

/// Compares two runs of units; written out because `elementsEqual` on buffers does not
/// reduce to a block compare.
@inline(__always)
private func memoryEqual(_ left: UnsafePointer<UInt16>, _ right: UnsafePointer<UInt16>, count: Int) -> Bool {
    var index = 0
    let leftRaw = UnsafeRawPointer(left)
    let rightRaw = UnsafeRawPointer(right)
    while index + 4 <= count {
        if leftRaw.loadUnaligned(fromByteOffset: index * 2, as: UInt64.self)
            != rightRaw.loadUnaligned(fromByteOffset: index * 2, as: UInt64.self)
        {
            return false
        }
        index += 4
    }
    while index < count {
        if left[index] != right[index] { return false }
        index += 1
    }
    return true
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(by amount: UInt64) -> UInt64 {
        (self << amount) | (self >> (64 - amount))
    }
}
