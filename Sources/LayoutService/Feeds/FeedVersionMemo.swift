import ByteTools
import FeedIngest

/// What the refresher holds in memory of each subscription's newest version, so that a new version that only
/// appends items (``FeedAppend``) costs only what it appends: the version's layout, its feed's digest and shape
/// (``FeedAppend/Shape``: tested against the new feed without reading the old one back), and its items' identities
/// (``FeedItemChanges``: counted from the appended items alone, each key looked up among the held ones).
///
/// Without them (a restart, another instance made the version before, a JSON Feed, a key seen before) the old feed
/// is read back and both are read whole; the answers are the same either way, only slower.
///
/// Bounded: at most ``maximumSubscriptions`` subscriptions and ``maximumEntries`` keys and item starts in all, the
/// least recently used dropped first.
struct FeedVersionMemo {
    static let maximumSubscriptions = 64
    static let maximumEntries = 4_000_000

    /// One version's items: how many, and their keys' hashes (this process's `Hasher`; a hash two keys share only
    /// sends a count the slow way).
    struct Items: Sendable {
        var count: Int
        var hashes: Set<Int>
        /// Whether these were counted from the appended items alone.
        var fromAppendix = false

        init(_ items: [FeedItemChanges.Item]) {
            count = items.count
            hashes = Set(items.map(\.key.hashValue))
        }
    }

    /// One subscription's newest version.
    struct Version {
        var layoutId: String
        var feedDigest: String
        var shape: FeedAppend.Shape?
        var items: Items
        var used: UInt64 = 0

        var entries: Int { items.hashes.count + (shape?.itemStarts?.count ?? 0) }
    }

    private var held: [String: Version] = [:]
    private var uses: UInt64 = 0

    /// The shape of the subscription's newest version when it is `layoutId` and it is held: what the digests of
    /// the next fetch are computed against (``FeedAppend/ArrivingDigests``).
    func shape(subscription: String, newest layoutId: String?) -> FeedAppend.Shape? {
        guard let layoutId, let known = held[subscription], known.layoutId == layoutId else { return nil }
        return known.shape
    }

    /// `feed`, whose digests were computed against ``shape(subscription:newest:)``, against the subscription's
    /// newest version when it is `layoutId` and its shape is held: whether it is that version's feed with items
    /// appended; `nil` when it is not, or nothing is held for it.
    func match(
        _ feed: [UInt8], digests: FeedAppend.ArrivingDigests.Digests, subscription: String, newest layoutId: String?
    ) -> FeedAppend.Match? {
        guard let layoutId, let known = held[subscription], known.layoutId == layoutId, let shape = known.shape else {
            return nil
        }
        return FeedAppend.match(shape: shape, digest: known.feedDigest, new: feed, digests: digests)
    }

    /// The changes and items of a new version whose feed is `predecessor`'s with `match`'s items appended, when
    /// `predecessor`'s items are held and no appended item's key is among them (or repeats among the appended).
    func appending(
        _ match: FeedAppend.Match, of feed: [UInt8], to predecessor: String, subscription: String, name: String,
        base: String?
    ) async -> (changes: FeedItemChanges, items: Items)? {
        guard let known = held[subscription], known.layoutId == predecessor, let start = match.firstAppendedStart,
            let appendix = FeedByteSplitter.resumedFeed(feed, atItemStart: start, knownLines: match.knownLines),
            let appended = await FeedItemChanges.items(of: appendix, name: name, base: base),
            appended.count == match.appendedItems
        else { return nil }
        var items = known.items
        for item in appended {
            guard items.hashes.insert(item.key.hashValue).inserted else { return nil }
        }
        items.count += appended.count
        items.fromAppendix = true
        return (FeedItemChanges(added: appended.count), items)
    }

    /// Holds `version` as the subscription's newest.
    mutating func keep(_ version: Version, subscription: String) {
        uses += 1
        var version = version
        version.used = uses
        held[subscription] = version
        var total = held.values.reduce(0) { $0 + $1.entries }
        while held.count > Self.maximumSubscriptions || total > Self.maximumEntries,
            let oldest = held.min(by: { $0.value.used < $1.value.used })
        {
            total -= oldest.value.entries
            held[oldest.key] = nil
        }
    }
}
