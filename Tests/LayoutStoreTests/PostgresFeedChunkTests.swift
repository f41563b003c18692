import FeedLayoutTestSupport
import Foundation
import Logging
import PostgresNIO
import Testing

@testable import LayoutStore

/// A layout's feed in PostgreSQL is stored in chunks, so that no message to or from the server holds a whole feed
/// (a connection keeps a buffer the size of its largest message), and a database of the schema before keeps its
/// feeds.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PostgresFeedChunkTests {
    static let logger = Logger(label: "test.postgres-feed-chunks")

    /// A feed of two and a half chunks comes back whole, in order, from another instance.
    @Test func aFeedLargerThanAChunkRoundTrips() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in try await Self.roundTrip(cluster) }
    }

    static func roundTrip(_ cluster: some PostgresTestStore) async throws {
        let writer = try await PostgresProbeCacheTests.openStore(cluster)
        defer { writer.close() }
        let reader = try await PostgresProbeCacheTests.openStore(cluster)
        defer { reader.close() }
        var random = SplitMix64(seed: 5)
        let feed = (0..<(PostgresLayoutStore.feedChunkSize * 5 / 2)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        #expect(
            try await writer.insertLayout(
                id: "big", options: "{}", feedName: "big.xml", baseURL: nil, feed: feed, parts: [(375, 2)]))
        #expect(try await reader.feed(of: "big") == feed)
        #expect(
            try await writer.insertLayout(
                id: "empty", options: "{}", feedName: "empty.xml", baseURL: nil, feed: [], parts: [(375, 2)]))
        #expect(try await reader.feed(of: "empty") == [])
        #expect(try await reader.feed(of: "missing") == nil)
        let chunks = try await Self.query(cluster, "SELECT count(*) FROM feedlayout.feed_chunk WHERE layout_id = 'big'")
        #expect(chunks == 3)
    }

    /// Versions of a feed that share its first bytes reference the chunks wholly inside what they share, and store
    /// the rest; each reads back whole, from another instance too. Removing a layout whose chunks others reference
    /// hands them to one of them, until the last version goes with every chunk.
    @Test func versionsReferenceTheChunksTheyShare() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in try await Self.shareChunks(cluster) }
    }

    static func shareChunks(_ cluster: some PostgresTestStore) async throws {
        let store = try await PostgresProbeCacheTests.openStore(cluster)
        defer { store.close() }
        let reader = try await PostgresProbeCacheTests.openStore(cluster)
        defer { reader.close() }
        let chunk = PostgresLayoutStore.feedChunkSize
        var random = SplitMix64(seed: 11)
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
        // v1: 3.5 chunks. v2: v1's first 2.3 chunks, then 1.2 of its own (references chunks 0..<2). v3: v2's first
        // 3.2 chunks, then its own (references v1's 0..<2 and v2's 2).
        let v1 = bytes(chunk * 7 / 2)
        let v2 = Array(v1[..<(chunk * 23 / 10)]) + bytes(chunk * 12 / 10)
        let v3 = Array(v2[..<(chunk * 32 / 10)]) + bytes(chunk / 10)
        func insert(_ id: String, _ feed: [UInt8], sharing: LayoutFeedPrefix?) async throws {
            #expect(
                try await store.insertLayout(
                    id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: feed, sharing: sharing,
                    parts: [(375, 2)]))
        }
        func chunks(of id: String) async throws -> Int? {
            try await query(cluster, "SELECT count(*) FROM feedlayout.feed_chunk WHERE layout_id = '\(id)'")
        }
        func check(_ feeds: [String: [UInt8]]) async throws {
            for (id, feed) in feeds.sorted(by: { $0.key < $1.key }) {
                #expect(try await reader.feed(of: id) == feed, "\(id)")
                #expect(try await reader.listLayouts(after: nil, limit: 10).first { $0.id == id }?.bytes ?? 0 >= feed.count)
            }
        }
        try await insert("v1", v1, sharing: nil)
        try await insert("v2", v2, sharing: LayoutFeedPrefix(layoutId: "v1", prefixLength: chunk * 23 / 10))
        try await insert("v3", v3, sharing: LayoutFeedPrefix(layoutId: "v2", prefixLength: chunk * 32 / 10))
        // Less than a chunk shared, or a predecessor that is not there: stored whole.
        try await insert("w", Array(v1[..<100]) + [1], sharing: LayoutFeedPrefix(layoutId: "v1", prefixLength: 100))
        try await insert("x", v1 + [2], sharing: LayoutFeedPrefix(layoutId: "gone", prefixLength: v1.count))
        #expect(try await chunks(of: "v1") == 4)
        #expect(try await chunks(of: "v2") == 2, "chunks 2 and 3")
        #expect(try await chunks(of: "v3") == 1, "chunk 3")
        #expect(try await chunks(of: "w") == 1)
        #expect(try await chunks(of: "x") == 4)
        try await check(["v1": v1, "v2": v2, "v3": v3, "w": Array(v1[..<100]) + [1], "x": v1 + [2]])

        // v2 and v3 both reference v1's 0..<2: the tie goes by key, to v3, and v2's reference names v3.
        #expect(try await store.removeLayout("v1"))
        #expect(try await store.feed(of: "v1") == nil)
        #expect(try await chunks(of: "v3") == 3)
        try await check(["v2": v2, "v3": v3])
        #expect(try await store.removeLayout("v3"))
        #expect(try await chunks(of: "v2") == 4)
        try await check(["v2": v2])
        #expect(try await store.removeLayout("v2"))
        #expect(try await query(cluster, "SELECT count(*) FROM feedlayout.feed_chunk_share") == 0)
        #expect(try await query(cluster, "SELECT count(*) FROM feedlayout.feed_chunk") == 5, "w's and x's")
    }

    /// A database whose feeds are whole rows (schema 2) gets them as one chunk each when a new instance starts.
    @Test func feedsStoredWholeBeforeAreKept() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in try await Self.migrateWholeFeeds(cluster) }
    }

    static func migrateWholeFeeds(_ cluster: some PostgresTestStore) async throws {
        // The tables migrations 3, 5, 6, 7, 8 and 10 change, as schema 2 left them (only the columns they use).
        for statement in [
            "CREATE SCHEMA feedlayout",
            "CREATE TABLE feedlayout.migration (version BIGINT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            "INSERT INTO feedlayout.migration (version) VALUES (1), (2)",
            "CREATE TABLE feedlayout.layout (id TEXT PRIMARY KEY, arguments TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            "CREATE TABLE feedlayout.feed (layout_id TEXT PRIMARY KEY REFERENCES feedlayout.layout(id), bytes BYTEA NOT NULL)",
            "INSERT INTO feedlayout.layout (id, arguments) VALUES ('old', '\(SQLiteLayoutStoreTests.oldArguments)')",
            "INSERT INTO feedlayout.feed (layout_id, bytes) VALUES ('old', '<rss>old</rss>'::bytea)",
            "CREATE TABLE feedlayout.page (layout_id TEXT, layout_index BIGINT, json BYTEA NOT NULL, gzip BYTEA NOT NULL, cursor TEXT)",
            "INSERT INTO feedlayout.page VALUES ('old', 0, '', '\\x0102030405'::bytea, 'fl4.abc')",
            "CREATE TABLE feedlayout.part (layout_id TEXT, layout_index BIGINT)",
            "INSERT INTO feedlayout.part VALUES ('old', 0)",
            """
            CREATE TABLE feedlayout.pin (layout_id TEXT, layout_index BIGINT, item_index BIGINT, column_index BIGINT,
                column_span BIGINT, x BIGINT, y BIGINT, width BIGINT, height BIGINT, page_index BIGINT,
                json_offset BIGINT, json_length BIGINT)
            """,
            "CREATE TABLE feedlayout.probe (source TEXT PRIMARY KEY)",
            "INSERT INTO feedlayout.pin VALUES ('old', 0, 1, 1, 1, 200, 300, 180, -2, 0, 40, 25), ('old', 0, 0, 0, 2, 0, 9000000000, 360, 240, 0, 1, 38)",
        ] {
            _ = try await Self.query(cluster, statement)
        }
        let store = try await PostgresProbeCacheTests.openStore(cluster)
        defer { store.close() }
        #expect(try await store.feed(of: "old") == Array("<rss>old</rss>".utf8))
        // The layouts' steps (the subscriptions' are numbered from 101).
        #expect(try await Self.query(cluster, "SELECT max(version) FROM feedlayout.migration WHERE version < 100") == 11)
        // Pins are a block per page (migration 10), in item order, each field as it was.
        let pins = try await store.pins("old", layoutIndex: 0, from: 0)
        #expect(pins.map(\.itemIndex) == [0, 1])
        #expect(pins.map { [$0.column, $0.columnSpan, $0.x, $0.y, $0.width, $0.height, $0.pageIndex, $0.jsonOffset, $0.jsonLength] }
            == [[0, 2, 0, 9_000_000_000, 360, 240, 0, 1, 38], [1, 1, 200, 300, 180, -2, 0, 40, 25]])
        #expect(try await store.pins("old", layoutIndex: 0, from: 1).map(\.itemIndex) == [1])
        #expect(try await Self.query(cluster, "SELECT count(*) FROM pg_tables WHERE schemaname = 'feedlayout' AND tablename = 'pin'") == 0)
        // Feed chunks stored from now on are not compressed (migration 9); the old one is read as before.
        #expect(
            try await Self.value(
                cluster,
                """
                SELECT attstorage::text FROM pg_attribute
                WHERE attrelid = 'feedlayout.feed_chunk'::regclass AND attname = 'bytes'
                """, as: String.self) == "e")
        #expect(try await Self.query(cluster, "SELECT max(version) FROM feedlayout.migration") == 101)
        // Sizes counted from what the layout holds (migration 7): its feed, its page and cursor, two pins.
        #expect(
            try await Self.query(
                cluster,
                "SELECT feed_bytes + (SELECT stored_bytes FROM feedlayout.part) FROM feedlayout.layout WHERE id = 'old'")
                == "<rss>old</rss>".utf8.count + 5 + 7 + 2 * LayoutListing.pinRecordBytes)
        // Options kept as command-line arguments are named options' JSON (migration 6).
        #expect(
            try await Self.value(cluster, "SELECT options FROM feedlayout.layout WHERE id = 'old'", as: String.self)
                == SQLiteLayoutStoreTests.convertedOptions)
        #expect(
            try await Self.query(
                cluster,
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'feedlayout' AND table_name = 'layout' AND column_name = 'arguments'")
                == 0)
        #expect(try await Self.query(cluster, "SELECT count(*) FROM pg_tables WHERE schemaname = 'feedlayout' AND tablename = 'feed'") == 0)
        // Pages are kept gzipped only (migration 5).
        #expect(
            try await Self.query(
                cluster,
                "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'feedlayout' AND table_name = 'page' AND column_name = 'json'")
                == 0)
    }

    /// Pages and the feed add their warning counts with one SQL function (migration 4): counts of a code add up,
    /// new codes join, nothing added changes nothing.
    @Test func warningCountsAddUp() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            for (stored, added, expected) in [
                (#"{"imageNotFound": 2, "invalidDate": 1}"#, #"{"invalidDate": 3, "xmlError": 1}"#,
                 ["imageNotFound": 2, "invalidDate": 4, "xmlError": 1]),
                ("{}", #"{"a": 1}"#, ["a": 1]),
                (#"{"a": 1}"#, "{}", ["a": 1]),
                ("{}", "{}", [:]),
            ] {
                let sum = try #require(
                    try await Self.value(
                        cluster, "SELECT feedlayout.add_counts('\(stored)', '\(added)')", as: String.self))
                #expect(try JSONDecoder().decode([String: Int].self, from: Data(sum.utf8)) == expected)
            }
        }
    }

    /// Runs one statement on the cluster's database; the first column of its first row as a number, if any.
    static func query(_ cluster: some PostgresTestStore, _ sql: String) async throws -> Int? {
        try await value(cluster, sql, as: Int.self)
    }

    /// Runs one statement on the cluster's database; the first column of its first row, if any.
    static func value<Value: PostgresDecodable & Sendable>(
        _ cluster: some PostgresTestStore, _ sql: String, as type: Value.Type
    ) async throws -> Value? where Value._DecodableType == Value {
        let configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: cluster.port, username: "postgres", password: nil, database: cluster.database,
            tls: .disable)
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            var first: Value?
            for try await value in try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger).decode(Value?.self) {
                if first == nil { first = value }
            }
            return first
        }
    }
}
