/// A page's pins as one value of the store: each pin a fixed record of ``recordBytes`` big-endian bytes, in item
/// order. Pins were a row each: 100,000 rows, their index entries and, in PostgreSQL, a foreign-key check each for a
/// 100,000-pin layout (the checks alone were a tenth of the PostgreSQL server's CPU for 20 feeds), while they are
/// only ever read a page's worth at a time, in order.
///
/// A record: item index (8 bytes), column (4), column span (4), x, y, width, height (8 each), page index (8), JSON
/// offset (4) and length (4). Big-endian, as PostgreSQL's `int8send`/`int4send` write them (its migration packs
/// the old rows in SQL).
public enum PinBlock {
    public static let recordBytes = 64

    public struct Overflow: Error, CustomStringConvertible {
        public var description: String
    }

    /// The pins packed; a value that does not fit its field (a column past 2^31) throws.
    public static func encode(_ pins: [PinRecord]) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(pins.count * recordBytes)
        func append64(_ value: Int) { withUnsafeBytes(of: Int64(value).bigEndian) { bytes.append(contentsOf: $0) } }
        func append32(_ value: Int, _ name: String, _ pin: PinRecord) throws {
            guard let narrow = Int32(exactly: value) else {
                throw Overflow(description: "item \(pin.itemIndex): its \(name) \(value) does not fit a stored pin")
            }
            withUnsafeBytes(of: narrow.bigEndian) { bytes.append(contentsOf: $0) }
        }
        for pin in pins {
            append64(pin.itemIndex)
            try append32(pin.column, "column", pin)
            try append32(pin.columnSpan, "column span", pin)
            append64(pin.x)
            append64(pin.y)
            append64(pin.width)
            append64(pin.height)
            append64(pin.pageIndex)
            try append32(pin.jsonOffset, "JSON offset", pin)
            try append32(pin.jsonLength, "JSON length", pin)
        }
        return bytes
    }

    /// The pins of a block from item `itemIndex` on, appended to `pins`. Bytes that are not whole records (a store
    /// written by something else) end the block at the last whole one.
    public static func decode(_ bytes: some Collection<UInt8>, from itemIndex: Int = 0, into pins: inout [PinRecord]) {
        // In place when the bytes are contiguous (a row's `Data`, a `ByteBuffer`'s view); copied otherwise.
        let decoded: Void? = bytes.withContiguousStorageIfAvailable { bytes in
            decode(UnsafeRawBufferPointer(bytes), from: itemIndex, into: &pins)
        }
        if decoded == nil { Array(bytes).withUnsafeBytes { decode($0, from: itemIndex, into: &pins) } }
    }

    private static func decode(_ raw: UnsafeRawBufferPointer, from itemIndex: Int, into pins: inout [PinRecord]) {
        var offset = 0
        func read64() -> Int {
            defer { offset += 8 }
            return Int(Int64(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
        }
        func read32() -> Int {
            defer { offset += 4 }
            return Int(Int32(bigEndian: raw.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
        }
        while offset + recordBytes <= raw.count {
            let item = read64()
            let column = read32()
            let span = read32()
            let pin = PinRecord(
                itemIndex: item, column: column, columnSpan: span, x: read64(), y: read64(), width: read64(),
                height: read64(), pageIndex: read64(), jsonOffset: read32(), jsonLength: read32())
            if item >= itemIndex { pins.append(pin) }
        }
    }
}
