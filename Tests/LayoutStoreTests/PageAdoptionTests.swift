import FeedLayoutTestSupport
import Foundation
import GRDB
import LayoutPages
import PostgresNIO
import Testing

@testable import LayoutStore

/// ``LayoutStore/adoptPages(from:pageCount:into:)`` on SQLite and on a throwaway PostgreSQL cluster: the pages, their
/// pins and the counts they carry are taken in one step, by reference, and the new layout goes on from there as if it
/// had stored them itself; removing a layout whose rows others reference hands them over.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PageAdoptionTests {
    static let old = String(repeating: "a", count: 32)
    static let new = String(repeating: "b", count: 32)

    /// Page `page` of a layout: 3 pins, a warning on page 1.
    static func page(_ page: Int, of id: String, last: Bool) -> PageWrite {
        let pins = (0..<3).map { item in
            PinRecord(
                itemIndex: page * 3 + item, column: item % 2, columnSpan: 1, x: item, y: page * 100 + item, width: 10,
                height: 10, pageIndex: page, jsonOffset: item * 7, jsonLength: 5)
        }
        let json = Array("{\"page\":\(page)}\n".utf8)
        return PageWrite(
            layoutIndex: 0, pageIndex: page, json: json, gzip: Gzip.compress(json),
            cursor: last ? nil : "fl4.cursor-\(page)", contentHeight: Double(page * 100 + 50), pins: pins,
            itemCount: 3, warnings: page == 1 ? ["imageNotFound": 2, "a\"b": 1] : [:])
    }

    static func adopt(_ store: any LayoutStore) async throws {
        #expect(
            try await store.insertLayout(
                id: old, options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss/>".utf8),
                parts: [(width: 320, columns: 2)]))
        #expect(try await store.claim(old))
        for index in 0..<4 { try await store.storePage(page(index, of: old, last: index == 3), layoutId: old) }
        try await store.finishLayout(old, feedWarnings: ["xmlError": 1])

        #expect(
            try await store.insertLayout(
                id: new, options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss>.</rss>".utf8),
                parts: [(width: 320, columns: 2)]))
        #expect(try await store.claim(new))
        #expect(!(try await store.adoptPages(from: "0123", pageCount: 3, into: new)), "no such layout")
        #expect(!(try await store.adoptPages(from: old, pageCount: 5, into: new)), "more pages than it has")
        #expect(try await store.adoptPages(from: old, pageCount: 3, into: new))
        let record = try #require(try await store.layout(new))
        #expect(record.status == "running")
        #expect(record.itemCount == 9)
        #expect(record.warnings == ["imageNotFound": 2, "a\"b": 1], "the pages' warnings, not the feed's")
        #expect(record.parts.count == 1)
        #expect(record.parts[0].pageCount == 3)
        #expect(record.parts[0].lastCursor == "fl4.cursor-2")
        #expect(record.parts[0].contentHeight == 250)
        for index in 0..<3 {
            let copied = try await store.gzippedPage(new, layoutIndex: 0, pageIndex: index)
            #expect(copied != nil)
            #expect(copied == (try await store.gzippedPage(old, layoutIndex: 0, pageIndex: index)))
        }
        #expect(try await store.gzippedPage(new, layoutIndex: 0, pageIndex: 3) == nil)
        let pins = try await store.pins(new, layoutIndex: 0, from: 0)
        let oldPins = try await store.pins(old, layoutIndex: 0, from: 0)
        #expect(pins.count == 9)
        #expect(pins.map(\.itemIndex) == oldPins.prefix(9).map(\.itemIndex))
        #expect(pins.map(\.y) == oldPins.prefix(9).map(\.y))
        #expect(pins.map(\.jsonOffset) == oldPins.prefix(9).map(\.jsonOffset))
        #expect(try await store.pageWithCursor("fl4.cursor-1", layoutId: new)?.pageIndex == 1)
        // Once it has pages, nothing more is adopted.
        #expect(!(try await store.adoptPages(from: old, pageCount: 2, into: new)))

        // The layout goes on from there, and its size is what storing the pages itself would have made it.
        for index in 3..<5 { try await store.storePage(page(index, of: new, last: index == 4), layoutId: new) }
        try await store.finishLayout(new, feedWarnings: [:])
        let done = try #require(try await store.layout(new))
        #expect(done.itemCount == 15)
        #expect(done.parts[0].pageCount == 5)
        #expect(done.warnings == ["imageNotFound": 2, "a\"b": 1])
        var expectedBytes = "<rss>.</rss>".utf8.count
        for index in 0..<5 { expectedBytes += LayoutListing.bytes(of: page(index, of: new, last: index == 4)) }
        let listed = try await store.listLayouts(after: nil, limit: 10).first { $0.id == new }
        #expect(listed?.bytes == expectedBytes)
    }

    @Test func sqlite() async throws {
        try await Self.onSQLite { store, _ in try await Self.adopt(store) }
    }

    /// What the tests of references read of a store's tables, by their SQLite names.
    struct Tables {
        /// The rows of a table.
        var count: (String) async throws -> Int
        /// Adds a reference: pages `pages` of the layout, part 0, are the owner's.
        var share: (_ layout: String, _ pages: Range<Int>, _ owner: String) async throws -> Void
        /// Every page reference as (layout, pages, owner).
        var shares: () async throws -> [(String, Range<Int>, String)]

        static func sqlite(_ store: SQLiteLayoutStore) -> Tables {
            Tables(
                count: { table in
                    try await store.database.read { db in
                        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table)") ?? -1
                    }
                },
                share: { layout, pages, owner in
                    try await store.database.write { db in
                        try db.execute(
                            sql: """
                                INSERT INTO page_share (layoutId, layoutIndex, pageStart, pageEnd, ownerId)
                                VALUES (?, 0, ?, ?, ?)
                                """, arguments: [layout, pages.lowerBound, pages.upperBound, owner])
                    }
                },
                shares: {
                    try await store.database.read { db in
                        try Row.fetchAll(db, sql: "SELECT layoutId, pageStart, pageEnd, ownerId FROM page_share").map {
                            ($0["layoutId"], ($0["pageStart"] as Int)..<($0["pageEnd"] as Int), $0["ownerId"])
                        }
                    }
                })
        }

        static func postgres(_ cluster: some PostgresTestStore) -> Tables {
            Tables(
                count: { table in
                    try await PostgresFeedChunkTests.query(cluster, "SELECT count(*) FROM feedlayout.\(table)") ?? -1
                },
                share: { layout, pages, owner in
                    _ = try await PostgresFeedChunkTests.query(
                        cluster,
                        """
                        INSERT INTO feedlayout.page_share (layout_id, layout_index, page_start, page_end, owner_id)
                        VALUES ('\(layout)', 0, \(pages.lowerBound), \(pages.upperBound), '\(owner)')
                        """)
                },
                shares: {
                    let text =
                        try await PostgresFeedChunkTests.value(
                            cluster,
                            """
                            SELECT coalesce(string_agg(layout_id || ' ' || page_start || ' ' || page_end || ' ' || owner_id, ';'
                                ORDER BY layout_id, page_start), '') FROM feedlayout.page_share
                            """, as: String.self) ?? ""
                    return text.split(separator: ";").map { row in
                        let fields = row.split(separator: " ").map(String.init)
                        return (fields[0], Int(fields[1])!..<Int(fields[2])!, fields[3])
                    }
                })
        }
    }

    /// Pages are taken by reference: adopting adds no page or pin-block row, a layout adopting from one that
    /// adopted holds ranges of both, and removing any of them in any order leaves every other layout's pages, pins
    /// and cursors as they were, until the last one goes with every row.
    @Test func sqliteSharesRowsAndHandsThemOverOnRemoval() async throws {
        try await Self.onSQLite(Self.sharesRowsAndHandsThemOver)
    }

    @Test func postgresSharesRowsAndHandsThemOverOnRemoval() async throws {
        try await Self.onPostgres(Self.sharesRowsAndHandsThemOver)
    }

    /// Runs a test of references on a new SQLite store.
    static func onSQLite(_ test: (any LayoutStore, Tables) async throws -> Void) async throws {
        let (store, path) = try LayoutRemovalTests.sqliteStore()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try await test(store, Tables.sqlite(store))
    }

    /// Runs a test of references on a store in a throwaway PostgreSQL database.
    static func onPostgres(_ test: (any LayoutStore, Tables) async throws -> Void) async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            try await test(store, Tables.postgres(cluster))
        }
    }

    static func sharesRowsAndHandsThemOver(_ store: any LayoutStore, _ tables: Tables) async throws {
        let ids = (1...4).map { String(repeating: "\($0)", count: 32) }
        /// Page `index` as layout `owner` (0-based in `ids`) stores it: its number in the bytes, the cursor and the pins.
        func page(_ index: Int, owner: Int, last: Bool = false) -> PageWrite {
            let json = Array("{\"layout\":\(owner),\"page\":\(index)}\n".utf8)
            let pins = (0..<3).map { item in
                PinRecord(
                    itemIndex: index * 3 + item, column: 0, columnSpan: 1, x: owner, y: index * 100 + item, width: 10,
                    height: 10, pageIndex: index, jsonOffset: item * 7, jsonLength: 5)
            }
            return PageWrite(
                layoutIndex: 0, pageIndex: index, json: json, gzip: Gzip.compress(json),
                cursor: last ? nil : "fl4.cursor-\(owner)-\(index)", contentHeight: Double(index * 100 + 50),
                pins: pins,
                itemCount: 3, warnings: [:])
        }
        /// Which layout stored each page of each layout.
        var owners: [[Int]] = []
        func make(_ layout: Int, adopting: (from: Int, pages: Int)?, storing pageCount: Int) async throws {
            #expect(
                try await store.insertLayout(
                    id: ids[layout], options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss/>".utf8),
                    parts: [(width: 320, columns: 2)]))
            #expect(try await store.claim(ids[layout]))
            var pages: [Int] = []
            if let adopting {
                #expect(
                    try await store.adoptPages(from: ids[adopting.from], pageCount: adopting.pages, into: ids[layout]))
                pages = Array(owners[adopting.from].prefix(adopting.pages))
            }
            for index in pages.count..<pageCount {
                try await store.storePage(
                    page(index, owner: layout, last: index == pageCount - 1), layoutId: ids[layout])
                pages.append(layout)
            }
            try await store.finishLayout(ids[layout], feedWarnings: [:])
            owners.append(pages)
        }
        let rows = tables.count
        /// Every remaining layout's pages, pins and cursors are the ones its owners stored.
        func check(_ remaining: [Int]) async throws {
            for layout in remaining {
                let id = ids[layout]
                for (index, owner) in owners[layout].enumerated() {
                    let last = index == owners[owner].count - 1
                    #expect(
                        try await store.gzippedPage(id, layoutIndex: 0, pageIndex: index)
                            == Data(page(index, owner: owner, last: last).gzip), "layout \(layout + 1), page \(index)")
                    if !last {
                        let found = try await store.pageWithCursor("fl4.cursor-\(owner)-\(index)", layoutId: id)
                        #expect(found?.id == id && found?.pageIndex == index, "layout \(layout + 1), cursor \(index)")
                    }
                }
                #expect(try await store.gzippedPage(id, layoutIndex: 0, pageIndex: owners[layout].count) == nil)
                let pins = try await store.pins(id, layoutIndex: 0, from: 4)
                #expect(pins.map(\.itemIndex) == Array(4..<(owners[layout].count * 3)), "layout \(layout + 1)")
                #expect(pins.map(\.x) == owners[layout].flatMap { [$0, $0, $0] }.dropFirst(4).map { $0 })
                #expect(try await store.layout(id)?.itemCount == owners[layout].count * 3)
            }
        }

        try await make(0, adopting: nil, storing: 4)
        try await make(1, adopting: (0, 3), storing: 5)  // 0..<3 of layout 1, then its own
        try await make(2, adopting: (1, 4), storing: 6)  // ranges of layouts 1 and 2, then its own
        try await make(3, adopting: (0, 2), storing: 3)  // a second branch from layout 1
        #expect(owners == [[0, 0, 0, 0], [0, 0, 0, 1, 1], [0, 0, 0, 1, 2, 2], [0, 0, 3]])
        #expect(try await rows("page") == 4 + 2 + 2 + 1, "adopting copies no page")
        #expect(try await rows("pin_block") == 9)
        try await check([0, 1, 2, 3])
        // Without a layout, a cursor names the newest layout that has it.
        #expect(try await store.pageWithCursor("fl4.cursor-0-1", layoutId: nil)?.id == ids[3])
        #expect(try await store.pageWithCursor("fl4.cursor-1-3", layoutId: nil)?.id == ids[2])

        #expect(try await store.removeLayout(ids[0]))
        try await check([1, 2, 3])
        #expect(try await rows("page") == 3 + 2 + 2 + 1, "the page layout 1 alone had went with it")
        #expect(try await store.removeLayout(ids[2]))
        try await check([1, 3])
        #expect(try await store.removeLayout(ids[1]))
        try await check([3])
        #expect(try await rows("page") == 3)
        #expect(try await store.removeLayout(ids[3]))
        for table in ["page", "pin_block", "page_share", "part", "layout"] {
            #expect(try await rows(table) == 0, "\(table)")
        }
    }

    /// Ranges that only partly overlap, written directly (the adoptions of a subscription's versions nest their ranges
    /// today): removing their owner gives the heir its own ranges, splits another sharer's range around them, and
    /// hands what is left to a second heir. Every page and pin stays where its layout reads it.
    @Test func sqliteRemovalSplitsRangesThatOnlyPartlyOverlap() async throws {
        try await Self.onSQLite(Self.removalSplitsRanges)
    }

    @Test func postgresRemovalSplitsRangesThatOnlyPartlyOverlap() async throws {
        try await Self.onPostgres(Self.removalSplitsRanges)
    }

    static func removalSplitsRanges(_ store: any LayoutStore, _ tables: Tables) async throws {
        // Keys decide a tie between heirs: "3…" (a) before "2…" (b).
        let owner = String(repeating: "1", count: 32)
        let a = String(repeating: "3", count: 32)
        let b = String(repeating: "2", count: 32)
        let codes = [owner: 0, a: 1, b: 2]
        func page(_ index: Int, by layout: String, last: Bool = false) -> PageWrite {
            let json = Array("{\"layout\":\(codes[layout]!),\"page\":\(index)}\n".utf8)
            let pin = PinRecord(
                itemIndex: index, column: 0, columnSpan: 1, x: codes[layout]!, y: index * 100, width: 10, height: 10,
                pageIndex: index, jsonOffset: 0, jsonLength: 5)
            return PageWrite(
                layoutIndex: 0, pageIndex: index, json: json, gzip: Gzip.compress(json),
                cursor: last ? nil : "fl4.\(codes[layout]!)-\(index)", contentHeight: Double(index * 100),
                pins: [pin], itemCount: 1, warnings: [:])
        }
        func share(_ layout: String, _ pages: Range<Int>) async throws { try await tables.share(layout, pages, owner) }
        for id in [owner, a, b] {
            #expect(
                try await store.insertLayout(
                    id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss/>".utf8),
                    parts: [(width: 320, columns: 2)]))
            #expect(try await store.claim(id))
        }
        for index in 0..<8 { try await store.storePage(page(index, by: owner, last: index == 7), layoutId: owner) }
        // a: its own 0..<3, the owner's 3..<7, its own 7. b: the owner's 0..<4, its own 4..<6.
        for index in 0..<3 { try await store.storePage(page(index, by: a), layoutId: a) }
        try await share(a, 3..<7)
        try await store.storePage(page(7, by: a, last: true), layoutId: a)
        try await share(b, 0..<4)
        for index in 4..<6 { try await store.storePage(page(index, by: b, last: index == 5), layoutId: b) }
        let expected = [a: [a, a, a, owner, owner, owner, owner, a], b: [owner, owner, owner, owner, b, b]]
        func check() async throws {
            for (layout, owners) in expected {
                for (index, holder) in owners.enumerated() {
                    let stored = page(index, by: holder, last: index == (holder == owner ? 7 : owners.count - 1))
                    #expect(
                        try await store.gzippedPage(layout, layoutIndex: 0, pageIndex: index) == Data(stored.gzip),
                        "layout \(codes[layout]!), page \(index)")
                }
                let pins = try await store.pins(layout, layoutIndex: 0, from: 0)
                #expect(pins.map(\.x) == owners.map { codes[$0]! }, "layout \(codes[layout]!)")
            }
        }
        try await check()
        #expect(try await store.removeLayout(owner))
        try await check()
        let rows = try await tables.shares().map { "\(codes[$0.0]!) \($0.1) \(codes[$0.2]!)" }
        #expect(rows == ["2 3..<4 1"], "b keeps page 3 from a, the first heir; its pages 0..<3 are its own now")
        #expect(try await tables.count("page") == 8 + 5)
    }

    /// Another instance adding a reference to a layout's rows holds that layout `FOR SHARE` until it commits: a removal
    /// of the layout meanwhile waits for it, then hands the rows over with the new reference (without its row lock it
    /// would miss the reference and fail on the foreign key).
    @Test func postgresRemovalWaitsForAReferenceBeingAdded() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            let (owner, sharer) = (String(repeating: "1", count: 32), String(repeating: "2", count: 32))
            for id in [owner, sharer] {
                #expect(
                    try await store.insertLayout(
                        id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss/>".utf8),
                        parts: [(width: 320, columns: 2)]))
                #expect(try await store.claim(id))
            }
            for index in 0..<4 {
                try await store.storePage(Self.page(index, of: owner, last: index == 3), layoutId: owner)
            }
            try await store.finishLayout(owner, feedWarnings: [:])
            let logger = PostgresProbeCacheTests.logger
            let configuration = PostgresConnection.Configuration(
                host: "127.0.0.1", port: cluster.port, username: "postgres", password: nil,
                database: cluster.database, tls: .disable)
            // The other instance, by hand: the lock and the reference adoptPages takes and adds, not yet committed.
            let other = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
            let watcher: PostgresConnection
            do {
                watcher = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: logger)
            } catch {
                try? await other.close()
                throw error
            }
            do {
                try await other.query("BEGIN", logger: logger)
                try await other.query("SELECT id FROM feedlayout.layout WHERE id = \(owner) FOR SHARE", logger: logger)
                try await other.query(
                    """
                    INSERT INTO feedlayout.page_share (layout_id, layout_index, page_start, page_end, owner_id)
                    VALUES (\(sharer), 0, 0, 3, \(owner))
                    """, logger: logger)
                let removal = Task { try await store.removeLayout(owner) }
                // Until the removal waits for a lock (in this test's database: other tests share the cluster).
                while true {
                    var waiting = 0
                    for try await count in try await watcher.query(
                        """
                        SELECT count(*)::int8 FROM pg_stat_activity
                        WHERE datname = current_database() AND wait_event_type = 'Lock'
                        """, logger: logger
                    ).decode(Int.self) {
                        waiting = count
                    }
                    if waiting > 0 { break }
                    try await Task.sleep(for: .milliseconds(10))
                }
                try await other.query("COMMIT", logger: logger)
                #expect(try await removal.value)
            } catch {
                try? await other.close()
                try? await watcher.close()
                throw error
            }
            try await other.close()
            try await watcher.close()
            for index in 0..<3 {
                #expect(
                    try await store.gzippedPage(sharer, layoutIndex: 0, pageIndex: index)
                        == Data(Self.page(index, of: owner, last: false).gzip), "page \(index)")
            }
            #expect(try await store.pins(sharer, layoutIndex: 0, from: 0).count == 9)
            let tables = Tables.postgres(cluster)
            #expect(try await tables.count("page") == 3, "the sharer's pages are its own rows now")
            #expect(try await tables.count("page_share") == 0)
        }
    }

    @Test func postgres() async throws {
        try await Self.onPostgres { store, _ in try await Self.adopt(store) }
    }
}
