import Foundation
import GRDB

/// A new version of a feed taking an older version's pages (see ``LayoutStore/adoptPages(from:pageCount:into:)``).
extension SQLiteLayoutStore {
    func adoptPages(from source: String, pageCount: Int, into id: String) async throws -> Bool {
        guard pageCount > 0, source != id else { return false }
        let adopted = try await writing { db -> Bool in
            let target = try Row.fetchAll(
                db, sql: "SELECT layoutIndex, pageCount FROM part WHERE layoutId = ?", arguments: [id])
            let status = try String.fetchOne(db, sql: "SELECT status FROM layout WHERE id = ?", arguments: [id])
            guard status == "running", target.count == 1, target[0]["layoutIndex"] as Int == 0,
                target[0]["pageCount"] as Int == 0
            else { return false }
            // Every page there, each with its counts (pages stored before the store kept them have none).
            let held = try Int.fetchOne(
                db,
                sql: """
                    SELECT count(*) FROM page
                    WHERE layoutId = ? AND layoutIndex = 0 AND pageIndex < ? AND warnings IS NOT NULL
                        AND contentHeight IS NOT NULL
                    """, arguments: [source, pageCount]) ?? 0
            guard held == pageCount,
                let last = try Row.fetchOne(
                    db,
                    sql: "SELECT cursor, contentHeight FROM page WHERE layoutId = ? AND layoutIndex = 0 AND pageIndex = ?",
                    arguments: [source, pageCount - 1]),
                let cursor = last["cursor"] as String?
            else { return false }
            try db.execute(
                sql: """
                    INSERT INTO page (layoutId, layoutIndex, pageIndex, gzip, cursor, warnings, contentHeight)
                    SELECT ?, layoutIndex, pageIndex, gzip, cursor, warnings, contentHeight FROM page
                    WHERE layoutId = ? AND layoutIndex = 0 AND pageIndex < ?
                    """, arguments: [id, source, pageCount])
            try db.execute(
                sql: """
                    INSERT INTO pin_block (layoutId, layoutIndex, pageIndex, itemEnd, pins)
                    SELECT ?, layoutIndex, pageIndex, itemEnd, pins FROM pin_block
                    WHERE layoutId = ? AND layoutIndex = 0 AND pageIndex < ?
                    """, arguments: [id, source, pageCount])
            let pinBytes =
                try Int.fetchOne(
                    db, sql: "SELECT coalesce(sum(length(pins)), 0) FROM pin_block WHERE layoutId = ? AND layoutIndex = 0",
                    arguments: [id]) ?? 0
            let items = pinBytes / PinBlock.recordBytes
            let pageBytes = try Int.fetchOne(
                db,
                sql: """
                    SELECT coalesce(sum(length(gzip) + coalesce(length(cursor), 0)), 0) FROM page
                    WHERE layoutId = ? AND layoutIndex = 0
                    """, arguments: [id]) ?? 0
            try db.execute(
                sql: """
                    UPDATE part SET pageCount = ?, contentHeight = ?, lastCursor = ?, storedBytes = ?
                    WHERE layoutId = ? AND layoutIndex = 0
                    """,
                arguments: [
                    pageCount, last["contentHeight"] as Double, cursor,
                    pageBytes + items * LayoutListing.pinRecordBytes, id,
                ])
            let warnings = try PageCounts.sum(
                String.fetchAll(
                    db,
                    sql: "SELECT warnings FROM page WHERE layoutId = ? AND layoutIndex = 0 AND warnings <> '{}'",
                    arguments: [id]))
            try Self.addCounts(db, id: id, items: items, warnings: warnings)
            return true
        }
        return adopted
    }
}
