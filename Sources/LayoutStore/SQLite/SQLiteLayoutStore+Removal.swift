import Foundation
import GRDB

/// Listing, sizing and removing layouts in the SQLite store.
extension SQLiteLayoutStore {
    /// A creation time for a new layout: now, in whole microseconds, as a listing's cursor names it (the double
    /// `micros / 1e6`, which the cursor's comparison computes the same way).
    static func creationTime(_ date: Date = Date()) -> Double {
        Double(date.microsecondsSince1970) / 1_000_000
    }

    func removeLayout(_ id: String) async throws -> Bool {
        // The rows in one transaction, children first (the store does not rely on foreign keys' cascades).
        let removed = try await writing { db in
            try Self.handOverSharedPages(of: id, db)
            for table in ["page_share", "pin_block", "page", "part", "feed"] {
                try db.execute(sql: "DELETE FROM \(table) WHERE layoutId = ?", arguments: [id])
            }
            try db.execute(sql: "DELETE FROM layout WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
        guard removed else { return false }
        // Then the file, while holding the writer and only if no row names it: the same feed posted again meanwhile
        // has written its file and may be about to commit its row (which, holding the writer, checks that the file
        // is still there). A kill before this leaves a file no row names, which the next start removes.
        let feeds = self.feeds
        try await writing { db in
            let named = try Bool.fetchOne(db, sql: "SELECT 1 FROM layout WHERE id = ?", arguments: [id]) ?? false
            if !named { feeds.remove(id: id) }
        }
        return true
    }

    /// The columns of a listing, each layout's bytes summed from its parts.
    private static let listingColumns = """
        SELECT id, status, itemCount, createdAt, lastReadAt,
            feedBytes + coalesce((SELECT sum(storedBytes) FROM part WHERE part.layoutId = layout.id), 0) AS bytes
        FROM layout
        """

    private static func listing(_ row: Row) -> LayoutListing {
        LayoutListing(
            id: row["id"], status: row["status"], itemCount: row["itemCount"], bytes: row["bytes"],
            createdMicroseconds: Date(timeIntervalSince1970: row["createdAt"]).microsecondsSince1970,
            lastReadMicroseconds: (row["lastReadAt"] as Double?).map {
                Date(timeIntervalSince1970: $0).microsecondsSince1970
            })
    }

    func listLayouts(after cursor: LayoutListCursor?, limit: Int) async throws -> [LayoutListing] {
        try await reading { db in
            let rows: [Row]
            if let cursor {
                let created = Double(cursor.createdMicroseconds) / 1_000_000
                rows = try Row.fetchAll(
                    db,
                    sql: Self.listingColumns
                        + " WHERE createdAt > ? OR (createdAt = ? AND id > ?) ORDER BY createdAt, id LIMIT ?",
                    arguments: [created, created, cursor.id, limit])
            } else {
                rows = try Row.fetchAll(
                    db, sql: Self.listingColumns + " ORDER BY createdAt, id LIMIT ?", arguments: [limit])
            }
            return rows.map(Self.listing)
        }
    }

    /// This process is the store's only one: it knows what it removes.
    func watchRemovals(_ removed: @escaping @Sendable (String?) async -> Void) async {}

    func recordReads(_ ids: [String], at time: Date) async throws {
        guard !ids.isEmpty else { return }
        let seconds = time.timeIntervalSince1970
        try await writing { db in
            let update = try db.cachedStatement(
                sql: "UPDATE layout SET lastReadAt = max(coalesce(lastReadAt, 0), ?) WHERE id = ?")
            for id in ids { try update.execute(arguments: [seconds, id]) }
        }
    }

    func usage() async throws -> StoreUsage {
        try await reading { db in
            var byStatus: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT status, count(*) AS count FROM layout GROUP BY status") {
                byStatus[row["status"]] = row["count"]
            }
            let feeds = try Int.fetchOne(db, sql: "SELECT coalesce(sum(feedBytes), 0) FROM layout") ?? 0
            let parts = try Int.fetchOne(db, sql: "SELECT coalesce(sum(storedBytes), 0) FROM part") ?? 0
            return StoreUsage(bytes: feeds + parts, layoutsByStatus: byStatus)
        }
    }

    func removableLayouts(limit: Int) async throws -> [LayoutListing] {
        try await reading { db in
            try Row.fetchAll(
                db,
                sql: Self.listingColumns
                    + " WHERE status <> 'running' ORDER BY coalesce(lastReadAt, createdAt), createdAt, id LIMIT ?",
                arguments: [limit]
            ).map(Self.listing)
        }
    }
}
