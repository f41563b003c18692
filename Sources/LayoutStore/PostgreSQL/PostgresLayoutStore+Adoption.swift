import Foundation
import PostgresNIO

/// A new version of a feed taking an older version's pages (see ``LayoutStore/adoptPages(from:pageCount:into:)``).
extension PostgresLayoutStore {
    func adoptPages(from source: String, pageCount: Int, into id: String) async throws -> Bool {
        guard pageCount > 0, source != id else { return false }
        return try await operation { [client, logger, owner] in
            try await client.withTransaction(logger: logger) { connection -> Bool in
                try await Self.lockHeldLayout(id, owner: owner, connection: connection, logger: logger)
                // The source stays while its pages are copied: a removal by another instance waits for this.
                var sourceHeld = false
                for try await _ in try await connection.query(
                    "SELECT 1 FROM feedlayout.layout WHERE id = \(source) FOR SHARE", logger: logger
                ).decode(Int.self) {
                    sourceHeld = true
                }
                guard sourceHeld else { return false }
                var parts: [(Int, Int)] = []
                for try await part in try await connection.query(
                    "SELECT layout_index, page_count FROM feedlayout.part WHERE layout_id = \(id)", logger: logger
                ).decode((Int, Int).self) {
                    parts.append(part)
                }
                guard parts.count == 1, parts[0].0 == 0, parts[0].1 == 0 else { return false }
                var held = 0
                for try await count in try await connection.query(
                    """
                    SELECT count(*) FROM feedlayout.page
                    WHERE layout_id = \(source) AND layout_index = 0 AND page_index < \(pageCount)
                        AND warnings IS NOT NULL AND content_height IS NOT NULL
                    """, logger: logger
                ).decode(Int.self) {
                    held = count
                }
                var last: (cursor: String?, height: Double)?
                for try await row in try await connection.query(
                    """
                    SELECT cursor, content_height FROM feedlayout.page
                    WHERE layout_id = \(source) AND layout_index = 0 AND page_index = \(pageCount - 1)
                    """, logger: logger
                ).decode((String?, Double?).self) {
                    if let height = row.1 { last = (row.0, height) }
                }
                guard held == pageCount, let last, let cursor = last.cursor else { return false }
                try await connection.query(
                    """
                    INSERT INTO feedlayout.page (layout_id, layout_index, page_index, gzip, cursor, warnings,
                        content_height)
                    SELECT \(id), layout_index, page_index, gzip, cursor, warnings, content_height
                    FROM feedlayout.page
                    WHERE layout_id = \(source) AND layout_index = 0 AND page_index < \(pageCount)
                    """, logger: logger)
                try await connection.query(
                    """
                    INSERT INTO feedlayout.pin_block (layout_id, layout_index, page_index, item_end, pins)
                    SELECT \(id), layout_index, page_index, item_end, pins FROM feedlayout.pin_block
                    WHERE layout_id = \(source) AND layout_index = 0 AND page_index < \(pageCount)
                    """, logger: logger)
                var items = 0
                var pageBytes = 0
                var pageWarnings: [String] = []
                for try await bytes in try await connection.query(
                    """
                    SELECT coalesce(sum(length(pins)), 0)::int8 FROM feedlayout.pin_block
                    WHERE layout_id = \(id) AND layout_index = 0
                    """, logger: logger
                ).decode(Int.self) {
                    items = bytes / PinBlock.recordBytes
                }
                for try await row in try await connection.query(
                    """
                    SELECT length(gzip) + coalesce(octet_length(cursor), 0), warnings FROM feedlayout.page
                    WHERE layout_id = \(id) AND layout_index = 0
                    """, logger: logger
                ).decode((Int, String).self) {
                    pageBytes += row.0
                    if row.1 != "{}" { pageWarnings.append(row.1) }
                }
                let warnings = try Self.warningsJSON(PageCounts.sum(pageWarnings))
                try await connection.query(
                    """
                    UPDATE feedlayout.part SET page_count = \(pageCount), content_height = \(last.height),
                        last_cursor = \(cursor), stored_bytes = \(pageBytes + items * LayoutListing.pinRecordBytes)
                    WHERE layout_id = \(id) AND layout_index = 0
                    """, logger: logger)
                try await connection.query(
                    """
                    UPDATE feedlayout.layout SET item_count = item_count + \(items),
                        warnings = feedlayout.add_counts(warnings, \(warnings))
                    WHERE id = \(id)
                    """, logger: logger)
                try await Self.announce(id, connection: connection, logger: logger)
                return true
            }
        }
    }
}
