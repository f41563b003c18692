/// A dictionary that never holds more than about twice `limit` entries.
///
/// Two generations: lookups that hit the old generation are promoted to the new one, and
/// when the new generation reaches `limit` the old one is dropped. That keeps what is in
/// use (the words of the current feed) at the cost of a few recomputations, without the
/// bookkeeping of a true LRU list.
struct BoundedCache<Key: Hashable, Value> {
    private var recent: [Key: Value] = [:]
    private var older: [Key: Value] = [:]
    let limit: Int

    init(limit: Int) {
        precondition(limit > 0, "a cache needs room for at least one entry")
        self.limit = limit
    }

    /// The number of entries held across both generations.
    var count: Int { recent.count + older.count }

    subscript(key: Key) -> Value? {
        mutating get {
            if let value = recent[key] { return value }
            guard let value = older.removeValue(forKey: key) else { return nil }
            insert(value, for: key)
            return value
        }
        set {
            if let newValue { insert(newValue, for: key) } else { recent[key] = nil; older[key] = nil }
        }
    }

    private mutating func insert(_ value: Value, for key: Key) {
        if recent.count >= limit {
            older = recent
            recent = [:]
            recent.reserveCapacity(limit)
        }
        recent[key] = value
    }
}
