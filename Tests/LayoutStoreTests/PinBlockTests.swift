import Testing

@testable import LayoutStore

/// A page's pins as one stored value: every field comes back as it went in, and a value that does not fit its
/// field is refused, not cut.
@Suite struct PinBlockTests {
    static func pin(_ item: Int, x: Int = 0, column: Int = 1, jsonOffset: Int = 12) -> PinRecord {
        PinRecord(
            itemIndex: item, column: column, columnSpan: 2, x: x, y: -7 - item, width: 1 << 40, height: 333,
            pageIndex: 5, jsonOffset: jsonOffset, jsonLength: 77)
    }

    static func fields(_ pin: PinRecord) -> [Int] {
        [pin.itemIndex, pin.column, pin.columnSpan, pin.x, pin.y, pin.width, pin.height, pin.pageIndex, pin.jsonOffset,
         pin.jsonLength]
    }

    @Test func fieldsComeBackAsTheyWentIn() throws {
        let pins = [Self.pin(40, x: Int.max), Self.pin(41, x: Int.min, column: Int(Int32.max)), Self.pin(42, jsonOffset: 0)]
        let block = try PinBlock.encode(pins)
        #expect(block.count == 3 * PinBlock.recordBytes)
        var decoded: [PinRecord] = []
        PinBlock.decode(block, into: &decoded)
        #expect(decoded.map(Self.fields) == pins.map(Self.fields))
        var fromItem: [PinRecord] = []
        PinBlock.decode(block, from: 41, into: &fromItem)
        #expect(fromItem.map(\.itemIndex) == [41, 42])
        // Bytes that are not contiguous (copied first) decode the same.
        var fromLazy: [PinRecord] = []
        PinBlock.decode(block.lazy.map { $0 }, into: &fromLazy)
        #expect(fromLazy.map(Self.fields) == pins.map(Self.fields))
        // Big-endian, as PostgreSQL's int8send writes it.
        #expect(Array(block.prefix(8)) == [0, 0, 0, 0, 0, 0, 0, 40])
    }

    @Test func aPartialRecordIsNotRead() throws {
        let block = try PinBlock.encode([Self.pin(1), Self.pin(2)])
        var decoded: [PinRecord] = []
        PinBlock.decode(block.dropLast(), into: &decoded)
        #expect(decoded.map(\.itemIndex) == [1])
    }

    @Test func aValuePastItsFieldIsRefused() {
        #expect(throws: PinBlock.Overflow.self) { try PinBlock.encode([Self.pin(1, column: Int(Int32.max) + 1)]) }
        #expect(throws: PinBlock.Overflow.self) { try PinBlock.encode([Self.pin(1, jsonOffset: -1 << 40)]) }
    }
}
