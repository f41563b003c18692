import PostgresNIO

/// Pages stored in one statement, one round trip: the lease check locks the layout's row; the pages go in only
/// while this instance holds the lease, and their pin blocks, the parts' progress, the counts and the notification
/// only with pages that are new (one stored or referenced before, by a restart of a layout with breakpoints or a commit whose
/// answer was lost, adds nothing). Its row: 1 when the lease was held.
///
/// Why one statement, prepared: a statement per page was most of what the PostgreSQL server did for a layout
/// (parsing and planning it, and a commit, 2,000 times for 20 feeds of 5,000 pins); batched, parsing and planning
/// the statement for every batch was still a quarter of the server's CPU. Prepared once per connection, it is
/// bound and run.
struct PageBatchStatement: PostgresPreparedStatement {
    typealias Row = Int

    static let sql = """
        WITH held AS (
            SELECT id FROM feedlayout.layout WHERE id = $1 AND lease_owner = $2 FOR UPDATE
        ), input AS (
            SELECT layout_index, page_index, gzip, NULLIF(cursor, '') AS cursor, warnings, content_height,
                item_count, stored_bytes, ordinal
            FROM UNNEST($3::int8[], $4::int8[], $5::bytea[], $6::text[], $7::text[], $8::float8[], $9::int8[],
                $10::int8[]) WITH ORDINALITY
                AS u(layout_index, page_index, gzip, cursor, warnings, content_height, item_count, stored_bytes,
                    ordinal)
        ), page AS (
            INSERT INTO feedlayout.page (layout_id, layout_index, page_index, gzip, cursor, warnings, content_height)
            SELECT held.id, i.layout_index, i.page_index, i.gzip, i.cursor, i.warnings, i.content_height
            FROM held, input i
            -- A page the layout references (adopted) is there already, in another layout's row.
            WHERE NOT EXISTS (
                SELECT 1 FROM feedlayout.page_share s WHERE s.layout_id = $1 AND s.layout_index = i.layout_index
                    AND s.page_start <= i.page_index AND s.page_end > i.page_index)
            ON CONFLICT DO NOTHING RETURNING layout_index, page_index
        ), fresh AS (
            SELECT i.* FROM input i JOIN page USING (layout_index, page_index)
        ), pins AS (
            INSERT INTO feedlayout.pin_block (layout_id, layout_index, page_index, item_end, pins)
            SELECT $1, b.layout_index, b.page_index, b.item_end, b.pins
            FROM UNNEST($11::int8[], $12::int8[], $13::int8[], $14::bytea[]) AS b(layout_index, page_index, item_end, pins)
            JOIN page USING (layout_index, page_index)
            ON CONFLICT (layout_id, layout_index, page_index) DO UPDATE SET
                item_end = EXCLUDED.item_end, pins = EXCLUDED.pins
        ), part AS (
            -- Each part's new pages, and its last one's height and cursor, as page after page would leave it.
            UPDATE feedlayout.part SET page_count = page_count + f.pages, content_height = f.content_height,
                last_cursor = f.cursor, stored_bytes = stored_bytes + f.bytes
            FROM (
                SELECT DISTINCT ON (layout_index) layout_index, content_height, cursor,
                    count(*) OVER (PARTITION BY layout_index) AS pages,
                    sum(stored_bytes) OVER (PARTITION BY layout_index) AS bytes
                FROM fresh ORDER BY layout_index, ordinal DESC
            ) AS f
            WHERE part.layout_id = $1 AND part.layout_index = f.layout_index
        ), counted AS (
            -- The counts merge (an SQL function, planned again at every call) only for pages with warnings.
            UPDATE feedlayout.layout SET item_count = item_count + (SELECT sum(item_count) FROM fresh),
                warnings = CASE WHEN EXISTS (SELECT 1 FROM fresh WHERE fresh.warnings <> '{}')
                    THEN feedlayout.add_counts(warnings, (
                        SELECT coalesce(jsonb_object_agg(key, total), '{}'::jsonb)::text FROM (
                            SELECT key, sum(value::bigint) AS total
                            FROM fresh, jsonb_each_text(fresh.warnings::jsonb) GROUP BY key
                        ) AS merged))
                    ELSE warnings END
            WHERE id = $1 AND EXISTS (SELECT 1 FROM fresh) AND $16
        )
        SELECT (SELECT count(*) FROM held),
            CASE WHEN EXISTS (SELECT 1 FROM page) THEN pg_notify($15, $1) END
        """

    static let bindingDataTypes: [PostgresDataType] = [
        .text, .text, .int8Array, .int8Array, .byteaArray, .textArray, .textArray, .float8Array, .int8Array,
        .int8Array, .int8Array, .int8Array, .int8Array, .byteaArray, .text, .bool,
    ]

    let id: String
    let owner: String
    /// The batch's pages, each once: a page twice in one batch is stored once, as the second of two single
    /// stores adds nothing.
    let pages: [PageWrite]
    /// Each page's pins as one block, with the page it comes with, which decides whether it goes in.
    let blocks: [(layoutIndex: Int, page: Int, itemEnd: Int, pins: ByteBuffer)]
    let addsCounts: Bool

    init(_ writes: some Collection<PageWrite>, layoutId id: String, owner: String) throws {
        var pages: [PageWrite] = []
        for write in writes
        where !pages.contains(where: { $0.layoutIndex == write.layoutIndex && $0.pageIndex == write.pageIndex }) {
            pages.append(write)
        }
        self.id = id
        self.owner = owner
        self.pages = pages
        self.blocks = try pages.compactMap { page in
            try page.pins.last.map { last in
                (page.layoutIndex, page.pageIndex, last.itemIndex + 1, ByteBuffer(bytes: try PinBlock.encode(page.pins)))
            }
        }
        self.addsCounts = pages.contains { $0.itemCount > 0 || !$0.warnings.isEmpty }
    }

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 16)
        bindings.append(id)
        bindings.append(owner)
        bindings.append(pages.map(\.layoutIndex))
        bindings.append(pages.map(\.pageIndex))
        bindings.append(pages.map { ByteBuffer(bytes: $0.gzip) })
        // No NULL inside a bound array: the last page, without a cursor, sends '' (no cursor is).
        bindings.append(pages.map { $0.cursor ?? "" })
        bindings.append(pages.map { PageCounts.json($0.warnings) })
        bindings.append(pages.map(\.contentHeight))
        bindings.append(pages.map(\.itemCount))
        bindings.append(pages.map(LayoutListing.bytes(of:)))
        bindings.append(blocks.map(\.layoutIndex))
        bindings.append(blocks.map(\.page))
        bindings.append(blocks.map(\.itemEnd))
        bindings.append(blocks.map(\.pins))
        bindings.append(PostgresLayoutStore.channel)
        bindings.append(addsCounts)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Int {
        try row.decode((Int, String?).self).0
    }
}
