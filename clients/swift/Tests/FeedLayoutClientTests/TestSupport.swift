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

/// Parses JSON into values (numbers by value), for comparing two texts of the same JSON: a small parser of its own,
/// apart from the JSONDecoder the client uses (and faster than JSONSerialization's objects on Linux).
func jsonValue(_ data: Data) throws -> JSONValue {
    var parser = JSONTestParser(bytes: [UInt8](data))
    let value = try parser.value()
    parser.skipSpace()
    guard parser.position == parser.bytes.count else { throw parser.error("text after the value") }
    return value
}

struct JSONTestParser {
    let bytes: [UInt8]
    var position = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    func error(_ what: String) -> HarnessError { HarnessError("JSON: \(what) at byte \(position)") }

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[position]) { position += 1 }
    }

    mutating func expect(_ text: String) throws {
        for byte in text.utf8 {
            guard position < bytes.count, bytes[position] == byte else { throw error("expected \(text)") }
            position += 1
        }
    }

    mutating func value() throws -> JSONValue {
        skipSpace()
        guard position < bytes.count else { throw error("end of text") }
        switch bytes[position] {
        case UInt8(ascii: "{"):
            position += 1
            var object: [String: JSONValue] = [:]
            skipSpace()
            if bytes[position] == UInt8(ascii: "}") { position += 1; return .object(object) }
            while true {
                skipSpace()
                let key = try string()
                skipSpace()
                try expect(":")
                guard object.updateValue(try value(), forKey: key) == nil else { throw error("member \(key) twice") }
                skipSpace()
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                try expect("}")
                return .object(object)
            }
        case UInt8(ascii: "["):
            position += 1
            var array: [JSONValue] = []
            skipSpace()
            if bytes[position] == UInt8(ascii: "]") { position += 1; return .array(array) }
            while true {
                array.append(try value())
                skipSpace()
                if bytes[position] == UInt8(ascii: ",") { position += 1; continue }
                try expect("]")
                return .array(array)
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default:
            let start = position
            while position < bytes.count, "+-0123456789.eE".utf8.contains(bytes[position]) { position += 1 }
            guard let number = Double(String(decoding: bytes[start..<position], as: UTF8.self)) else {
                throw error("not a value")
            }
            return .number(number)
        }
    }

    mutating func string() throws -> String {
        try expect("\"")
        var scalars: [UInt8] = []
        while true {
            guard position < bytes.count else { throw error("unterminated string") }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "\"") { return String(decoding: scalars, as: UTF8.self) }
            guard byte == UInt8(ascii: "\\") else { scalars.append(byte); continue }
            let escaped = bytes[position]
            position += 1
            switch escaped {
            case UInt8(ascii: "n"): scalars.append(0x0A)
            case UInt8(ascii: "t"): scalars.append(0x09)
            case UInt8(ascii: "r"): scalars.append(0x0D)
            case UInt8(ascii: "b"): scalars.append(0x08)
            case UInt8(ascii: "f"): scalars.append(0x0C)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    try expect("\\u")
                    code = 0x10000 + ((code - 0xD800) << 10) + (try hex4() - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw error("bad \\u escape") }
                scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: scalars.append(escaped)
            }
        }
    }

    mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count,
            let code = UInt32(String(decoding: bytes[position..<position + 4], as: UTF8.self), radix: 16)
        else { throw error("bad \\u escape") }
        position += 4
        return code
    }
}

/// The first place where two JSON values differ, as a path (`items[3].photo.frame.x: 16 vs 17`); `nil` when equal.
func firstDifference(_ a: JSONValue, _ b: JSONValue, path: String = "$") -> String? {
    if a == b { return nil }
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

/// Decodes a page's bytes and encodes the page again; fails naming the first member that differs. With
/// `decodeAgain`, also checks that decoding the encoded page gives the same page.
@discardableResult
func assertRoundTrip(
    _ data: Data, _ name: String, decodeAgain: Bool = true, file: StaticString = #filePath, line: UInt = #line
) throws -> Page {
    let page = try JSONDecoder().decode(Page.self, from: data)
    let encoded = try JSONEncoder().encode(page)
    let difference = firstDifference(try jsonValue(data), try jsonValue(encoded))
    XCTAssertNil(difference, "\(name): decoded and encoded again, the page differs at \(difference ?? "")", file: file, line: line)
    if decodeAgain {
        XCTAssertEqual(try JSONDecoder().decode(Page.self, from: encoded), page, name, file: file, line: line)
    }
    return page
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
