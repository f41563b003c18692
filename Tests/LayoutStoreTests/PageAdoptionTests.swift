import FeedLayoutTestSupport
import Foundation
import LayoutPages
import Testing

@testable import LayoutStore

/// ``LayoutStore/adoptPages(from:pageCount:into:)`` on SQLite and on a throwaway PostgreSQL cluster: the pages, their
/// pins and the counts they carry are copied in one step, and the new layout goes on from there as if it had stored
/// them itself.
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
        let (store, path) = try LayoutRemovalTests.sqliteStore()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try await Self.adopt(store)
    }

    @Test func postgres() async throws {
        try await PostgresProbeCacheTests.withDatabase { cluster in
            let store = try await PostgresProbeCacheTests.openStore(cluster)
            defer { store.close() }
            try await Self.adopt(store)
        }
    }
}
