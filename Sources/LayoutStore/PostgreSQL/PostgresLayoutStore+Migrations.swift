import Foundation
import LayoutPages
import Logging
import PostgresNIO

/// The shared store's schema, in the schema `feedlayout` of the database: an ordered list of steps, each applied once
/// per database and recorded in `feedlayout.migration`. A new step goes at the end with the next number; a step that
/// shipped is never edited (databases that ran it keep what it made).
extension PostgresLayoutStore {
    /// The schema, in versioned steps, each run once per database. The steps run in one transaction that holds an
    /// advisory lock, so instances that start together apply them once, one after the other.
    static let migrations: [Migration] = [
        Migration(
            1,
            [
                """
                CREATE TABLE feedlayout.layout (
                    id TEXT PRIMARY KEY,
                    status TEXT NOT NULL,
                    arguments TEXT NOT NULL,
                    feed_name TEXT NOT NULL,
                    base_url TEXT,
                    item_count BIGINT NOT NULL DEFAULT 0,
                    warnings TEXT NOT NULL DEFAULT '{}',
                    error_code TEXT,
                    error_message TEXT,
                    created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
                    lease_owner TEXT,
                    lease_expires TIMESTAMPTZ
                )
                """,
                """
                CREATE TABLE feedlayout.feed (
                    layout_id TEXT PRIMARY KEY REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    bytes BYTEA NOT NULL
                )
                """,
                """
                CREATE TABLE feedlayout.part (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    layout_index BIGINT NOT NULL,
                    width DOUBLE PRECISION NOT NULL,
                    columns BIGINT NOT NULL,
                    page_count BIGINT NOT NULL DEFAULT 0,
                    content_height DOUBLE PRECISION NOT NULL DEFAULT 0,
                    last_cursor TEXT,
                    PRIMARY KEY (layout_id, layout_index)
                )
                """,
                """
                CREATE TABLE feedlayout.page (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    layout_index BIGINT NOT NULL,
                    page_index BIGINT NOT NULL,
                    json BYTEA NOT NULL,
                    gzip BYTEA NOT NULL,
                    cursor TEXT,
                    PRIMARY KEY (layout_id, layout_index, page_index)
                )
                """,
                "CREATE INDEX page_by_cursor ON feedlayout.page (cursor)",
                """
                CREATE TABLE feedlayout.pin (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    layout_index BIGINT NOT NULL,
                    item_index BIGINT NOT NULL,
                    column_index BIGINT NOT NULL,
                    column_span BIGINT NOT NULL,
                    x BIGINT NOT NULL, y BIGINT NOT NULL, width BIGINT NOT NULL, height BIGINT NOT NULL,
                    page_index BIGINT NOT NULL,
                    json_offset BIGINT NOT NULL,
                    json_length BIGINT NOT NULL,
                    PRIMARY KEY (layout_id, layout_index, item_index)
                )
                """,
            ]
        ),
        Migration(
            2,
            [
                // The probe cache every instance shares (PostgresProbeCache): ProbeCache's SQLite table, column for
                // column (see ProbeColumns).
                """
                CREATE TABLE feedlayout.probe (
                    source TEXT PRIMARY KEY,
                    file_size BIGINT, file_modified BIGINT, entity_tag TEXT, last_modified TEXT,
                    format TEXT NOT NULL, width BIGINT NOT NULL, height BIGINT NOT NULL,
                    orientation BIGINT NOT NULL, bytes_read BIGINT NOT NULL, flags BIGINT NOT NULL,
                    bit_depth BIGINT, warnings TEXT NOT NULL,
                    placeholder_color BIGINT, placeholder_hash BYTEA,
                    stored_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
                )
                """
            ]
        ),
        Migration(
            3,
            [
                // A feed in chunks: one message of a whole feed (hundreds of MB) grew a connection's write buffer to
                // its size, and the pool kept that buffer for the connection's life. A feed stored before is one
                // chunk.
                """
                CREATE TABLE feedlayout.feed_chunk (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    chunk_index BIGINT NOT NULL,
                    bytes BYTEA NOT NULL,
                    PRIMARY KEY (layout_id, chunk_index)
                )
                """,
                "INSERT INTO feedlayout.feed_chunk (layout_id, chunk_index, bytes) SELECT layout_id, 0, bytes FROM feedlayout.feed",
                "DROP TABLE feedlayout.feed",
            ]
        ),
        Migration(
            4,
            [
                // Warning counts by code (a JSON object as text) plus more of them: one merge for the pages' counts
                // and the feed's, inside the statements that store them.
                """
                CREATE FUNCTION feedlayout.add_counts(stored TEXT, added TEXT) RETURNS TEXT
                LANGUAGE SQL IMMUTABLE AS $$
                    SELECT COALESCE(jsonb_object_agg(key, total), '{}'::jsonb)::text FROM (
                        SELECT key, sum(value::bigint) AS total FROM (
                            SELECT * FROM jsonb_each_text(stored::jsonb)
                            UNION ALL SELECT * FROM jsonb_each_text(added::jsonb)
                        ) AS counts GROUP BY key
                    ) AS merged
                $$
                """
            ]
        ),
        Migration(
            5,
            [
                // Pages are kept gzipped only (see LayoutStore.page(_:layoutIndex:pageIndex:gzip:)).
                "ALTER TABLE feedlayout.page DROP COLUMN json"
            ]
        ),
        Migration(6, ["ALTER TABLE feedlayout.layout ADD COLUMN options TEXT NOT NULL DEFAULT ''"]) {
            connection, logger in
            // Options were kept as `feedlayout layout` arguments; they are the request's named options as JSON now.
            // A layout keeps its id and pages: the same options give the same LayoutOptions either way.
            var converted: [(String, String)] = []
            for try await (id, arguments) in try await connection.query(
                "SELECT id, arguments FROM feedlayout.layout", logger: logger
            ).decode((String, String).self) {
                let list = try JSONDecoder().decode([String].self, from: Data(arguments.utf8))
                converted.append((id, LayoutOptionValues.storedJSON(LayoutOptionValues.named(storedArguments: list))))
            }
            for (id, options) in converted {
                try await connection.query(
                    "UPDATE feedlayout.layout SET options = \(options) WHERE id = \(id)", logger: logger)
            }
            try await connection.query("ALTER TABLE feedlayout.layout DROP COLUMN arguments", logger: logger)
        },
        Migration(
            7,
            [
                // What each layout holds (its feed's bytes; each part's pages, cursors and pins, kept up to date as
                // pages are stored) and when it was last read: for GET /v1/layouts and the evictor.
                "ALTER TABLE feedlayout.layout ADD COLUMN feed_bytes BIGINT NOT NULL DEFAULT 0",
                "ALTER TABLE feedlayout.layout ADD COLUMN last_read_at TIMESTAMPTZ",
                "ALTER TABLE feedlayout.part ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0",
                """
                UPDATE feedlayout.layout SET feed_bytes = coalesce(
                    (SELECT sum(length(bytes)) FROM feedlayout.feed_chunk WHERE layout_id = layout.id), 0)
                """,
                """
                UPDATE feedlayout.part SET stored_bytes =
                    coalesce((SELECT sum(length(gzip) + coalesce(octet_length(cursor), 0)) FROM feedlayout.page
                        WHERE page.layout_id = part.layout_id AND page.layout_index = part.layout_index), 0)
                    + \(LayoutListing.pinRecordBytes) * (SELECT count(*) FROM feedlayout.pin
                        WHERE pin.layout_id = part.layout_id AND pin.layout_index = part.layout_index)
                """,
                "CREATE INDEX layout_by_creation ON feedlayout.layout (created_at, id)",
            ]
        ),
        Migration(
            8,
            [
                // Each page's warnings by code and the layout's height after it, so that a new version of a feed can
                // take an older version's pages as its own with their counts (adoptPages). Pages stored before
                // have NULL here, and are never adopted.
                "ALTER TABLE feedlayout.page ADD COLUMN warnings TEXT",
                "ALTER TABLE feedlayout.page ADD COLUMN content_height DOUBLE PRECISION",
                // Each probe's HTTP freshness (PostgresProbeCache): seconds since 1970, NULL to revalidate.
                "ALTER TABLE feedlayout.probe ADD COLUMN fresh_until DOUBLE PRECISION",
            ]
        ),
        Migration(
            9,
            [
                // A feed's chunks are kept as they came, not compressed: compressing each feed (pglz) was a fifth of
                // the server's CPU for a layout, the SQLite store keeps its feeds uncompressed too, and a feed is
                // read back whole only when a layout restarts or a new version compares with it. Chunks stored
                // before stay compressed.
                "ALTER TABLE feedlayout.feed_chunk ALTER COLUMN bytes SET STORAGE EXTERNAL"
            ]
        ),
        Migration(
            10,
            [
                // A page's pins in one row (PinBlock: records of int8send/int4send fields) instead of a row each:
                // 100,000 rows, their index entries and foreign-key checks were a large share of the server's work
                // for 20 feeds of 5,000 pins. item_end (the item after the page's last pin) finds the pages that
                // hold pins from an item on.
                """
                CREATE TABLE feedlayout.pin_block (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    layout_index BIGINT NOT NULL,
                    page_index BIGINT NOT NULL,
                    item_end BIGINT NOT NULL,
                    pins BYTEA NOT NULL,
                    PRIMARY KEY (layout_id, layout_index, page_index)
                )
                """,
                """
                INSERT INTO feedlayout.pin_block (layout_id, layout_index, page_index, item_end, pins)
                SELECT layout_id, layout_index, page_index, max(item_index) + 1,
                    string_agg(
                        int8send(item_index) || int4send(column_index::int4) || int4send(column_span::int4)
                            || int8send(x) || int8send(y) || int8send(width) || int8send(height)
                            || int8send(page_index) || int4send(json_offset::int4) || int4send(json_length::int4),
                        ''::bytea ORDER BY item_index)
                FROM feedlayout.pin GROUP BY layout_id, layout_index, page_index
                """,
                "DROP TABLE feedlayout.pin",
                // A page's block (50 pins: 3,200 bytes) stays in its row as it is: past the default 2 kB, the
                // server tried to compress every block and moved it to the TOAST table.
                "ALTER TABLE feedlayout.pin_block SET (toast_tuple_target = 8160)",
                // Pages are gzip already: the server's own compression of each (tried on every page) gains nothing.
                "ALTER TABLE feedlayout.page ALTER COLUMN gzip SET STORAGE EXTERNAL",
            ]
        ),
        Migration(
            11,
            [
                // Rows a layout reads from another layout's rows (PostgresLayoutStore+Sharing): pages `page_start..<
                // page_end` of a part, and a feed's chunks `chunk_start..<chunk_end`, held by `owner_id`. The owner
                // has no cascade: removing a layout whose rows are shared fails until they are handed over.
                """
                CREATE TABLE feedlayout.page_share (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    layout_index BIGINT NOT NULL,
                    page_start BIGINT NOT NULL,
                    page_end BIGINT NOT NULL,
                    owner_id TEXT NOT NULL REFERENCES feedlayout.layout(id),
                    PRIMARY KEY (layout_id, layout_index, page_start)
                )
                """,
                "CREATE INDEX page_share_by_owner ON feedlayout.page_share (owner_id, layout_index)",
                """
                CREATE TABLE feedlayout.feed_chunk_share (
                    layout_id TEXT NOT NULL REFERENCES feedlayout.layout(id) ON DELETE CASCADE,
                    chunk_start BIGINT NOT NULL,
                    chunk_end BIGINT NOT NULL,
                    owner_id TEXT NOT NULL REFERENCES feedlayout.layout(id),
                    PRIMARY KEY (layout_id, chunk_start)
                )
                """,
                "CREATE INDEX feed_chunk_share_by_owner ON feedlayout.feed_chunk_share (owner_id)",
            ]
        ),
    ] + subscriptionMigrations

