import Foundation
import LayoutPages
import Logging
import PostgresNIO

/// Feed subscriptions in the shared store: one row each (its state as JSON, with the columns its queries need, and
/// a lease), and its event log. A subscription is refreshed by one instance at a time, the holder of its lease (taken
/// as layouts' are: an owner and an expiry, taken over once it expires); a new event is announced on the layouts'
/// channel with the subscription's id, so every instance's event streams wake.
extension PostgresLayoutStore: SubscriptionStore {
    /// The subscriptions' schema steps, numbered from 101 (apart from the layouts' own steps).
    static let subscriptionMigrations: [Migration] = [
        Migration(
            101,
            [
                """
                CREATE TABLE feedlayout.feed_subscription (
                    id TEXT PRIMARY KEY,
                    created_micros BIGINT NOT NULL,
                    next_fetch_micros BIGINT NOT NULL,
                    kept_layouts TEXT,
                    revision BIGINT NOT NULL DEFAULT 0,
                    last_event_id BIGINT NOT NULL DEFAULT 0,
                    state TEXT NOT NULL,
                    lease_owner TEXT,
                    lease_expires TIMESTAMPTZ
                )
                """,
                "CREATE INDEX feed_subscription_by_creation ON feedlayout.feed_subscription (created_micros, id)",
                "CREATE INDEX feed_subscription_by_next_fetch ON feedlayout.feed_subscription (next_fetch_micros)",
                """
                CREATE TABLE feedlayout.feed_event (
                    subscription_id TEXT NOT NULL REFERENCES feedlayout.feed_subscription(id) ON DELETE CASCADE,
                    event_id BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    data TEXT NOT NULL,
                    PRIMARY KEY (subscription_id, event_id)
                )
                """,
            ])
    ]

