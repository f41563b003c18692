import Foundation
import PostgresNIO

/// A new version of a feed taking an older version's pages (see ``LayoutStore/adoptPages(from:pageCount:into:)``), by
/// reference: the rows stay where they are, and `page_share` says whose they are (PostgresLayoutStore+Sharing).
extension PostgresLayoutStore {
    func adoptPages(from source: String, pageCount: Int, into id: String) async throws -> Bool {
        guard pageCount > 0, source != id else { return false }
        return try await operation { [client, logger, owner] in
            try await client.withTransaction(logger: logger) { connection -> Bool in
                try await Self.lockHeldLayout(id, owner: owner, connection: connection, logger: logger)
                // The source and the layouts holding its rows stay while the references are made: a removal by
                // another instance waits for this.
                guard
                    let sourceShares = try await Self.lockedShares(
                        of: source, .pages, part: 0, connection: connection, logger: logger)
                else { return false }
                var parts: [(Int, Int)] = []
                for try await part in try await connection.query(
                    "SELECT layout_index, page_count FROM feedlayout.part WHERE layout_id = \(id)", logger: logger
                ).decode((Int, Int).self) {
                    parts.append(part)
                }
                guard parts.count == 1, parts[0].0 == 0, parts[0].1 == 0,
                    try await Self.shares(of: id, .pages, part: 0, connection: connection, logger: logger).isEmpty
                else { return false }
                let shares = RowSharing.adopted(from: source, sourceShares: sourceShares, count: pageCount)
                // Every page there, each with its counts (pages stored before the store kept them have none), its pin
                // block and, for the last, its cursor and height: one pass over the ranges' rows.
                var held = 0
                var pageBytes = 0
                var pageWarnings: [String] = []
                var items = 0
                var last: (cursor: String?, height: Double)?
                for try await (count, bytes, warnings, pinBytes, cursor, height) in try await connection.query(
                    """
                    SELECT count(*)::int8, coalesce(sum(length(p.gzip) + coalesce(octet_length(p.cursor), 0)), 0)::int8,
                        coalesce(array_agg(p.warnings) FILTER (WHERE p.warnings <> '{}'), '{}'),
                        coalesce(sum(length(b.pins)), 0)::int8,
                        max(p.cursor) FILTER (WHERE p.page_index = \(pageCount - 1)),
                        max(p.content_height) FILTER (WHERE p.page_index = \(pageCount - 1))
                    FROM UNNEST(\(shares.map(\.owner))::text[], \(shares.map(\.rows.lowerBound))::int8[],
                        \(shares.map(\.rows.upperBound))::int8[]) AS r(owner_id, page_start, page_end)
                    JOIN feedlayout.page p ON p.layout_id = r.owner_id AND p.layout_index = 0
                        AND p.page_index >= r.page_start AND p.page_index < r.page_end
                    LEFT JOIN feedlayout.pin_block b ON b.layout_id = p.layout_id AND b.layout_index = 0
                        AND b.page_index = p.page_index
                    WHERE p.warnings IS NOT NULL AND p.content_height IS NOT NULL
                    """, logger: logger
                ).decode((Int, Int, [String], Int, String?, Double?).self) {
                    (held, pageBytes, pageWarnings) = (count, bytes, warnings)
                    items = pinBytes / PinBlock.recordBytes
                    if let height { last = (cursor, height) }
                }
                guard held == pageCount, let last, let cursor = last.cursor else { return false }
                try await Self.insertShares(shares, of: id, .pages, part: 0, connection: connection, logger: logger)
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