    /// One step of the schema: statements, then, where SQL alone cannot say it, Swift over the same connection
    /// (in the same transaction).
    struct Migration: Sendable {
        let version: Int
        let statements: [String]
        let convert: (@Sendable (PostgresConnection, Logger) async throws -> Void)?

        init(
            _ version: Int, _ statements: [String],
            convert: (@Sendable (PostgresConnection, Logger) async throws -> Void)? = nil
        ) {
            self.version = version
            self.statements = statements
            self.convert = convert
        }
    }

    func migrate() async throws {
        try await withTimeout(.seconds(15)) { [client, logger] in
            try await client.withTransaction(logger: logger) { connection in
                // Any fixed number: the lock only has to be the same for every instance.
                try await connection.query("SELECT pg_advisory_xact_lock(4242017)", logger: logger)
                try await connection.query("CREATE SCHEMA IF NOT EXISTS feedlayout", logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS feedlayout.migration (
                        version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())
                    """, logger: logger)
                var applied: Set<Int> = []
                for try await version in try await connection.query(
                    "SELECT version FROM feedlayout.migration", logger: logger
                ).decode(Int.self) {
                    applied.insert(version)
                }
                for migration in Self.migrations where !applied.contains(migration.version) {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await migration.convert?(connection, logger)
                    try await connection.query(
                        "INSERT INTO feedlayout.migration (version) VALUES (\(migration.version))", logger: logger)
                }
            }
        }
    }
}
