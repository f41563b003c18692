import FeedLayoutTestSupport
import Foundation
import GRDB
import LayoutPages
import Testing

@testable import LayoutStore

/// Removing, listing and sizing layouts, on SQLite and on a throwaway PostgreSQL cluster: a removal takes every
/// row of the layout in one transaction (a failure half-way leaves it whole), an SQLite store's feed file goes
/// after its rows (one a kill leaves behind is removed at the next start), and listings page through layouts in
/// the order they were made, each exactly once.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct LayoutRemovalTests {
    static func sqliteStore() throws -> (SQLiteLayoutStore, String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("removal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("store.sqlite").path
        return (try SQLiteLayoutStore(path: path), path)
    }

    /// A layout of `pages` pages of 3 pins each, done.
    static func makeLayout(_ store: any LayoutStore, id: String, pages: Int = 3, feed: [UInt8] = Array("<rss/>".utf8))
        async throws
    {
        #expect(
            try await store.insertLayout(
                id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: feed, parts: [(width: 320, columns: 2)]
            ))
        #expect(try await store.claim(id))
        for page in 0..<pages {
            let pins = (0..<3).map { item in
                PinRecord(
                    itemIndex: page * 3 + item, column: item % 2, columnSpan: 1, x: 0, y: page * 100 + item, width: 10,
                    height: 10, pageIndex: page, jsonOffset: 0, jsonLength: 2)
            }
            let json = Array("{\"page\":\(page)}\n".utf8)
            try await store.storePage(
                PageWrite(
                    layoutIndex: 0, pageIndex: page, json: json, gzip: Gzip.compress(json),
                    cursor: page == pages - 1 ? nil : "fl4.\(id)-\(page)", contentHeight: Double(page * 100),
                    pins: pins,
                    itemCount: 3, warnings: [:]),
                layoutId: id)
        }
        try await store.finishLayout(id, feedWarnings: [:])
    }

    /// What `makeLayout` stores, as ``LayoutListing/bytes`` counts it.
    static func expectedBytes(id: String, pages: Int, feed: Int = 6) -> Int {
        var bytes = feed
        for page in 0..<pages {
            let json = Array("{\"page\":\(page)}\n".utf8)
            bytes += Gzip.compress(json).count + 3 * LayoutListing.pinRecordBytes
            if page < pages - 1 { bytes += "fl4.\(id)-\(page)".utf8.count }
        }
        return bytes
    }

    /// The checks both stores pass.
    static func removeListAndSize(_ store: any LayoutStore) async throws {
        let ids = (0..<5).map { String(repeating: "\($0)", count: 32) }
        for id in ids {
            try await makeLayout(store, id: id)
            // Distinct creation times (the listing's order); ids break ties.
            try await Task.sleep(for: .milliseconds(2))
        }
        let all = try await store.listLayouts(after: nil, limit: 100)
        #expect(all.map(\.id) == ids)
        for layout in all {
            #expect(layout.bytes == expectedBytes(id: layout.id, pages: 3), "\(layout)")
            #expect(layout.status == "done" && layout.itemCount == 9 && layout.lastRead == nil)
            #expect(abs(layout.created.timeIntervalSinceNow) < 600)
        }
        #expect(
            try await store.usage() == StoreUsage(bytes: all.map(\.bytes).reduce(0, +), layoutsByStatus: ["done": 5]))
        // Two at a time, each once.
        var listed: [String] = []
        var cursor: LayoutListCursor?
        repeat {
            let batch = try await store.listLayouts(after: cursor, limit: 2)
            listed += batch.map(\.id)
            cursor = batch.count == 2 ? batch.last?.cursor : nil
            #expect(cursor.map { LayoutListCursor($0.description) == $0 } ?? true)
        } while cursor != nil
        #expect(listed == ids)

        // Reads: the latest stays; the removable order follows them (never read: by creation).
        let base = Date().addingTimeInterval(3600)
        try await store.recordReads([ids[0], ids[2]], at: base)
        try await store.recordReads([ids[0]], at: base.addingTimeInterval(-60))
        try await store.recordReads([ids[1]], at: base.addingTimeInterval(60))
        let read = try await store.listLayouts(after: nil, limit: 100)
        #expect(read[0].lastReadMicroseconds == base.microsecondsSince1970)
        #expect(read[1].lastReadMicroseconds == base.addingTimeInterval(60).microsecondsSince1970)
        // 0 and 2 were last read at the same moment: by creation, then.
        #expect(try await store.removableLayouts(limit: 100).map(\.id) == [ids[3], ids[4], ids[0], ids[2], ids[1]])
        #expect(try await store.removableLayouts(limit: 2).map(\.id) == [ids[3], ids[4]])

        // A removal takes everything of that layout and nothing else.
        #expect(try await store.removeLayout(ids[2]))
        #expect(try await store.layout(ids[2]) == nil)
        #expect(try await store.feed(of: ids[2]) == nil)
        #expect(try await store.gzippedPage(ids[2], layoutIndex: 0, pageIndex: 0) == nil)
        #expect(try await store.pins(ids[2], layoutIndex: 0, from: 0).isEmpty)
        #expect(try await store.pageWithCursor("fl4.\(ids[2])-0", layoutId: nil) == nil)
        #expect(try await !store.removeLayout(ids[2]))
        #expect(try await store.listLayouts(after: nil, limit: 100).map(\.id) == [ids[0], ids[1], ids[3], ids[4]])
        #expect(try await store.pins(ids[3], layoutIndex: 0, from: 0).count == 9)
        #expect(try await store.feed(of: ids[3]) == Array("<rss/>".utf8))
        #expect(try await store.usage().layoutsByStatus == ["done": 4])
        // A running layout is never offered for removal.
        #expect(
            try await store.insertLayout(
                id: String(repeating: "f", count: 32), options: "{}", feedName: "f", baseURL: nil, feed: [],
                parts: [(width: 320, columns: 2)]))
        #expect(try await !store.removableLayouts(limit: 100).map(\.id).contains(String(repeating: "f", count: 32)))
        #expect(try await store.usage().layoutsByStatus == ["done": 4, "running": 1])
    }

    @Test func sqliteRemovesListsAndSizes() async throws {
        let (store, path) = try Self.sqliteStore()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try await Self.removeListAndSize(store)
        #expect(!FileManager.default.fileExists(atPath: path + ".feeds/" + String(repeating: "2", count: 32)))
        #expect(FileManager.default.fileExists(atPath: path + ".feeds/" + String(repeating: "3", count: 32)))
    }

    @Test func postgresRemovesListsAndSizes() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            try await Self.removeListAndSize(store)
            for table in ["page", "pin_block", "part", "feed_chunk"] {
                #expect(
                    try await PostgresFeedChunkTests.query(
                        cluster,
                        "SELECT count(*) FROM feedlayout.\(table) WHERE layout_id = '\(String(repeating: "2", count: 32))'"
                    )
                        == 0, "\(table)")
            }
        }
    }

    /// A removal that fails after its first statements (here a trigger refuses the layout row's deletion, as a kill
    /// or a full disk would stop it) leaves the layout whole: its pins and pages were deleted in the same
    /// transaction, which is rolled back.
    @Test func sqliteRemovalIsOneTransaction() async throws {
        let (store, path) = try Self.sqliteStore()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let id = String(repeating: "a", count: 32)
        try await Self.makeLayout(store, id: id)
        try await store.database.write { db in
            try db.execute(
                sql: "CREATE TRIGGER refuse BEFORE DELETE ON layout BEGIN SELECT RAISE(ABORT, 'refused'); END")
        }
        await #expect(throws: StoreError.self) { try await store.removeLayout(id) }
        #expect(try await store.pins(id, layoutIndex: 0, from: 0).count == 9)
        #expect(try await store.page(id, layoutIndex: 0, pageIndex: 2, gzip: false) == Data("{\"page\":2}\n".utf8))
        #expect(try await store.layout(id)?.parts.first?.pageCount == 3)
        #expect(FileManager.default.fileExists(atPath: path + ".feeds/" + id))
        try await store.database.write { db in try db.execute(sql: "DROP TRIGGER refuse") }
        #expect(try await store.removeLayout(id))
        #expect(try await store.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM pin_block") } == 0)
    }

    @Test func postgresRemovalIsOneTransaction() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            let id = String(repeating: "a", count: 32)
            try await Self.makeLayout(store, id: id)
            for statement in [
                "CREATE FUNCTION feedlayout.refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
                // After the cascade has deleted the pins: the refusal rolls the whole statement back.
                "CREATE TRIGGER refuse AFTER DELETE ON feedlayout.layout FOR EACH ROW EXECUTE FUNCTION feedlayout.refuse()",
            ] {
                _ = try await PostgresFeedChunkTests.query(cluster, statement)
            }
            await #expect(throws: StoreError.self) { try await store.removeLayout(id) }
            #expect(try await store.pins(id, layoutIndex: 0, from: 0).count == 9)
            #expect(try await store.layout(id)?.parts.first?.pageCount == 3)
            #expect(try await store.feed(of: id) == Array("<rss/>".utf8))
            _ = try await PostgresFeedChunkTests.query(cluster, "DROP TRIGGER refuse ON feedlayout.layout")
            #expect(try await store.removeLayout(id))
            #expect(try await PostgresFeedChunkTests.query(cluster, "SELECT count(*) FROM feedlayout.pin_block") == 0)
        }
    }

    /// A process killed after a removal's transaction and before its feed file went: the next start removes the
    /// file no row names, and keeps the others.
    @Test func aFeedFileLeftByAKilledRemovalGoesAtTheNextStart() async throws {
        let path: String
        let (removed, kept) = (String(repeating: "b", count: 32), String(repeating: "c", count: 32))
        do {
            let (store, storePath) = try Self.sqliteStore()
            path = storePath
            try await Self.makeLayout(store, id: removed)
            try await Self.makeLayout(store, id: kept)
            // The removal's transaction, without what follows it.
            try await store.database.write { db in
                for table in ["pin_block", "page", "part"] {
                    try db.execute(sql: "DELETE FROM \(table) WHERE layoutId = ?", arguments: [removed])
                }
                try db.execute(sql: "DELETE FROM layout WHERE id = ?", arguments: [removed])
            }
            #expect(FileManager.default.fileExists(atPath: path + ".feeds/" + removed))
        }
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let deadline = ContinuousClock.now + .seconds(30)
        var reopened: SQLiteLayoutStore?
        while reopened == nil {
            do {
                reopened = try SQLiteLayoutStore(path: path)
            } catch {
                guard error.message.contains("another process"), ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path + ".feeds") == [kept])
        #expect(try await reopened?.feed(of: kept) == Array("<rss/>".utf8))
    }

    /// A store made before sizes were kept gets them counted from what it holds, and its creation times in whole
    /// microseconds (what a listing's cursor names).
    @Test func anOlderSQLiteStoreGetsItsSizes() async throws {
        let path: String
        let id = String(repeating: "d", count: 32)
        do {
            let (store, storePath) = try Self.sqliteStore()
            path = storePath
            try await Self.makeLayout(store, id: id, pages: 2, feed: Array(repeating: 0x41, count: 777))
            try await store.database.write { db in
                try db.execute(sql: "UPDATE layout SET feedBytes = 0, createdAt = 1764356400.1234567")
                try db.execute(sql: "UPDATE part SET storedBytes = 0")
                try db.execute(sql: "DROP INDEX layout_by_creation")
                try db.execute(sql: "ALTER TABLE layout DROP COLUMN feedBytes")
                try db.execute(sql: "ALTER TABLE layout DROP COLUMN lastReadAt")
                try db.execute(sql: "ALTER TABLE part DROP COLUMN storedBytes")
                try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier = 'sizes-and-reads'")
                // Pins were a row each then (the "pin-blocks" migration comes after).
                try db.execute(
                    sql: """
                        CREATE TABLE pin (layoutId TEXT, layoutIndex INTEGER, itemIndex INTEGER, columnIndex INTEGER,
                            columnSpan INTEGER, x INTEGER, y INTEGER, width INTEGER, height INTEGER, pageIndex INTEGER,
                            jsonOffset INTEGER, jsonLength INTEGER);
                        INSERT INTO pin SELECT layoutId, layoutIndex, pageIndex * 3 + value, 0, 1, 0, 0, 10, 10,
                            pageIndex, 0, 1
                        FROM pin_block, (SELECT 0 AS value UNION ALL SELECT 1 UNION ALL SELECT 2);
                        DROP TABLE pin_block;
                        DELETE FROM grdb_migrations WHERE identifier = 'pin-blocks';
                        """)
            }
        }
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let deadline = ContinuousClock.now + .seconds(30)
        var reopened: SQLiteLayoutStore?
        while reopened == nil {
            do {
                reopened = try SQLiteLayoutStore(path: path)
            } catch {
                guard error.message.contains("another process"), ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let listed = try #require(try await reopened?.listLayouts(after: nil, limit: 10).first)
        #expect(listed.bytes == Self.expectedBytes(id: id, pages: 2, feed: 777))
        #expect(listed.createdMicroseconds == 1_764_356_400_123_457)
        #expect(try await reopened?.listLayouts(after: listed.cursor, limit: 10).isEmpty == true)
        #expect(try await reopened?.pins(id, layoutIndex: 0, from: 0).map(\.itemIndex) == Array(0..<6))
    }
}
