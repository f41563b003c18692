import ByteTools
import Synchronization

/// Whole texts' measurements, by measurer, available width, line limit and text: feeds repeat titles and captions,
/// and a server lays out a feed's new version whose texts it measured for the version before. A lookup costs a hash
/// of the text; measuring costs its shaping and line breaking.
///
/// Bounded by what its entries hold, not by their number: an entry costs about three times its text's UTF-8 (the
/// key's text and the measurement's UTF-16 content) and a fixed overhead. Two generations, as in ``BoundedCache``:
/// once the newer holds half of `byteLimit` it becomes the older, and the older is dropped; a hit in the older
/// moves the entry to the newer. Texts longer than ``maximumTextBytes`` are measured every time.
///
/// One cache may serve many measurers (``TextMeasurerCatalog`` shares one between its measurers): each measurer's
/// entries are its own, by the measurer's serial number.
public final class MeasurementCache: Sendable {
    /// The longest text, in UTF-8 bytes, the cache keeps.
    public static let maximumTextBytes = 8_192

    /// What the cache may hold, in bytes (approximately).
    public let byteLimit: Int

    private let state = Mutex(Generations())

    /// - Parameter byteLimit: What the entries may hold together, in bytes; 0 keeps nothing.
    public init(byteLimit: Int) {
        self.byteLimit = max(0, byteLimit)
    }

    /// The measurement for a key, made by `measure` (outside the cache's lock) unless the cache has it.
    func measurement(
        measurer: Int, available: Int, lineLimit: Int, text: String, measure: () -> TextMeasurement
    ) -> TextMeasurement {
        let textBytes = text.utf8.count
        guard byteLimit > 0, textBytes <= Self.maximumTextBytes else { return measure() }
        let key = Key(measurer: measurer, available: available, lineLimit: lineLimit, text: ExactText(text))
        if let known = state.withLock({ $0.value(for: key) }) { return known }
        let measured = measure()
        let cost = 3 * textBytes + Self.entryOverhead
        let generationLimit = byteLimit / 2
        state.withLock { $0.insert(measured, for: key, cost: cost, generationLimit: generationLimit) }
        return measured
    }

    /// What the cache holds now, in bytes as it counts them (tests check the bound).
    var heldBytes: Int { state.withLock { $0.recentCost + $0.olderCost } }

    /// An entry's cost besides its text: the dictionary slot, the measurement's fields and its arrays' headers.
    private static let entryOverhead = 160

    struct Key: Hashable, Sendable {
        let measurer: Int
        let available: Int
        let lineLimit: Int
        /// By its exact UTF-8: a composed and a decomposed "é" may shape differently.
        let text: ExactText
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

        mutating func insert(_ measurement: TextMeasurement, for key: Key, cost: Int, generationLimit: Int) {
            if let replaced = recent.updateValue((measurement, cost), forKey: key) {
                recentCost -= replaced.cost
            }
            recentCost += cost
            if recentCost >= generationLimit {
                older = recent
                olderCost = recentCost
                recent = [:]
                recentCost = 0
            }
        }
    }
}