    func insertSubscription(_ subscription: FeedSubscription) async throws -> Bool {
        let state = try subscription.storedJSON()
        let created = subscription.createdAt.microsecondsSince1970
        let next = subscription.nextFetch.microsecondsSince1970
        let kept = subscription.keptLayoutsText
        let id = subscription.id
        return try await operation { [client, logger] in
            try await !client.query(
                """
                INSERT INTO feedlayout.feed_subscription (id, created_micros, next_fetch_micros, kept_layouts, state)
                VALUES (\(id), \(created), \(next), \(kept), \(state))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger
            ).collect().isEmpty
        }
    }

    func subscription(_ id: String) async throws -> FeedSubscription? {
        let rows = try await operation { [client, logger] in
            var rows: [(String, Int64)] = []
            for try await row in try await client.query(
                "SELECT state, revision FROM feedlayout.feed_subscription WHERE id = \(id)", logger: logger
            ).decode((String, Int64).self) {
                rows.append(row)
            }
            return rows
        }
        guard let (state, revision) = rows.first else { return nil }
        return try decoded(state, revision: revision, id: id)
    }

    private func decoded(_ state: String, revision: Int64, id: String) throws -> FeedSubscription {
        do {
            return try FeedSubscription.stored(state, revision: Int(revision))
        } catch {
            throw StoreError(.damaged, "\(displayURL): the state of feed subscription \(id) is damaged: \(error)")
        }
    }

    func listSubscriptions(after cursor: LayoutListCursor?, limit: Int) async throws -> [FeedSubscription] {
        let afterMicros = cursor?.createdMicroseconds ?? Int64.min
        let afterID = cursor?.id ?? ""
        let rows = try await operation { [client, logger] in
            var rows: [(String, String, Int64)] = []
            for try await row in try await client.query(
                """
                SELECT id, state, revision FROM feedlayout.feed_subscription
                WHERE (created_micros, id) > (\(afterMicros), \(afterID))
                ORDER BY created_micros, id LIMIT \(limit)
                """, logger: logger
            ).decode((String, String, Int64).self) {
                rows.append(row)
            }
            return rows
        }
        return try rows.map { try decoded($0.1, revision: $0.2, id: $0.0) }
    }

    func removeSubscription(_ id: String) async throws -> Bool {
        try await operation { [client, logger] in
            try await !client.query(
                "DELETE FROM feedlayout.feed_subscription WHERE id = \(id) RETURNING id", logger: logger
            ).collect().isEmpty
        }
    }

    func updateSubscription(
        _ subscription: FeedSubscription, expectedRevision: Int, event: FeedEventDraft?
    ) async throws -> Bool {
        let state = try subscription.storedJSON()
        let next = subscription.nextFetch.microsecondsSince1970
        let kept = subscription.keptLayoutsText
        let id = subscription.id
        let revision = Int64(expectedRevision)
        let addsEvent: Int64 = event == nil ? 0 : 1
        return try await operation { [client, logger] in
            try await client.withTransaction(logger: logger) { connection in
                var eventIds: [Int64] = []
                for try await eventId in try await connection.query(
                    """
                    UPDATE feedlayout.feed_subscription
                    SET state = \(state), next_fetch_micros = \(next), kept_layouts = \(kept),
                        revision = revision + 1, last_event_id = last_event_id + \(addsEvent)
                    WHERE id = \(id) AND revision = \(revision)
                    RETURNING last_event_id
                    """, logger: logger
                ).decode(Int64.self) {
                    eventIds.append(eventId)
                }
                guard let eventId = eventIds.first else { return false }
                if let event {
                    try await connection.query(
                        """
                        INSERT INTO feedlayout.feed_event (subscription_id, event_id, kind, data)
                        VALUES (\(id), \(eventId), \(event.kind), \(event.data))
                        """, logger: logger)
                    try await connection.query("SELECT pg_notify(\(Self.channel), \(id))", logger: logger)
                }
                return true
            }
        }
    }

    func subscriptionEvents(_ id: String, after: Int, limit: Int) async throws -> [FeedEvent] {
        let afterId = Int64(after)
        return try await operation { [client, logger] in
            var events: [FeedEvent] = []
            for try await (eventId, kind, data) in try await client.query(
                """
                SELECT event_id, kind, data FROM feedlayout.feed_event
                WHERE subscription_id = \(id) AND event_id > \(afterId) ORDER BY event_id LIMIT \(limit)
                """, logger: logger
            ).decode((Int64, String, String).self) {
                events.append(FeedEvent(id: Int(eventId), kind: kind, data: data))
            }
            return events
        }
    }

    func dueSubscriptions(at time: Date, limit: Int) async throws -> [(id: String, nextFetch: Date)] {
        let micros = time.microsecondsSince1970
        return try await operation { [client, logger, owner] in
            var due: [(id: String, nextFetch: Date)] = []
            for try await (id, next) in try await client.query(
                """
                SELECT id, next_fetch_micros FROM feedlayout.feed_subscription
                WHERE next_fetch_micros <= \(micros)
                    AND (lease_owner IS NULL OR lease_owner = \(owner) OR lease_expires < clock_timestamp())
                ORDER BY next_fetch_micros, id LIMIT \(limit)
                """, logger: logger
            ).decode((String, Int64).self) {
                due.append((id, Date(microsecondsSince1970: next)))
            }
            return due
        }
    }

    func claimSubscription(_ id: String) async throws -> Bool {
        let seconds = leaseDuration.seconds
        return try await operation { [client, logger, owner] in
            try await !client.query(
                """
                UPDATE feedlayout.feed_subscription
                SET lease_owner = \(owner), lease_expires = clock_timestamp() + \(seconds) * interval '1 second'
                WHERE id = \(id) AND (lease_owner IS NULL OR lease_owner = \(owner) OR lease_expires < clock_timestamp())
                RETURNING id
                """, logger: logger
            ).collect().isEmpty
        }
    }

    func releaseSubscription(_ id: String) async {
        _ = try? await operation { [client, logger, owner] in
            try await client.query(
                """
                UPDATE feedlayout.feed_subscription SET lease_owner = NULL, lease_expires = NULL
                WHERE id = \(id) AND lease_owner = \(owner)
                """, logger: logger)
        }
    }

    func subscriptionLayouts() async throws -> Set<String> {
        let rows = try await operation { [client, logger] in
            var rows: [String] = []
            for try await kept in try await client.query(
                "SELECT kept_layouts FROM feedlayout.feed_subscription WHERE kept_layouts IS NOT NULL", logger: logger
            ).decode(String.self) {
                rows.append(kept)
            }
            return rows
        }
        return Set(rows.flatMap { $0.split(separator: " ").map(String.init) })
    }
}
