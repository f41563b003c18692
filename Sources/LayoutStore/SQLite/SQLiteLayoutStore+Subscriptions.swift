import Foundation
import GRDB

/// Feed subscriptions in the SQLite store: one row each (its state as JSON, with the columns its queries need) and
/// its event log. One process holds the store, so claiming a subscription always succeeds.
extension SQLiteLayoutStore: SubscriptionStore {
    static func registerSubscriptionMigrations(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("feed-subscriptions") { db in
            try db.execute(
                sql: """
                    CREATE TABLE feed_subscription (
                        id TEXT PRIMARY KEY,
                        createdMicroseconds INTEGER NOT NULL,
                        nextFetchMicroseconds INTEGER NOT NULL,
                        keptLayouts TEXT,
                        revision INTEGER NOT NULL DEFAULT 0,
                        lastEventId INTEGER NOT NULL DEFAULT 0,
                        state TEXT NOT NULL
                    );
                    CREATE INDEX feed_subscription_by_creation ON feed_subscription (createdMicroseconds, id);
                    CREATE INDEX feed_subscription_by_next_fetch ON feed_subscription (nextFetchMicroseconds);
                    CREATE TABLE feed_event (
                        subscriptionId TEXT NOT NULL REFERENCES feed_subscription(id) ON DELETE CASCADE,
                        eventId INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        data TEXT NOT NULL,
                        PRIMARY KEY (subscriptionId, eventId)
                    ) WITHOUT ROWID;
                    """)
        }
    }

    func insertSubscription(_ subscription: FeedSubscription) async throws -> Bool {
        let state = try subscription.storedJSON()
        return try await writing { db in
            try db.execute(
                sql: """
                    INSERT INTO feed_subscription (id, createdMicroseconds, nextFetchMicroseconds, keptLayouts, state)
                    VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING
                    """,
                arguments: [
                    subscription.id, subscription.createdAt.microsecondsSince1970,
                    subscription.nextFetch.microsecondsSince1970, subscription.keptLayoutsText, state,
                ])
            return db.changesCount > 0
        }
    }

    func subscription(_ id: String) async throws -> FeedSubscription? {
        let row = try await reading { db -> (state: String, revision: Int)? in
            try Row.fetchOne(db, sql: "SELECT state, revision FROM feed_subscription WHERE id = ?", arguments: [id])
                .map { (state: $0["state"], revision: $0["revision"]) }
        }
        guard let row else { return nil }
        return try decoded(row.state, revision: row.revision, id: id)
    }

    private func decoded(_ state: String, revision: Int, id: String) throws -> FeedSubscription {
        do {
            return try FeedSubscription.stored(state, revision: revision)
        } catch {
            throw StoreError(.damaged, "\(path): the state of feed subscription \(id) is damaged: \(error)")
        }
    }

    func listSubscriptions(after cursor: LayoutListCursor?, limit: Int) async throws -> [FeedSubscription] {
        let rows = try await reading { db -> [(id: String, state: String, revision: Int)] in
            let found: [Row]
            if let cursor {
                found = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT id, state, revision FROM feed_subscription
                        WHERE (createdMicroseconds, id) > (?, ?) ORDER BY createdMicroseconds, id LIMIT ?
                        """, arguments: [cursor.createdMicroseconds, cursor.id, limit])
            } else {
                found = try Row.fetchAll(
                    db,
                    sql: "SELECT id, state, revision FROM feed_subscription ORDER BY createdMicroseconds, id LIMIT ?",
                    arguments: [limit])
            }
            return found.map { (id: $0["id"], state: $0["state"], revision: $0["revision"]) }
        }
        return try rows.map { try decoded($0.state, revision: $0.revision, id: $0.id) }
    }

    func removeSubscription(_ id: String) async throws -> Bool {
        try await writing { db in
            try db.execute(sql: "DELETE FROM feed_event WHERE subscriptionId = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM feed_subscription WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    func updateSubscription(
        _ subscription: FeedSubscription, expectedRevision: Int, event: FeedEventDraft?
    ) async throws -> Bool {
        let state = try subscription.storedJSON()
        return try await writing { db in
            try db.execute(
                sql: """
                    UPDATE feed_subscription
                    SET state = ?, nextFetchMicroseconds = ?, keptLayouts = ?, revision = revision + 1,
                        lastEventId = lastEventId + ?
                    WHERE id = ? AND revision = ?
                    """,
                arguments: [
                    state, subscription.nextFetch.microsecondsSince1970, subscription.keptLayoutsText,
                    event == nil ? 0 : 1, subscription.id, expectedRevision,
                ])
            guard db.changesCount > 0 else { return false }
            if let event {
                try db.execute(
                    sql: """
                        INSERT INTO feed_event (subscriptionId, eventId, kind, data)
                        SELECT id, lastEventId, ?, ? FROM feed_subscription WHERE id = ?
                        """, arguments: [event.kind, event.data, subscription.id])
            }
            return true
        }
    }

    func subscriptionEvents(_ id: String, after: Int, limit: Int) async throws -> [FeedEvent] {
        try await reading { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT eventId, kind, data FROM feed_event WHERE subscriptionId = ? AND eventId > ?
                    ORDER BY eventId LIMIT ?
                    """, arguments: [id, after, limit]
            ).map { FeedEvent(id: $0["eventId"], kind: $0["kind"], data: $0["data"]) }
        }
    }

    func dueSubscriptions(at time: Date, limit: Int) async throws -> [(id: String, nextFetch: Date)] {
        try await reading { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, nextFetchMicroseconds FROM feed_subscription WHERE nextFetchMicroseconds <= ?
                    ORDER BY nextFetchMicroseconds, id LIMIT ?
                    """, arguments: [time.microsecondsSince1970, limit]
            ).map { (id: $0["id"], nextFetch: Date(microsecondsSince1970: $0["nextFetchMicroseconds"])) }
        }
    }

    func claimSubscription(_ id: String) async throws -> Bool { true }

    func releaseSubscription(_ id: String) async {}

    func subscriptionLayouts() async throws -> Set<String> {
        let rows = try await reading { db in
            try String.fetchAll(db, sql: "SELECT keptLayouts FROM feed_subscription WHERE keptLayouts IS NOT NULL")
        }
        return Set(rows.flatMap { $0.split(separator: " ").map(String.init) })
    }
}
