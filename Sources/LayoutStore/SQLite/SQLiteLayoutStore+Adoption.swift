import Foundation
import GRDB

/// A new version of a feed taking an older version's pages (see ``LayoutStore/adoptPages(from:pageCount:into:)``),
/// by reference: the pages' rows stay where they are and a `page_share` row says whose they are.
///
/// A layout's pages (of one layout index) are then ranges of other layouts' rows, each `pageStart..<pageEnd` of its
/// `ownerId`, followed by the rows it stored itself; the ranges cover `0..<n` without gaps. Adopting from a layout
/// takes its ranges (cut at the page count) and the rest from its own rows, so a range always names the layout that
/// holds the rows. Copying the 29 MB of page and pin-block rows of a 100,000-pin feed took about 300 ms of a new
/// version that should cost 5 % of the first (issue 37); a reference is a few rows.
///
/// Removing a layout whose rows others share hands those rows to one of them (``handOverSharedPages(of:_:)``).
/// A store's and a layout's bytes count shared pages once per layout that has them, as a feed stored as a delta
/// counts its whole feed: what each layout holds, not what the disk holds.
extension SQLiteLayoutStore {
    static func registerPageShareMigration(_ migrator: inout DatabaseMigrator) {
        migrator.registerMigration("page-shares") { db in
            // ownerId has no cascade: removing a layout whose rows are shared fails until they are handed over.
            try db.execute(
                sql: """
                    CREATE TABLE page_share (
                        layoutId TEXT NOT NULL REFERENCES layout(id) ON DELETE CASCADE,
                        layoutIndex INTEGER NOT NULL,
                        pageStart INTEGER NOT NULL,
                        pageEnd INTEGER NOT NULL,
                        ownerId TEXT NOT NULL REFERENCES layout(id),
                        PRIMARY KEY (layoutId, layoutIndex, pageStart)
                    );
                    CREATE INDEX page_share_by_owner ON page_share(ownerId, layoutIndex);
                    """)
        }
    }

    /// SQL for the layout whose row holds page `?3` of layout `?1`'s part `?2`: the owner of a range that covers
    /// it, else `?1` itself.
    static let pageHolder = """
        coalesce((SELECT ownerId FROM page_share
            WHERE layoutId = ?1 AND layoutIndex = ?2 AND pageStart <= ?3 AND pageEnd > ?3), ?1)
        """

    /// The shared ranges of a layout's part, in page order.
    static func pageShares(of id: String, layoutIndex: Int, _ db: Database) throws -> [SharedRows] {
        try Row.fetchAll(
            db.cachedStatement(
                sql: """
                    SELECT ownerId, pageStart, pageEnd FROM page_share WHERE layoutId = ? AND layoutIndex = ?
                    ORDER BY pageStart
                    """),
            arguments: [id, layoutIndex]
        ).map { SharedRows(owner: $0["ownerId"], rows: ($0["pageStart"] as Int)..<($0["pageEnd"] as Int)) }
    }

