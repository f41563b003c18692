import Foundation
import Logging
import PostgresNIO

/// Listing, sizing and removing layouts in the shared store.
extension PostgresLayoutStore {
    func removeLayout(_ id: String) async throws -> Bool {
        // One transaction: the rows others reference are handed over (PostgresLayoutStore+Sharing), then the
        // layout's row goes, and with it (ON DELETE CASCADE) its parts, pages, pins, feed chunks and references.
        // An instance computing it finds no row it holds at its next page and stops (a lost lease); the
        // notifications wake the requests waiting for it on every instance, which then find nothing, and make every
        // instance forget what it holds of it in memory (``watchRemovals(_:)``).
        try await operation { [client, logger] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.removeLayout(id, connection: connection, logger: logger)
            }
        }
    }

    /// The advisory lock removals take, one at a time across instances (any fixed number other than the
    /// migrations').
    private static let removalLock = 4_242_018

    private static func removeLayout(_ id: String, connection: PostgresConnection, logger: Logger) async throws -> Bool
    {
        try await connection.query("SELECT pg_advisory_xact_lock(\(removalLock))", logger: logger)
        // Held from here: a reference being added to its rows commits first, a later one waits and finds it gone.
        guard
            try await !connection.query(
                "SELECT 1 FROM feedlayout.layout WHERE id = \(id) FOR UPDATE", logger: logger
            ).collect().isEmpty
        else { return false }
        try await handOverShares(of: id, .pages, connection: connection, logger: logger)
        try await handOverShares(of: id, .feedChunks, connection: connection, logger: logger)
        for try await count in try await connection.query(
            """
            WITH removed AS (DELETE FROM feedlayout.layout WHERE id = \(id) RETURNING id)
            SELECT count(*)::int8,
                CASE WHEN count(*) > 0 THEN pg_notify(\(Self.channel), \(id)) END,
                CASE WHEN count(*) > 0 THEN pg_notify(\(Self.removalChannel), \(id)) END
            FROM removed
            """, logger: logger
        ).decode((Int, String?, String?).self) {
            return count.0 > 0
        }
        return false
    }

    /// The channel of removals' notifications (the layout's id).
    static let removalChannel = "feedlayout_removed"

    /// Listens for removals by any instance; a lost connection is opened again, and then announced as `nil`.
    func watchRemovals(_ removed: @escaping @Sendable (String?) async -> Void) async {
        var isAgain = false
        while !Task.isCancelled {
            // Listening again: removals may have been missed meanwhile.
            let announcesGap = isAgain
            isAgain = true
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.removalChannel) { notifications in
                        if announcesGap { await removed(nil) }
                        for try await notification in notifications { await removed(notification.payload) }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.debug("listening for layout removals again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    /// The columns of a listing: times in whole microseconds since 1970, each layout's bytes summed from its parts.
    private static let listingColumns = """
        SELECT id, status, item_count,
            (extract(epoch FROM created_at) * 1000000)::int8,
            (extract(epoch FROM last_read_at) * 1000000)::int8,
            feed_bytes + coalesce((SELECT sum(stored_bytes) FROM feedlayout.part WHERE part.layout_id = layout.id), 0)::int8
        FROM feedlayout.layout
        """

    private func listings(_ query: PostgresQuery) async throws -> [LayoutListing] {
        try await operation { [client, logger] in
            var listings: [LayoutListing] = []
            for try await (id, status, items, created, lastRead, bytes) in try await client.query(query, logger: logger)
                .decode((String, String, Int, Int64, Int64?, Int).self)
            {
                listings.append(
                    LayoutListing(
                        id: id, status: status, itemCount: items, bytes: bytes, createdMicroseconds: created,
                        lastReadMicroseconds: lastRead))
            }
            return listings
        }
    }

    func listLayouts(after cursor: LayoutListCursor?, limit: Int) async throws -> [LayoutListing] {
        let query: PostgresQuery
        if let cursor {
            // The cursor's time, exactly: timestamps are whole microseconds (an int8 inside PostgreSQL).
            query = """
                \(unescaped: Self.listingColumns)
                WHERE (created_at, id)
                    > (timestamptz 'epoch' + \(cursor.createdMicroseconds)::int8 * interval '1 microsecond', \(cursor.id))
                ORDER BY created_at, id LIMIT \(limit)
                """
        } else {
            query = "\(unescaped: Self.listingColumns) ORDER BY created_at, id LIMIT \(limit)"
        }
        return try await listings(query)
    }

    func recordReads(_ ids: [String], at time: Date) async throws {
        guard !ids.isEmpty else { return }
        let micros = time.microsecondsSince1970
        try await operation { [client, logger] in
            try await client.query(
                """
                UPDATE feedlayout.layout
                SET last_read_at = greatest(last_read_at, timestamptz 'epoch' + \(micros)::int8 * interval '1 microsecond')
                WHERE id = ANY(\(ids)::text[])
                """, logger: logger)
        }
    }

    func usage() async throws -> StoreUsage {
        try await operation { [client, logger] in
            var byStatus: [String: Int] = [:]
            for try await (status, count) in try await client.query(
                "SELECT status, count(*)::int8 FROM feedlayout.layout GROUP BY status", logger: logger
            ).decode((String, Int).self) {
                byStatus[status] = count
            }
            var bytes = 0
            for try await total in try await client.query(
                """
                SELECT (SELECT coalesce(sum(feed_bytes), 0) FROM feedlayout.layout)::int8
                    + (SELECT coalesce(sum(stored_bytes), 0) FROM feedlayout.part)::int8
                """, logger: logger
            ).decode(Int.self) {
                bytes = total
            }
            return StoreUsage(bytes: bytes, layoutsByStatus: byStatus)
        }
    }

    func removableLayouts(limit: Int) async throws -> [LayoutListing] {
        try await listings(
            """
            \(unescaped: Self.listingColumns)
            WHERE status <> 'running' ORDER BY coalesce(last_read_at, created_at), created_at, id LIMIT \(limit)
            """)
    }
}
