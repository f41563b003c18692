import Foundation
import XCTest

@testable import FeedLayoutClient

/// The page fixtures (`Fixtures/make-fixtures`): the sample feed's pages in each kind of layout.
enum Fixtures {
    static let layouts = ["waterfall/375", "waterfall/1280", "flow", "horizontal", "sections"]

    static var folder: URL {
        Bundle.module.resourceURL!.appendingPathComponent("Fixtures")
    }

    /// The page files of one fixture layout, in page order.
    static func pageFiles(_ layout: String) throws -> [URL] {
        let directory = folder.appendingPathComponent(layout)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasPrefix("page-") && $0.hasSuffix(".json") }.sorted()
        return names.map { directory.appendingPathComponent($0) }
    }

    static func pages(_ layout: String) throws -> [Page] {
        try pageFiles(layout).map { try Page(json: Data(contentsOf: $0)) }
    }
}

/// Parses JSON into values (numbers by value), for comparing two texts of the same JSON.
func jsonValue(_ data: Data) throws -> JSONValue {
    try JSONDecoder().decode(JSONValue.self, from: data)
}

/// The first place where two JSON values differ, as a path (`items[3].photo.frame.x: 16 vs 17`); `nil` when equal.
func firstDifference(_ a: JSONValue, _ b: JSONValue, path: String = "$") -> String? {
    switch (a, b) {
    case (.object(let left), .object(let right)):
        for key in Set(left.keys).union(right.keys).sorted() {
            guard let l = left[key] else { return "\(path).\(key): missing on the left" }
            guard let r = right[key] else { return "\(path).\(key): missing on the right" }
            if let difference = firstDifference(l, r, path: "\(path).\(key)") { return difference }
        }
        return nil
    case (.array(let left), .array(let right)):
        guard left.count == right.count else { return "\(path): \(left.count) vs \(right.count) elements" }
        for (offset, (l, r)) in zip(left, right).enumerated() {
            if let difference = firstDifference(l, r, path: "\(path)[\(offset)]") { return difference }
        }
        return nil
    default:
        return a == b ? nil : "\(path): \(a) vs \(b)"
    }
}

/// Decodes a page's bytes and encodes the page again; fails naming the first member that differs.
func assertRoundTrip(_ data: Data, _ name: String, file: StaticString = #filePath, line: UInt = #line) throws {
    let page = try JSONDecoder().decode(Page.self, from: data)
    let encoded = try JSONEncoder().encode(page)
    let difference = firstDifference(try jsonValue(data), try jsonValue(encoded))
    XCTAssertNil(difference, "\(name): decoded and encoded again, the page differs at \(difference ?? "")", file: file, line: line)
    // And the model holds what it read: decoding the encoded page gives the same page.
    XCTAssertEqual(try JSONDecoder().decode(Page.self, from: encoded), page, name, file: file, line: line)
}

/// A seeded generator (SplitMix64), so that a failing random case comes back on every run.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random viewport rectangles and snap offsets over a layout, the kind that find edge cases: fractional and whole
/// coordinates, rectangles that start or end exactly on a pin's edge, empty ones, some beyond the content.
struct QueryMaker {
    var random: SeededGenerator
    let items: [Item]
    let vertical: Bool
    let crossExtent: Double
    let scrollExtent: Double

    init(seed: UInt64, index: PinIndex) {
        random = SeededGenerator(seed: seed)
        items = index.items
        let vertical = index.grid.scrollsVertically
        self.vertical = vertical
        crossExtent = vertical ? index.grid.width : (index.grid.height ?? 1000)
        scrollExtent = index.items.map { vertical ? $0.frame.maxY : $0.frame.maxX }.max() ?? 1000
    }

    mutating func coordinate(_ range: ClosedRange<Double>) -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return Double(Int.random(in: Int(range.lowerBound)...Int(range.upperBound), using: &random))
        case 1: return (Double.random(in: range, using: &random) * 100).rounded() / 100
        default: return Double.random(in: range, using: &random)
        }
    }

    /// A rectangle in (x, y), never holding more pins than the service answers at once (2,000).
    mutating func rect() -> Rect {
        var across = coordinate(-100...crossExtent + 100)
        var acrossLength = coordinate(0...crossExtent * 1.2)
        var along = coordinate(-300...scrollExtent + 300)
        var alongLength = coordinate(0...2400)
        switch Int.random(in: 0..<8, using: &random) {
        case 0:
            // Exactly at a pin's edge: starting at its end, or ending at its start.
            let pin = items.randomElement(using: &random)!.frame
            along = vertical ? pin.maxY : pin.maxX
            if Bool.random(using: &random) { along = (vertical ? pin.y : pin.x) - alongLength }
        case 1:
            let pin = items.randomElement(using: &random)!.frame
            across = vertical ? pin.maxX : pin.maxY
            if Bool.random(using: &random) { across = (vertical ? pin.x : pin.y) - acrossLength }
        case 2:
            // Empty, or thinner than a device pixel.
            if Bool.random(using: &random) { acrossLength = 0 } else { alongLength = 0.25 }
        default: break
        }
        return vertical
            ? Rect(x: across, y: along, width: acrossLength, height: alongLength)
            : Rect(x: along, y: across, width: alongLength, height: acrossLength)
    }

    /// A proposed scroll offset: anywhere, exactly on a pin start, or halfway between two starts (a tie).
    mutating func snapOffset() -> Double {
        switch Int.random(in: 0..<4, using: &random) {
        case 0:
            let pin = items.randomElement(using: &random)!.frame
            return vertical ? pin.y : pin.x
        case 1:
            let a = items.randomElement(using: &random)!.frame
            let b = items.randomElement(using: &random)!.frame
            return ((vertical ? a.y + b.y : a.x + b.x) / 2)
        default:
            return coordinate(-500...scrollExtent + 500)
        }
    }
}