    func adoptPages(from source: String, pageCount: Int, into id: String) async throws -> Bool {
        guard pageCount > 0, source != id else { return false }
        return try await writing { db -> Bool in
            let target = try Row.fetchAll(
                db, sql: "SELECT layoutIndex, pageCount FROM part WHERE layoutId = ?", arguments: [id])
            let status = try String.fetchOne(db, sql: "SELECT status FROM layout WHERE id = ?", arguments: [id])
            guard status == "running", target.count == 1, target[0]["layoutIndex"] as Int == 0,
                target[0]["pageCount"] as Int == 0, try Self.pageShares(of: id, layoutIndex: 0, db).isEmpty
            else { return false }
            let shares = RowSharing.adopted(
                from: source, sourceShares: try Self.pageShares(of: source, layoutIndex: 0, db), count: pageCount)
            // Every page there, each with its counts (pages stored before the store kept them have none).
            var held = 0
            var pageBytes = 0
            var pinBytes = 0
            var warnings: [String] = []
            for share in shares {
                let arguments: StatementArguments = [share.owner, share.rows.lowerBound, share.rows.upperBound]
                let range = "layoutId = ? AND layoutIndex = 0 AND pageIndex >= ? AND pageIndex < ?"
                let counted = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) AS pages, coalesce(sum(length(gzip) + coalesce(length(cursor), 0)), 0) AS bytes
                        FROM page WHERE \(range) AND warnings IS NOT NULL AND contentHeight IS NOT NULL
                        """, arguments: arguments)
                held += counted?["pages"] ?? 0
                pageBytes += counted?["bytes"] ?? 0
                pinBytes +=
                    try Int.fetchOne(
                        db, sql: "SELECT coalesce(sum(length(pins)), 0) FROM pin_block WHERE \(range)",
                        arguments: arguments) ?? 0
                warnings += try String.fetchAll(
                    db, sql: "SELECT warnings FROM page WHERE \(range) AND warnings <> '{}'", arguments: arguments)
            }
            guard held == pageCount, let lastShare = shares.last,
                let last = try Row.fetchOne(
                    db,
                    sql:
                        "SELECT cursor, contentHeight FROM page WHERE layoutId = ? AND layoutIndex = 0 AND pageIndex = ?",
                    arguments: [lastShare.owner, pageCount - 1]),
                let cursor = last["cursor"] as String?
            else { return false }
            for share in shares {
                try db.execute(
                    sql: """
                        INSERT INTO page_share (layoutId, layoutIndex, pageStart, pageEnd, ownerId)
                        VALUES (?, 0, ?, ?, ?)
                        """, arguments: [id, share.rows.lowerBound, share.rows.upperBound, share.owner])
            }
            let items = pinBytes / PinBlock.recordBytes
            try db.execute(
                sql: """
                    UPDATE part SET pageCount = ?, contentHeight = ?, lastCursor = ?, storedBytes = ?
                    WHERE layoutId = ? AND layoutIndex = 0
                    """,
                arguments: [
                    pageCount, last["contentHeight"] as Double, cursor,
                    pageBytes + items * LayoutListing.pinRecordBytes, id,
                ])
            try Self.addCounts(db, id: id, items: items, warnings: PageCounts.sum(warnings))
            return true
        }
    }

    /// Before `id`'s rows go: the page and pin-block rows other layouts share are handed over
    /// (``RowSharing/handOver(_:removing:)``), step by step until no range names `id`. Moving rows rewrites them
    /// (SQLite rewrites a row it updates): a removal pays once what adopting no longer copies.
    static func handOverSharedPages(of id: String, _ db: Database) throws {
        while true {
            let shares = try Row.fetchAll(
                db,
                sql: "SELECT layoutId, layoutIndex, pageStart, pageEnd FROM page_share WHERE ownerId = ?",
                arguments: [id]
            ).map {
                RowShare(
                    sharer: $0["layoutId"], part: $0["layoutIndex"],
                    shared: SharedRows(owner: id, rows: ($0["pageStart"] as Int)..<($0["pageEnd"] as Int)))
            }
            guard let step = RowSharing.handOver(shares, removing: id) else { return }
            for took in step.taken {
                for table in ["page", "pin_block"] {
                    try db.execute(
                        sql: """
                            UPDATE \(table) SET layoutId = ?
                            WHERE layoutId = ? AND layoutIndex = ? AND pageIndex >= ? AND pageIndex < ?
                            """, arguments: [step.heir, id, took.part, took.rows.lowerBound, took.rows.upperBound])
                }
            }
            try db.execute(
                sql: "DELETE FROM page_share WHERE layoutId = ? AND ownerId = ?", arguments: [step.heir, id])
            for (old, pieces) in step.replaced {
                try db.execute(
                    sql: "DELETE FROM page_share WHERE layoutId = ? AND layoutIndex = ? AND pageStart = ?",
                    arguments: [old.sharer, old.part, old.shared.rows.lowerBound])
                for piece in pieces {
                    try db.execute(
                        sql: """
                            INSERT INTO page_share (layoutId, layoutIndex, pageStart, pageEnd, ownerId)
                            VALUES (?, ?, ?, ?, ?)
                            """,
                        arguments: [
                            piece.sharer, piece.part, piece.shared.rows.lowerBound, piece.shared.rows.upperBound,
                            piece.shared.owner,
                        ])
                }
            }
        }
    }
}
