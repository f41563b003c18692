import Foundation
import XCTest

@testable import FeedLayoutClient

/// The index's answers against a plain scan of every pin (the service's rules written out the simplest way), on
/// every kind of layout the fixtures hold, with all pages loaded and with only some.
final class PinIndexTests: XCTestCase {
    /// The service's rule, pin by pin: frames and the rectangle in device pixels (the rectangle rounded outwards),
    /// a pin counts when it shares area with a rectangle that has some.
    static func scan(_ items: [Item], _ rect: Rect, scale: Double) -> [Int] {
        func device(_ value: Double) -> Int { Int((value * scale).rounded()) }
        let left = Int((rect.x * scale).rounded(.down))
        let top = Int((rect.y * scale).rounded(.down))
        let right = Int(((rect.x + rect.width) * scale).rounded(.up))
        let bottom = Int(((rect.y + rect.height) * scale).rounded(.up))
        guard right > left, bottom > top else { return [] }
        return items.filter { item in
            let x = device(item.frame.x)
            let y = device(item.frame.y)
            let maxX = x + device(item.frame.width)
            let maxY = y + device(item.frame.height)
            return x < right && left < maxX && y < bottom && top < maxY
        }.map(\.index)
    }

    /// The service's snapping, written out: the pin starts at or after and at or before the offset.
    static func scanSnap(_ items: [Item], _ offset: Double, _ direction: SnapDirection, scale: Double, vertical: Bool)
        -> SnapTarget?
    {
        var firstAt: [Int: Int] = [:]
        for item in items {
            let start = Int(((vertical ? item.frame.y : item.frame.x) * scale).rounded())
            if firstAt[start] == nil { firstAt[start] = item.index }
        }
        let device = offset * scale
        let after = firstAt.keys.filter { Double($0) >= device }.min()
        let before = firstAt.keys.filter { Double($0) <= device }.max()
        let chosen: Int?
        switch direction {
        case .forward: chosen = after ?? before
        case .backward: chosen = before ?? after
        case .nearest:
            if let before, let after {
                chosen = device - Double(before) <= Double(after) - device ? before : after
            } else {
                chosen = before ?? after
            }
        }
        return chosen.map { SnapTarget(offset: Double($0) / scale, index: firstAt[$0]!) }
    }

    func testRectanglesAndSnapsAnswerAsAScanOfEveryPin() throws {
        for (seed, layout) in Fixtures.layouts.enumerated() {
            let pages = try Fixtures.pages(layout)
            // All pages, then the first alone (a client that has loaded one page so far).
            for loaded in [pages.count, 1] {
                let index = try PinIndex(pages: Array(pages.prefix(loaded)))
                XCTAssertEqual(index.isIndexedByColumn, layout != "flow", layout)
                XCTAssertEqual(index.count, pages.prefix(loaded).map(\.items.count).reduce(0, +))
                var maker = QueryMaker(seed: UInt64(seed * 10 + loaded), index: index)
                var nonEmpty = 0
                for _ in 0..<1000 {
                    let rect = maker.rect()
                    let expected = Self.scan(index.items, rect, scale: index.grid.scale)
                    XCTAssertEqual(index.itemIndexes(in: rect), expected, "\(layout), \(loaded) pages, \(rect)")
                    if !expected.isEmpty { nonEmpty += 1 }
                    let offset = maker.snapOffset()
                    for direction in SnapDirection.allCases {
                        XCTAssertEqual(
                            index.snap(offset, direction: direction),
                            Self.scanSnap(
                                index.items, offset, direction, scale: index.grid.scale,
                                vertical: index.grid.scrollsVertically),
                            "\(layout), \(loaded) pages, snap \(offset) \(direction)")
                    }
                }
                XCTAssertGreaterThan(nonEmpty, 300, "\(layout): the random rectangles should mostly hold pins")
            }
        }
    }

    func testItemsComeWholeAndInFeedOrder() throws {
        let index = try PinIndex(pages: Fixtures.pages("waterfall/1280"))
        let all = index.items(in: Rect(x: -10, y: -10, width: 5000, height: 100_000))
        XCTAssertEqual(all.map(\.index), Array(0..<52))
        XCTAssertEqual(all, try Fixtures.pages("waterfall/1280").flatMap(\.items))
        XCTAssertTrue(index.isComplete)
        XCTAssertEqual(index.loadedExtent, .infinity)
        // A rectangle that only touches the first pin's top edge holds nothing of it.
        let first = all[0].frame
        XCTAssertFalse(index.itemIndexes(in: Rect(x: first.x, y: first.y - 10, width: 10, height: 10)).contains(0))
        XCTAssertTrue(index.itemIndexes(in: Rect(x: first.x, y: first.y - 10, width: 10, height: 10.5)).contains(0))
    }

    func testPagesMustComeInOrder() throws {
        let pages = try Fixtures.pages("waterfall/375")
        var index = PinIndex(grid: pages[0].layout)
        XCTAssertThrowsError(try index.append(pages[1])) { error in
            XCTAssertEqual(error as? PinIndexError, .outOfOrder(expected: 0, got: 1))
        }
        try index.append(pages[0])
        XCTAssertEqual(index.loadedExtent, pages[0].columnHeights.min())
        XCTAssertFalse(index.isComplete)
        XCTAssertEqual(index.cursor, pages[0].cursor)
        let other = try Fixtures.pages("waterfall/1280")
        XCTAssertThrowsError(try index.append(other[1])) { error in
            XCTAssertEqual(error as? PinIndexError, .otherLayout(page: 1))
        }
        XCTAssertEqual(index.item(at: 19)?.index, 19)
        XCTAssertNil(index.item(at: 20))
    }
}
