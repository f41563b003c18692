import Foundation
import Logging
import PostgresNIO

/// Rows one layout reads from another layout's rows in the shared store (``SharedRows``): a new version of a feed
/// takes its predecessor's pages, and the chunks of the feed bytes they share, by reference. Copied, a version
/// with 20 items appended to a 224 MB feed stored the whole feed again (1.84–2.09 s) and copied 1,999 pages
/// (292–339 ms): six times the 5 % of the first version it should cost (issue 37).
///
/// Several instances share the store, so references and removals take row locks:
/// - Whoever adds a reference holds the row of every layout it names `FOR SHARE` until it commits
///   (``lockedShares(of:_:part:connection:)``). A removal locks its layout's row `FOR UPDATE` before it looks at the
///   references: it either waits for a new reference and hands the rows over with it, or goes first, and the one
///   adding the reference reads the ranges again (they name the heir by then).
/// - Removals take one advisory lock, one at a time: two at once could each hand rows to the layout the other removes.
///
/// A read that follows references is one statement, so it sees one snapshot: before a hand-over or after it.
extension PostgresLayoutStore {
    /// One kind of shared rows: the table of references and the tables of rows.
    struct ShareKind: Sendable {
        let table: String
        /// The column of the part (a layout index) in both, when rows belong to parts.
        let part: String?
        let start: String
        let end: String
        let rowTables: [String]
        let rowIndex: String

        /// Pages of a part, with their pin blocks.
        static let pages = ShareKind(
            table: "page_share", part: "layout_index", start: "page_start", end: "page_end",
            rowTables: ["page", "pin_block"], rowIndex: "page_index")
        /// A feed's chunks (`feedChunkSize` bytes each, but for a feed's last; chunk `i` is the bytes from
        /// `i * feedChunkSize` in every layout, whoever holds its row).
        static let feedChunks = ShareKind(
            table: "feed_chunk_share", part: nil, start: "chunk_start", end: "chunk_end", rowTables: ["feed_chunk"],
            rowIndex: "chunk_index")

        /// `AND part = N`, for a query of one part (a number, never text from outside).
        func ofPart(_ part: Int) -> String { self.part.map { " AND \($0) = \(part)" } ?? "" }
    }

    /// A layout's references of one part, in row order.
    static func shares(
        of id: String, _ kind: ShareKind, part: Int, connection: PostgresConnection, logger: Logger
    ) async throws -> [SharedRows] {
        var shares: [SharedRows] = []
        for try await (owner, start, end) in try await connection.query(
            """
            SELECT owner_id, \(unescaped: kind.start), \(unescaped: kind.end) FROM feedlayout.\(unescaped: kind.table)
            WHERE layout_id = \(id)\(unescaped: kind.ofPart(part)) ORDER BY \(unescaped: kind.start)
            """, logger: logger
        ).decode((String, Int, Int).self) {
            shares.append(SharedRows(owner: owner, rows: start..<end))
        }
        return shares
    }

    /// `source`'s references of one part, with `source` and every layout they name held `FOR SHARE` until the
    /// transaction ends; `nil` when `source` is gone. Read again while a removal moved them meanwhile.
    static func lockedShares(
        of source: String, _ kind: ShareKind, part: Int, connection: PostgresConnection, logger: Logger
    ) async throws -> [SharedRows]? {
        while true {
            let shares = try await shares(of: source, kind, part: part, connection: connection, logger: logger)
            let named = Set(shares.map(\.owner)).union([source])
            var held: Set<String> = []
            for try await id in try await connection.query(
                "SELECT id FROM feedlayout.layout WHERE id = ANY(\(named.sorted())::text[]) ORDER BY id FOR SHARE",
                logger: logger
            ).decode(String.self) {
                held.insert(id)
            }
            guard held.contains(source) else { return nil }
            if held == named { return shares }
            // An owner went before its row could be held: its rows are another layout's now.
        }
    }

    /// Adds `id`'s references of one part.
    static func insertShares(
        _ shares: [SharedRows], of id: String, _ kind: ShareKind, part: Int, connection: PostgresConnection,
        logger: Logger
    ) async throws {
        guard !shares.isEmpty else { return }
        let partColumn = kind.part.map { ", \($0)" } ?? ""
        let partValue = kind.part.map { _ in ", \(part)" } ?? ""
        try await connection.query(
            """
            INSERT INTO feedlayout.\(unescaped: kind.table)
                (layout_id\(unescaped: partColumn), \(unescaped: kind.start), \(unescaped: kind.end), owner_id)
            SELECT \(id)\(unescaped: partValue), r.start_index, r.end_index, r.owner_id
            FROM UNNEST(\(shares.map(\.owner))::text[], \(shares.map(\.rows.lowerBound))::int8[],
                \(shares.map(\.rows.upperBound))::int8[]) AS r(owner_id, start_index, end_index)
            """, logger: logger)
    }

    /// Before `id` goes: the rows of `kind` that others reference are handed over
    /// (``RowSharing/handOver(_:removing:)``), step by step until no reference names `id`. A moved row keeps its bytes where they are (PostgreSQL rewrites
    /// the row's tuple; its out-of-line value, unchanged, is not copied).
    static func handOverShares(
        of id: String, _ kind: ShareKind, connection: PostgresConnection, logger: Logger
    ) async throws {
        let part = kind.part ?? "0"
        while true {
            var shares: [RowShare] = []
            for try await (sharer, sharedPart, start, end) in try await connection.query(
                """
                SELECT layout_id, \(unescaped: part)::int8, \(unescaped: kind.start), \(unescaped: kind.end)
                FROM feedlayout.\(unescaped: kind.table) WHERE owner_id = \(id)
                """, logger: logger
            ).decode((String, Int, Int, Int).self) {
                shares.append(
                    RowShare(sharer: sharer, part: sharedPart, shared: SharedRows(owner: id, rows: start..<end)))
            }
            guard let step = RowSharing.handOver(shares, removing: id) else { return }
            for took in step.taken {
                for table in kind.rowTables {
                    try await connection.query(
                        """
                        UPDATE feedlayout.\(unescaped: table) SET layout_id = \(step.heir)
                        WHERE layout_id = \(id)\(unescaped: kind.ofPart(took.part))
                            AND \(unescaped: kind.rowIndex) >= \(took.rows.lowerBound)
                            AND \(unescaped: kind.rowIndex) < \(took.rows.upperBound)
                        """, logger: logger)
                }
            }
            try await connection.query(
                "DELETE FROM feedlayout.\(unescaped: kind.table) WHERE layout_id = \(step.heir) AND owner_id = \(id)",
                logger: logger)
            for (old, pieces) in step.replaced {
                try await connection.query(
                    """
                    DELETE FROM feedlayout.\(unescaped: kind.table)
                    WHERE layout_id = \(old.sharer)\(unescaped: kind.ofPart(old.part))
                        AND \(unescaped: kind.start) = \(old.shared.rows.lowerBound)
                    """, logger: logger)
                try await insertShares(
                    pieces.map(\.shared), of: old.sharer, kind, part: old.part, connection: connection, logger: logger)
            }
        }
    }
}
