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
/// pass, and three scattered memory reads per probe (metadata, key, value). Here a lookup
/// hashes the caller's units in place, probes an open-addressing index, and compares the
/// key against an entry that holds the value next to the key (short keys inline, long
/// ones in an arena): two or three cache lines per hit and no allocation.
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

    /// Looks up many keys, calling `found` with the position and value of each one held.
    ///
    /// The first reads of different keys do not depend on each other, so they are made
    /// in passes (every key's index slot, then every candidate entry, then the
    /// comparisons): the processor overlaps the cache misses of a pass instead of waiting
    /// for each in turn, which is most of what a lookup costs.
    mutating func values(
        of keys: UnsafeBufferPointer<SegmentKey>, in units: UnsafeBufferPointer<UInt16>, found: (Int, Value) -> Void
    ) {
        withUnsafeTemporaryAllocation(of: UInt64.self, capacity: keys.count * 2) { scratch in
            let count = keys.count
            for position in 0..<count {
                let key = keys[position]
                let hash = SegmentTable<Value>.hash(
                    head: key.head, body: UnsafeBufferPointer(rebasing: units[key.range]), tail: key.tail, seed: seed)
                scratch[position] = hash
                scratch[count + position] = recent.marker(hash: hash)
            }
            for position in 0..<count {
                scratch[count + position] = recent.entryHash(marker: scratch[count + position])
            }
            for position in 0..<count {
                let key = keys[position]
                let body = UnsafeBufferPointer(rebasing: units[key.range])
                let hash = scratch[position]
                // An empty first slot (entry hash 0) means the key is not in this generation.
                if scratch[count + position] != 0,
                    let value = recent.value(hash: hash, head: key.head, body: body, tail: key.tail)
                {
                    found(position, value)
                } else if older.count > 0,
                    let value = older.value(hash: hash, head: key.head, body: body, tail: key.tail)
                {
                    insert(value, hash: hash, head: key.head, body: body, tail: key.tail)
                    found(position, value)
                }
            }
        }
    }

    /// The number of entries held across both generations.
    var count: Int { recent.count + older.count }

    /// The value stored for `head`, the units of `body`, then `tail`, if any.
    mutating func value(head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16) -> Value? {
        let hash = SegmentTable<Value>.hash(head: head, body: body, tail: tail, seed: seed)
        if let found = recent.value(hash: hash, head: head, body: body, tail: tail) { return found }
        guard older.count > 0, let found = older.value(hash: hash, head: head, body: body, tail: tail) else {
            return nil
        }
        insert(found, hash: hash, head: head, body: body, tail: tail)
        return found
    }

    /// Stores a value for a key (replacing nothing: a key is only stored after a miss).
    mutating func insert(_ value: Value, head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16) {
        let hash = SegmentTable<Value>.hash(head: head, body: body, tail: tail, seed: seed)
        if recent.value(hash: hash, head: head, body: body, tail: tail) != nil { return }
        insert(value, hash: hash, head: head, body: body, tail: tail)
    }

    private mutating func insert(
        _ value: Value, hash: UInt64, head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16
    ) {
        if recent.isFull(adding: body.count) {
            older = recent
            recent = SegmentTable(limit: limit)
        }
        recent.insert(value, hash: hash, head: head, body: body, tail: tail)
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
        var head: UInt16
        var tail: UInt16
        var bodyLength: UInt32
        /// A body of up to ``inlineCapacity`` units is held here, four to a word, so that
        /// a lookup of a short key (a CJK character, a short word) reads no arena; a longer
        /// body's units start in the arena at the offset in `word0`.
        var word0: UInt64
        var word1: UInt64
        var word2: UInt64
        var value: Value
    }

    /// The most units a key body holds in its entry.
    private static var inlineCapacity: Int { 12 }

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
        count >= limit || (bodyLength > Self.inlineCapacity && arena.count + bodyLength > Self.arenaLimit)
    }

    static func hash(head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16, seed: UInt64) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = seed ^ (UInt64(head) << 48 | UInt64(tail) << 32 | UInt64(body.count))
        hash = (hash ^ (hash >> 31)) &* multiplier
        guard let base = body.baseAddress else { return hash }
        let raw = UnsafeRawPointer(base)
        let byteCount = body.count * 2
        var offset = 0
        while offset + 8 <= byteCount {
            let word = raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = ((hash ^ word) &* multiplier).rotatedLeft(by: 29)
            offset += 8
        }
        if offset < byteCount {
            var word: UInt64 = 0
            var shift: UInt64 = 0
            while offset < byteCount {
                word |= UInt64(raw.load(fromByteOffset: offset, as: UInt16.self)) << shift
                shift += 16
                offset += 2
            }
            hash = ((hash ^ word) &* multiplier).rotatedLeft(by: 29)
        }
        hash ^= hash >> 32
        hash &*= 0xD6E8_FEB8_6659_FD93
        return hash ^ (hash >> 32)
    }

    /// The index slot a hash lands in first (0 when it is empty).
    func marker(hash: UInt64) -> UInt64 {
        index[Int(truncatingIfNeeded: hash) & mask]
    }

    /// The hash of the entry a slot marker points to, or 0 for an empty slot.
    func entryHash(marker: UInt64) -> UInt64 {
        marker == 0 ? 0 : entries[Int(truncatingIfNeeded: marker & 0xFFFF_FFFF) - 1].hash | 1
    }

    func value(hash: UInt64, head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16) -> Value? {
        let tag = hash >> 32
        return index.withUnsafeBufferPointer { index in
            entries.withUnsafeBufferPointer { entries in
                var slot = Int(truncatingIfNeeded: hash) & mask
                while true {
                    let marker = index[slot]
                    if marker == 0 { return nil }
                    if marker >> 32 == tag {
                        let entry = entries[Int(truncatingIfNeeded: marker & 0xFFFF_FFFF) - 1]
                        if entry.head == head && entry.tail == tail && Int(entry.bodyLength) == body.count
                            && bodyMatches(entry, body)
                        {
                            return entry.value
                        }
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    private func bodyMatches(_ entry: Entry, _ body: UnsafeBufferPointer<UInt16>) -> Bool {
        if body.count <= Self.inlineCapacity {
            let words = Self.inlineWords(body)
            return entry.word0 == words.0 && entry.word1 == words.1 && entry.word2 == words.2
        }
        return arena.withUnsafeBufferPointer { arena in
            memoryEqual(arena.baseAddress! + Int(entry.word0), body.baseAddress!, count: body.count)
        }
    }

    /// A short body packed into three words, unused units zero.
    private static func inlineWords(_ body: UnsafeBufferPointer<UInt16>) -> (UInt64, UInt64, UInt64) {
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        for (position, unit) in body.enumerated() {
            let shifted = UInt64(unit) << UInt64((position & 3) * 16)
            switch position >> 2 {
            case 0: words.0 |= shifted
            case 1: words.1 |= shifted
            default: words.2 |= shifted
            }
        }
        return words
    }

    mutating func insert(_ value: Value, hash: UInt64, head: UInt16, body: UnsafeBufferPointer<UInt16>, tail: UInt16) {
        if (entries.count + 1) * 2 > index.count { grow() }
        var words: (UInt64, UInt64, UInt64) = (UInt64(arena.count), 0, 0)
        if body.count <= Self.inlineCapacity {
            words = Self.inlineWords(body)
        } else {
            arena.append(contentsOf: body)
        }
        entries.append(
            Entry(
                hash: hash, head: head, tail: tail, bodyLength: UInt32(body.count), word0: words.0, word1: words.1,
                word2: words.2, value: value))
        place(hash: hash, position: entries.count)
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
