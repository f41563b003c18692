import FeedLayoutTestSupport
import Foundation
import LayoutPages
import Testing

@testable import LayoutStore

/// ``LayoutStore/storePages(_:layoutId:)`` on SQLite and on a throwaway PostgreSQL cluster: pages stored in batches
/// (two layouts of breakpoints interleaved, a page stored twice, across batches and within one) leave the store
/// exactly as storing them one by one does: the same pages, pins, parts' progress, counts and size.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PageBatchTests {
    static let oneByOne = String(repeating: "c", count: 32)
    static let batched = String(repeating: "d", count: 32)

    /// Page `page` of breakpoint layout `layoutIndex`: 3 pins; items and warnings counted on layout 0 only.
    static func page(_ page: Int, layoutIndex: Int, last: Bool) -> PageWrite {
        let pins = (0..<3).map { item in
            PinRecord(
                itemIndex: page * 3 + item, column: item % 2, columnSpan: 1, x: item + layoutIndex,
                y: page * 100 + item, width: 10, height: 10, pageIndex: page, jsonOffset: item * 7, jsonLength: 5)
        }
        let json = Array("{\"layout\":\(layoutIndex),\"page\":\(page)}\n".utf8)
        let counted = layoutIndex == 0
        return PageWrite(
            layoutIndex: layoutIndex, pageIndex: page, json: json, gzip: Gzip.compress(json),
            cursor: last ? nil : "fl4.cursor-\(layoutIndex)-\(page)", contentHeight: Double(page * 100 + 50),
            pins: pins, itemCount: counted ? 3 : 0,
            warnings: counted && page % 2 == 1 ? ["imageNotFound": page, "a\"b": 1] : [:])
    }

    /// The pages in the order a run with two breakpoints makes them: 5 of layout 0, 3 of layout 1.
    static let order: [(layoutIndex: Int, page: Int)] = [(0, 0), (1, 0), (0, 1), (0, 2), (1, 1), (0, 3), (1, 2), (0, 4)]

    static func write(_ entry: (layoutIndex: Int, page: Int)) -> PageWrite {
        page(entry.page, layoutIndex: entry.layoutIndex, last: entry == (0, 4) || entry == (1, 2))
    }

    static func start(_ id: String, in store: any LayoutStore) async throws {
        #expect(
            try await store.insertLayout(
                id: id, options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss/>".utf8),
                parts: [(width: 320, columns: 2), (width: 640, columns: 3)]))
        #expect(try await store.claim(id))
    }

    static func compare(_ store: any LayoutStore) async throws {
        try await start(oneByOne, in: store)
        for entry in order {
            try await store.storePage(write(entry), layoutId: oneByOne)
            // A page stored again (a restart, or a commit whose answer was lost) adds nothing.
            if entry == (0, 1) { try await store.storePage(write(entry), layoutId: oneByOne) }
        }

        try await start(batched, in: store)
        let writes = order.map(write)
        try await store.storePages(Array(writes[0..<3]), layoutId: batched)
        // Page 1 of layout 0 again, with new ones after it.
        try await store.storePages([writes[2]] + Array(writes[3..<6]), layoutId: batched)
        // And a page twice in one batch.
        try await store.storePages(Array(writes[6...]) + [writes[6]], layoutId: batched)

        let expected = try #require(try await store.layout(oneByOne))
        let actual = try #require(try await store.layout(batched))
        #expect(expected.itemCount == 15)
        #expect(expected.warnings == ["imageNotFound": 4, "a\"b": 2])
        #expect(actual.itemCount == expected.itemCount)
        #expect(actual.warnings == expected.warnings)
        #expect(actual.parts.count == 2)
        for (got, wanted) in zip(actual.parts, expected.parts) {
            #expect(got.pageCount == wanted.pageCount)
            #expect(got.lastCursor == wanted.lastCursor)
            #expect(got.contentHeight == wanted.contentHeight)
        }
        #expect(actual.parts.map(\.pageCount) == [5, 3])
        #expect(actual.parts.map(\.lastCursor) == [nil, nil])
        for (layoutIndex, page) in order {
            let stored = try await store.gzippedPage(batched, layoutIndex: layoutIndex, pageIndex: page)
            #expect(stored != nil)
            #expect(stored == (try await store.gzippedPage(oneByOne, layoutIndex: layoutIndex, pageIndex: page)))
        }
        for layoutIndex in 0..<2 {
            let pins = try await store.pins(batched, layoutIndex: layoutIndex, from: 0)
            let wanted = try await store.pins(oneByOne, layoutIndex: layoutIndex, from: 0)
            #expect(pins.count == (layoutIndex == 0 ? 15 : 9))
            #expect(pins.map(\.itemIndex) == wanted.map(\.itemIndex))
            #expect(pins.map(\.x) == wanted.map(\.x))
            #expect(pins.map(\.y) == wanted.map(\.y))
            #expect(pins.map(\.pageIndex) == wanted.map(\.pageIndex))
            #expect(pins.map(\.jsonOffset) == wanted.map(\.jsonOffset))
        }
        #expect(try await store.pageWithCursor("fl4.cursor-1-1", layoutId: batched)?.pageIndex == 1)
        let listing = try await store.listLayouts(after: nil, limit: 10)
        let bytes = listing.first { $0.id == batched }?.bytes
        #expect(bytes != nil)
        #expect(bytes == listing.first { $0.id == oneByOne }?.bytes)
    }

    @Test func sqlite() async throws {
        let (store, path) = try LayoutRemovalTests.sqliteStore()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try await Self.compare(store)
    }

    @Test func postgres() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            try await Self.compare(store)
        }
    }

    /// A batch for a layout whose lease this instance does not hold stores nothing.
    @Test func postgresRefusesABatchWithoutTheLease() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            #expect(
                try await store.insertLayout(
                    id: Self.batched, options: "{}", feedName: "feed.xml", baseURL: nil, feed: Array("<rss/>".utf8),
                    parts: [(width: 320, columns: 2), (width: 640, columns: 3)]))
            await #expect(throws: StoreError.self) {
                try await store.storePages(Self.order.prefix(3).map(Self.write), layoutId: Self.batched)
            }
            #expect(try await store.gzippedPage(Self.batched, layoutIndex: 0, pageIndex: 0) == nil)
            #expect(try await store.pins(Self.batched, layoutIndex: 0, from: 0).isEmpty)
            #expect(try await store.layout(Self.batched)?.itemCount == 0)
        }
    }
}
