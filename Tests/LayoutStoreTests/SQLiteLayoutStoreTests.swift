import Foundation
import GRDB
import LayoutPages
import Testing

@testable import LayoutStore

/// The SQLite store: posted feeds are files beside the database (`STORE.feeds/ID`), pages are kept gzipped only.
@Suite struct SQLiteLayoutStoreTests {
    private static func temporaryStorePath() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feed-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent("store.sqlite").path
    }

    private static func insert(_ store: SQLiteLayoutStore, id: String, feed: [UInt8]) async throws -> Bool {
        try await store.insertLayout(
            id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: feed, parts: [(width: 320, columns: 2)])
    }

    private static func insert(
        _ store: SQLiteLayoutStore, id: String, feed: [UInt8], sharing: LayoutFeedPrefix
    ) async throws -> Bool {
        try await store.insertLayout(
            id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: feed, sharing: sharing,
            parts: [(width: 320, columns: 2)])
    }

    private static func files(_ path: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: path + ".feeds").sorted()
    }

    /// Versions of a feed with items appended: the first is stored whole, each later one as a delta of that first
    /// (the root), even when its predecessor is itself a delta; each reads back whole. The root outlives its own
    /// layout while deltas name it, and goes with the last of them.
    @Test func appendedVersionsAreDeltasOfOneRootThatStaysWhileTheyNeedIt() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let head = (0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
        let v1 = head + Array("</channel>".utf8)
        let v2 = head + Array("<item>2</item></channel>".utf8)
        let v3 = head + Array("<item>2</item><item>3</item></channel>".utf8)
        let store = try SQLiteLayoutStore(path: path)
        #expect(try await Self.insert(store, id: "v1", feed: v1))
        #expect(try await Self.insert(store, id: "v2", feed: v2, sharing: LayoutFeedPrefix(layoutId: "v1", prefixLength: head.count)))
        // v3 extends v2 past v2's cut: its delta names v1, the root, with the same prefix.
        #expect(try await Self.insert(store, id: "v3", feed: v3, sharing: LayoutFeedPrefix(layoutId: "v2", prefixLength: head.count + 14)))
        #expect(try Self.files(path) == ["v1", "v2.delta", "v3.delta"])
        let delta3 = try #require(FileManager.default.contents(atPath: path + ".feeds/v3.delta"))
        #expect(delta3.count < 200, "the appended bytes and a header line, not the feed")
        #expect(delta3.starts(with: Data("feedlayout-feed-delta 1 v1 \(head.count) \(v1.count)\n".utf8)))
        #expect(try await store.feed(of: "v1") == v1)
        #expect(try await store.feed(of: "v2") == v2)
        #expect(try await store.feed(of: "v3") == v3)

        // The root's layout goes: its bytes stay for the deltas, under a name no layout has.
        #expect(try await store.removeLayout("v1"))
        #expect(try Self.files(path) == ["v1.base", "v2.delta", "v3.delta"])
        #expect(try await store.feed(of: "v1") == nil)
        #expect(try await store.feed(of: "v3") == v3)
        // A later version may still share them.
        let v4 = v3.dropLast(10) + Array("<item>4</item></channel>".utf8)
        #expect(try await Self.insert(store, id: "v4", feed: Array(v4), sharing: LayoutFeedPrefix(layoutId: "v3", prefixLength: v3.count - 10)))
        #expect(try Self.files(path) == ["v1.base", "v2.delta", "v3.delta", "v4.delta"])
        #expect(try await store.feed(of: "v4") == Array(v4))
        // A restart keeps what rows and deltas need.
        let reopened = try await Self.reopen(path, closing: store)
        #expect(try Self.files(path) == ["v1.base", "v2.delta", "v3.delta", "v4.delta"])
        for id in ["v2", "v3"] { #expect(try await reopened.removeLayout(id)) }
        #expect(try Self.files(path) == ["v1.base", "v4.delta"])
        #expect(try await reopened.feed(of: "v4") == Array(v4))
        #expect(try await reopened.removeLayout("v4"))
        #expect(try Self.files(path) == [], "the last delta takes its root with it")
    }

    /// A delta is written only when it pays: a feed that shares less than three quarters of its bytes, or whose
    /// predecessor's feed is not there, is stored whole.
    @Test func aFeedThatSharesLittleOrNothingThereIsStoredWhole() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteLayoutStore(path: path)
        let v1 = Array(repeating: UInt8(ascii: "a"), count: 1000)
        let v2 = v1 + Array(repeating: UInt8(ascii: "b"), count: 400)
        #expect(try await Self.insert(store, id: "v1", feed: v1))
        #expect(try await Self.insert(store, id: "v2", feed: v2, sharing: LayoutFeedPrefix(layoutId: "v1", prefixLength: 1000)))
        #expect(try await Self.insert(store, id: "v3", feed: v2 + [1], sharing: LayoutFeedPrefix(layoutId: "gone", prefixLength: 1000)))
        #expect(try Self.files(path) == ["v1", "v2", "v3"])
        #expect(try await store.feed(of: "v3") == v2 + [1])
    }

    /// What a crash during removals leaves: a delta whose row went is removed at the next start, and a root whose
    /// row went while a delta still names it is kept for that delta.
    @Test func aRestartKeepsTheRootsThatDeltasNameAndNothingElse() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let head = Array(repeating: UInt8(ascii: "x"), count: 100_000)
        do {
            let store = try SQLiteLayoutStore(path: path)
            #expect(try await Self.insert(store, id: "r", feed: head))
            #expect(try await Self.insert(store, id: "d", feed: head + [1], sharing: LayoutFeedPrefix(layoutId: "r", prefixLength: head.count)))
            #expect(try await Self.insert(store, id: "e", feed: head + [2], sharing: LayoutFeedPrefix(layoutId: "r", prefixLength: head.count)))
            // Rows removed, files left, as a kill between the two steps leaves them.
            try await store.database.write { db in
                for id in ["r", "e"] {
                    try db.execute(sql: "DELETE FROM part WHERE layoutId = ?", arguments: [id])
                    try db.execute(sql: "DELETE FROM layout WHERE id = ?", arguments: [id])
                }
            }
            store.close()
        }
        let store = try await Self.reopen(path)
        #expect(try Self.files(path) == ["d.delta", "r.base"])
        #expect(try await store.feed(of: "d") == head + [1])
    }

    @Test func aPostedFeedIsAFileReadBackWhole() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let feed = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let store = try SQLiteLayoutStore(path: path)
        #expect(try await Self.insert(store, id: "a1", feed: feed))
        #expect(FileManager.default.contents(atPath: path + ".feeds/a1") == Data(feed))
        #expect(try await store.feed(of: "a1") == feed)
        #expect(try await store.feed(of: "unknown") == nil)
        // Posting the same layout again stores nothing new.
        #expect(try await !Self.insert(store, id: "a1", feed: feed))
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + ".feeds") == ["a1"])
    }

    @Test func aRestartRemovesWhatACrashLeftAndKeepsTheFeedsOfLayouts() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let store = try SQLiteLayoutStore(path: path)
            #expect(try await Self.insert(store, id: "kept", feed: Array("<rss/>".utf8)))
        }
        // A crash after the file was written and before its row was committed, and one in the middle of writing.
        FileManager.default.createFile(atPath: path + ".feeds/orphan", contents: Data("<rss/>".utf8))
        FileManager.default.createFile(atPath: path + ".feeds/kept.123.456.partial", contents: Data("<r".utf8))
        let store = try await Self.reopen(path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + ".feeds") == ["kept"])
        #expect(try await store.feed(of: "kept") == Array("<rss/>".utf8))
    }

    /// Opens the store again once the previous instance has let its lock go: the last reference to it can outlive
    /// its scope for a moment (GRDB's queues finishing up).
    private static func reopen(_ path: String, closing open: SQLiteLayoutStore) async throws -> SQLiteLayoutStore {
        open.close()
        return try await reopen(path)
    }

    private static func reopen(_ path: String) async throws -> SQLiteLayoutStore {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try SQLiteLayoutStore(path: path)
            } catch {
                guard error.message.contains("another process"), ContinuousClock.now < deadline else { throw error }
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// A stopped service closes its store, and the lock goes with the close, not with the last reference: a service
    /// started again in the same process gets in at once, and the old instance's end does not undo the new one's lock.
    @Test func closingLetsTheLockGoAndTheOldInstanceEndingKeepsTheNewOnesLock() throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var first: SQLiteLayoutStore? = try SQLiteLayoutStore(path: path)
        #expect(throws: StoreError.self, "held while open") { _ = try SQLiteLayoutStore(path: path) }
        first?.close()
        first?.close()
        let second = try SQLiteLayoutStore(path: path)
        first = nil
        let error = #expect(throws: StoreError.self, "still held by the second") { _ = try SQLiteLayoutStore(path: path) }
        #expect(error?.message.contains("another process is using this store") == true)
        withExtendedLifetime(second) {}
    }

    @Test func aStoreMadeBeforeFeedFilesStillReadsItsFeedsFromTheTable() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteLayoutStore(path: path)
        try await store.database.write { db in
            try db.execute(
                sql: "INSERT INTO layout (id, status, options, feedName, createdAt) VALUES ('old', 'running', '{}', 'f', 0)")
            try db.execute(sql: "INSERT INTO feed (layoutId, bytes) VALUES ('old', ?)", arguments: [Data("<rss>old</rss>".utf8)])
        }
        #expect(try await store.feed(of: "old") == Array("<rss>old</rss>".utf8))
    }

    @Test func pagesAreKeptGzippedAndServedInEitherForm() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteLayoutStore(path: path)
        #expect(try await Self.insert(store, id: "p", feed: Array("<rss/>".utf8)))
        let json = Array(#"{"items":[{"index":0}],"page":0}"#.utf8) + [0x0A]
        let write = PageWrite(
            layoutIndex: 0, pageIndex: 0, json: json, gzip: Gzip.compress(json), cursor: "c1", contentHeight: 100,
            pins: [], itemCount: 1, warnings: [:])
        try await store.storePage(write, layoutId: "p")
        #expect(try await store.page("p", layoutIndex: 0, pageIndex: 0, gzip: true) == Data(write.gzip))
        #expect(try await store.page("p", layoutIndex: 0, pageIndex: 0, gzip: false) == Data(json))
        #expect(try await store.page("p", layoutIndex: 0, pageIndex: 1, gzip: false) == nil)
        let columns = try await store.database.read { db in try db.columns(in: "page").map(\.name) }
        #expect(!columns.contains("json"), "only the gzipped form is stored")
    }

    /// Callers decide by a failure's code: a file that is no store cannot be opened, a page that is not gzip is
    /// damaged, and both messages name what failed.
    @Test func failuresCarryTheirCodeAndNameTheStore() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x41, count: 4096))
        do {
            _ = try SQLiteLayoutStore(path: path)
            Issue.record("a file of 4,096 'A's opened as a store")
        } catch {
            #expect(error.code == .cannotOpen)
            #expect(error.message.hasPrefix(path + ": not a FeedLayout store"), "\(error.message)")
            #expect(!error.isTransient)
        }
        try FileManager.default.removeItem(atPath: path)
        let store = try SQLiteLayoutStore(path: path)
        #expect(try await Self.insert(store, id: "d", feed: Array("<rss/>".utf8)))
        let json = Array("{}\n".utf8)
        try await store.storePage(
            PageWrite(
                layoutIndex: 0, pageIndex: 0, json: json, gzip: json, cursor: nil, contentHeight: 0, pins: [],
                itemCount: 0, warnings: [:]),
            layoutId: "d")
        await #expect {
            try await store.page("d", layoutIndex: 0, pageIndex: 0, gzip: false)
        } throws: { error in
            (error as? StoreError)?.code == .damaged && "\(error)".contains("page 0 of layout d")
        }
    }

    /// A store whose layouts kept their options as command-line arguments gets them as named options' JSON, read
    /// back as the same options.
    @Test func optionsStoredAsArgumentsBecomeNamedOptions() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let store = try SQLiteLayoutStore(path: path)
            // The store as it was before the migration: an `arguments` column, the migration not yet applied.
            try await store.database.write { db in
                try db.execute(sql: "ALTER TABLE layout ADD COLUMN arguments TEXT NOT NULL DEFAULT '[]'")
                try db.execute(
                    sql: "INSERT INTO layout (id, status, arguments, feedName, createdAt) VALUES ('old', 'done', ?, 'f', 0)",
                    arguments: [Self.oldArguments])
                try db.execute(sql: "ALTER TABLE layout DROP COLUMN options")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'options-json'")
            }
        }
        let store = try await Self.reopen(path)
        let record = try #require(try await store.layout("old"))
        #expect(record.options == Self.convertedOptions)
        let columns = try await store.database.read { db in try db.columns(in: "layout").map(\.name) }
        #expect(!columns.contains("arguments"))
        let named = try LayoutOptionValues.named(storedJSON: record.options)
        #expect(try LayoutOptionValues(named: named).options() == Self.expectedOptions)
    }

    /// A store that kept a row per pin gets a block per page, each pin as it was, found from any item on.
    @Test func pinRowsBecomeOneBlockPerPage() async throws {
        let path = try Self.temporaryStorePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        do {
            let store = try SQLiteLayoutStore(path: path)
            try await store.database.write { db in
                try db.execute(
                    sql: """
                        DROP TABLE pin_block;
                        CREATE TABLE pin (layoutId TEXT, layoutIndex INTEGER, itemIndex INTEGER, columnIndex INTEGER,
                            columnSpan INTEGER, x INTEGER, y INTEGER, width INTEGER, height INTEGER, pageIndex INTEGER,
                            jsonOffset INTEGER, jsonLength INTEGER);
                        INSERT INTO layout (id, status, options, feedName, createdAt) VALUES ('old', 'done', '{}', 'f', 0);
                        DELETE FROM grdb_migrations WHERE identifier = 'pin-blocks';
                        """)
                // Two parts, two pages in the first, rows out of order.
                for (part, item, page) in [(0, 3, 1), (0, 0, 0), (1, 0, 0), (0, 2, 1), (0, 1, 0)] {
                    try db.execute(
                        sql: "INSERT INTO pin VALUES ('old', ?, ?, ?, 1, ?, ?, 100, ?, ?, ?, ?)",
                        arguments: [part, item, item % 2, item * 10 + part, 9_000_000_000 + item, 50 + item, page, item * 7, 30])
                }
            }
        }
        let store = try await Self.reopen(path)
        let pins = try await store.pins("old", layoutIndex: 0, from: 0)
        #expect(pins.map(\.itemIndex) == [0, 1, 2, 3])
        #expect(pins.map(\.pageIndex) == [0, 0, 1, 1])
        #expect(pins.map(\.y) == [9_000_000_000, 9_000_000_001, 9_000_000_002, 9_000_000_003])
        #expect(pins.map { [$0.column, $0.columnSpan, $0.x, $0.width, $0.height, $0.jsonOffset, $0.jsonLength] }
            == (0..<4).map { [$0 % 2, 1, $0 * 10, 100, 50 + $0, $0 * 7, 30] })
        #expect(try await store.pins("old", layoutIndex: 0, from: 2).map(\.itemIndex) == [2, 3])
        #expect(try await store.pins("old", layoutIndex: 0, from: 3).map(\.itemIndex) == [3])
        #expect(try await store.pins("old", layoutIndex: 0, from: 4).isEmpty)
        #expect(try await store.pins("old", layoutIndex: 1, from: 0).map(\.x) == [1])
        let tables = try await store.database.read { db in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") }
        #expect(!tables.contains("pin"))
    }

    /// Arguments as the service stored them, and what they become.
    static let oldArguments = #"["--breakpoints=375:2,768:3","--fallback-font=DejaVu Serif","--fallback-font=Noto Sans CJK JP","--line-height=1.4x","--page-size=20","--placeholders","--row-gap=12.5"]"#
    static let convertedOptions =
        #"{"options":{"breakpoints":"375:2,768:3","fallbackFont":["DejaVu Serif","Noto Sans CJK JP"],"lineHeight":"1.4x","pageSize":"20","placeholders":true,"rowGap":"12.5"},"version":1}"#
    static var expectedOptions: LayoutOptions {
        var values = LayoutOptionValues()
        values.breakpoints = "375:2,768:3"
        values.fallbackFont = ["DejaVu Serif", "Noto Sans CJK JP"]
        values.lineHeight = "1.4x"
        values.pageSize = 20
        values.placeholders = true
        values.rowGap = 12.5
        return try! values.options()
    }
}
