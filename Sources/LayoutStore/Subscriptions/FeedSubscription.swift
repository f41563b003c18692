import Foundation

/// Where the service keeps its feed subscriptions (`POST /v1/feeds`): each one's request, its refresh state, its
/// versions (ordinary layouts) and a log of events with increasing ids, for `GET /v1/feeds/{id}/events` and its
/// `Last-Event-ID` replay. Both stores keep them, with the same semantics.
///
/// A subscription's state is written whole, guarded by its ``FeedSubscription/revision``: a write made from an older
/// read changes nothing (``updateSubscription(_:expectedRevision:event:)`` returns `false`), so two writers (two
/// instances sharing a store, or a refresh and a `DELETE`) never undo each other's work.
public protocol SubscriptionStore: Sendable {
    /// Stores a new subscription, unless one with its id exists.
    /// - Returns: Whether it was new.
    func insertSubscription(_ subscription: FeedSubscription) async throws -> Bool

    func subscription(_ id: String) async throws -> FeedSubscription?

    /// Subscriptions in the order they were created (then by id), after `cursor`, at most `limit`.
    func listSubscriptions(after cursor: LayoutListCursor?, limit: Int) async throws -> [FeedSubscription]

    /// Removes a subscription and its events (its versions stay, as ordinary layouts).
    /// - Returns: Whether there was one.
    func removeSubscription(_ id: String) async throws -> Bool

    /// Writes a subscription's state if it is still at `expectedRevision` (its revision then goes up by one), and
    /// appends `event`, with the subscription's next event id, in the same transaction.
    /// - Returns: Whether it was written (`false`: it changed meanwhile, or is gone).
    func updateSubscription(
        _ subscription: FeedSubscription, expectedRevision: Int, event: FeedEventDraft?
    ) async throws -> Bool

    /// A subscription's events after the event `after` (0: from the first), oldest first, at most `limit`.
    func subscriptionEvents(_ id: String, after: Int, limit: Int) async throws -> [FeedEvent]

    /// The subscriptions whose next fetch is at or before `time` and that no other instance refreshes now, with
    /// that time, soonest first, at most `limit`.
    func dueSubscriptions(at time: Date, limit: Int) async throws -> [(id: String, nextFetch: Date)]

    /// Takes the right to refresh a subscription (with a shared store, a lease another instance takes over once it
    /// expires); `false` when another instance holds it.
    func claimSubscription(_ id: String) async throws -> Bool

    /// Gives that right up.
    func releaseSubscription(_ id: String) async

    /// The layouts that are the newest version (finished or being made) of a subscription: never evicted.
    func subscriptionLayouts() async throws -> Set<String>
}

/// A subscription: a feed URL the service fetches again and again, with the options of its layouts.
public struct FeedSubscription: Sendable, Codable, Equatable {
    /// A digest of the feed URL and the options (with what else decides a layout id): the same request has the same
    /// id in every process.
    public var id: String
    public var feedURL: String
    /// The layout options, as their stored JSON (`LayoutOptionValues.storedJSON(_:)`).
    public var options: String
    /// The least and most time between two fetches, in seconds.
    public var minSeconds: Int
    public var maxSeconds: Int
    public var createdAt: Date
    /// The validators of the last `200`, sent again as `If-None-Match` and `If-Modified-Since`.
    public var entityTag: String?
    public var lastModified: String?
    public var lastFetch: FeedFetchRecord?
    public var nextFetch: Date
    /// Fetches that failed in a row (0 after a good one): the backoff's exponent.
    public var failureCount: Int
    /// The versions whose first page is stored, newest first.
    public var versions: [FeedVersion]
    /// A version whose layout has started and has no page stored yet: it joins ``versions`` (and its `version`
    /// event is sent) when its first page is stored.
    public var pending: FeedVersion?
    /// The feed's own refresh hint (RSS `<ttl>`, `sy:updatePeriod`) in seconds, from its last `200`: a `304` keeps
    /// it.
    public var feedHintSeconds: Int?
    /// The SHA-256 of the newest version's feed bytes (pending or not): the same bytes make no new version.
    public var feedDigest: String?
    /// Bumped by every write (set by the store; see ``SubscriptionStore``).
    public var revision: Int

    public init(
        id: String, feedURL: String, options: String, minSeconds: Int, maxSeconds: Int, createdAt: Date,
        nextFetch: Date
    ) {
        self.id = id
        self.feedURL = feedURL
        self.options = options
        self.minSeconds = minSeconds
        self.maxSeconds = maxSeconds
        self.createdAt = createdAt
        self.nextFetch = nextFetch
        failureCount = 0
        versions = []
        revision = 0
    }

    /// The newest version's layout: the one a refresh compares the new feed with.
    public var newestLayout: String? { pending?.layoutId ?? versions.first?.layoutId }

    /// The layouts never evicted while the subscription lives: the one being made and the two newest versions (the
    /// newest may still be being laid out, and the one before is then the latest finished one).
    public var keptLayouts: [String] { (pending.map { [$0.layoutId] } ?? []) + versions.prefix(2).map(\.layoutId) }

    /// ``keptLayouts`` as the stores keep them, in one column.
    var keptLayoutsText: String? { keptLayouts.isEmpty ? nil : keptLayouts.joined(separator: " ") }

    /// The state as the stores keep it (JSON; dates as seconds since 1970).
    public func storedJSON() throws -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    public static func stored(_ json: String, revision: Int) throws -> FeedSubscription {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        var subscription = try decoder.decode(FeedSubscription.self, from: Data(json.utf8))
        subscription.revision = revision
        return subscription
    }
}

/// What the last fetch of a subscription's feed gave.
public struct FeedFetchRecord: Sendable, Codable, Equatable {
    public var time: Date
    /// The HTTP status, when a server answered.
    public var status: Int?
    /// The body's bytes (`200` only).
    public var bytes: Int?
    /// The problem type of a failure (`feed-unreachable`, `not-a-feed`, …), and what went wrong.
    public var errorType: String?
    public var errorMessage: String?

    public init(time: Date, status: Int?, bytes: Int?, errorType: String? = nil, errorMessage: String? = nil) {
        self.time = time
        self.status = status
        self.bytes = bytes
        self.errorType = errorType
        self.errorMessage = errorMessage
    }
}

/// One version of a subscription: an ordinary layout, and what changed since the version before.
public struct FeedVersion: Sendable, Codable, Equatable {
    public var layoutId: String
    public var items: Int
    public var fetchedAt: Date
    public var added: Int
    public var removed: Int
    public var changed: Int

    public init(layoutId: String, items: Int, fetchedAt: Date, added: Int, removed: Int, changed: Int) {
        self.layoutId = layoutId
        self.items = items
        self.fetchedAt = fetchedAt
        self.added = added
        self.removed = removed
        self.changed = changed
    }
}

/// An event about to be logged: its kind (`version`, `failed`) and its data (one line of JSON).
public struct FeedEventDraft: Sendable, Equatable {
    public var kind: String
    public var data: String

    public init(kind: String, data: String) {
        self.kind = kind
        self.data = data
    }
}

/// An event as logged, with its id (1, 2, … for each subscription).
public struct FeedEvent: Sendable, Equatable {
    public var id: Int
    public var kind: String
    public var data: String

    public init(id: Int, kind: String, data: String) {
        self.id = id
        self.kind = kind
        self.data = data
    }
}
