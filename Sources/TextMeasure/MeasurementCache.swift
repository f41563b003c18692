import ByteTools
import Synchronization

/// Whole texts' measurements, by measurer, available width, line limit and text: feeds repeat titles and captions,
/// and a server lays out a feed's new version whose texts it measured for the version before. A lookup costs a hash
/// of the text; measuring costs its shaping and line breaking.
///
/// Bounded by what its entries hold, not by their number: an entry costs about three times its text's UTF-8 (the
/// key's text and the measurement's UTF-16 content) and a fixed overhead. Two generations, as in ``BoundedCache``:
/// once the newer holds half of `byteLimit` it becomes the older, and the older is dropped; a hit in the older
/// moves the entry to the newer. Texts longer than ``maximumTextBytes`` are measured every time: hashing and keeping
/// a long caption costs a good part of measuring it, and a feed seldom repeats long ones.
///
/// One cache may serve many measurers (``TextMeasurerCatalog`` shares one between its measurers): each measurer's
/// entries are its own, by the measurer's serial number.
public final class MeasurementCache: Sendable {
    /// The longest text, in UTF-8 bytes, the cache keeps.
    public let maximumTextBytes: Int

    /// What the cache may hold, in bytes (approximately).
    public let byteLimit: Int
    /// Whether a full cache makes room for new entries (generations), or keeps what it has and takes no more.
    public let evicts: Bool

    private let state = Mutex(Generations())
    /// Set once a cache that does not evict is full: lookups go on, inserts stop without taking the lock.
    private let isFull = Atomic<Bool>(false)

    /// - Parameters:
    ///   - byteLimit: What the entries may hold together, in bytes; 0 keeps nothing.
    ///   - maximumTextBytes: The longest text kept, in UTF-8 bytes.
    ///   - evicts: Whether to make room for new entries once full (a server's measurers, which see feed after
    ///     feed), or keep the first ones (one run: titles and captions that repeat do so early; a feed of distinct
    ///     captions then costs one lookup each, not an insert and a release each).
    public init(byteLimit: Int, maximumTextBytes: Int = 512, evicts: Bool = true) {
        self.byteLimit = max(0, byteLimit)
        self.maximumTextBytes = maximumTextBytes
        self.evicts = evicts
    }

    /// The measurement for a key, made by `measure` (outside the cache's lock) unless the cache has it.
    func measurement(
        measurer: Int, available: Int, lineLimit: Int, text: String, measure: () -> TextMeasurement
    ) -> TextMeasurement {
        let textBytes = text.utf8.count
        guard byteLimit > 0, textBytes <= maximumTextBytes else { return measure() }
        let key = Key(measurer: measurer, available: available, lineLimit: lineLimit, text: ExactText(text))
        if let known = state.withLock({ $0.value(for: key) }) { return known }
        let measured = measure()
        let cost = 3 * textBytes + Self.entryOverhead
        if !evicts {
            guard !isFull.load(ordering: .relaxed) else { return measured }
            let full = state.withLock { state in
                guard state.recentCost + cost <= byteLimit else { return true }
                _ = state.insert(measured, for: key, cost: cost, generationLimit: Int.max)
                return false
            }
            if full { isFull.store(true, ordering: .relaxed) }
            return measured
        }
        let generationLimit = byteLimit / 2
        // A dropped generation is released after the lock: freeing thousands of entries inside it held every other
        // measuring thread up.
        let dropped = state.withLock { $0.insert(measured, for: key, cost: cost, generationLimit: generationLimit) }
        _ = consume dropped
        return measured
    }

    /// What the cache holds now, in bytes as it counts them (tests check the bound).
    var heldBytes: Int { state.withLock { $0.recentCost + $0.olderCost } }

    /// An entry's cost besides its text: the dictionary slot, the measurement's fields and its arrays' headers.
    private static let entryOverhead = 160

    /// Hashed once, when made: a lookup that misses the newer generation probes the older one and the insert that
    /// follows probes the newer again, so a new text's bytes were hashed three or four times (this made `layout` of
    /// 100,000 distinct captions slower than without the cache).
    struct Key: Hashable, Sendable {
        let measurer: Int
        let available: Int
        let lineLimit: Int
        /// By its exact UTF-8: a composed and a decomposed "é" may shape differently.
        let text: ExactText
        private let digest: Int

        init(measurer: Int, available: Int, lineLimit: Int, text: ExactText) {
            self.measurer = measurer
            self.available = available
            self.lineLimit = lineLimit
            self.text = text
            var hasher = Hasher()
            hasher.combine(measurer)
            hasher.combine(available)
            hasher.combine(lineLimit)
            hasher.combine(text)
            digest = hasher.finalize()
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.digest == rhs.digest && lhs.measurer == rhs.measurer && lhs.available == rhs.available
                && lhs.lineLimit == rhs.lineLimit && lhs.text == rhs.text
        }

        func hash(into hasher: inout Hasher) { hasher.combine(digest) }
    }

    private struct Generations {
        var recent: [Key: (measurement: TextMeasurement, cost: Int)] = [:]
        var older: [Key: (measurement: TextMeasurement, cost: Int)] = [:]
        var recentCost = 0
        var olderCost = 0

        mutating func value(for key: Key) -> TextMeasurement? {
            if let entry = recent[key] { return entry.measurement }
            guard let entry = older.removeValue(forKey: key) else { return nil }
            olderCost -= entry.cost
            // Promoted without a new limit check past this one: the next insert starts a generation if need be.
            recent[key] = entry
            recentCost += entry.cost
            return entry.measurement
        }

        /// Inserts an entry; returns the older generation when this insert ended it, for the caller to release.
        mutating func insert(
            _ measurement: TextMeasurement, for key: Key, cost: Int, generationLimit: Int
        ) -> [Key: (measurement: TextMeasurement, cost: Int)] {
            if let replaced = recent.updateValue((measurement, cost), forKey: key) {
                recentCost -= replaced.cost
            }
            recentCost += cost
            guard recentCost >= generationLimit else { return [:] }
            let dropped = older
            older = recent
            olderCost = recentCost
            recent = [:]
            recentCost = 0
            return dropped
        }
    }
}
