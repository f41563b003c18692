import Foundation

/// Splits one face out of an OpenType collection (`.ttc`/`.otc`) into a font file of its own, for `@font-face`,
/// which only ever loads a collection's first face.
enum FontCollection {
    /// The face's tables under an sfnt header of their own, or nil when `data` is not a collection with that face.
    static func face(_ index: Int, of data: Data) -> Data? {
        let bytes = [UInt8](data)
        func read(_ offset: Int, _ width: Int) -> Int? {
            guard offset >= 0, offset + width <= bytes.count else { return nil }
            return bytes[offset..<(offset + width)].reduce(0) { $0 << 8 | Int($1) }
        }
        guard bytes.count >= 12, bytes[0..<4] == [0x74, 0x74, 0x63, 0x66],  // "ttcf"
            let faceCount = read(8, 4), index < faceCount, let directory = read(12 + 4 * index, 4),
            let tableCount = read(directory + 4, 2), let version = read(directory, 4)
        else { return nil }
        var header: [UInt8] = []
        func append(_ value: Int, _ width: Int) {
            for shift in stride(from: 8 * (width - 1), through: 0, by: -8) { header.append(UInt8(truncatingIfNeeded: value >> shift)) }
        }
        append(version, 4)
        append(tableCount, 2)
        // searchRange, entrySelector and rangeShift are derived from the table count, as the format defines them.
        let power = tableCount > 0 ? 1 << (Int.bitWidth - 1 - tableCount.leadingZeroBitCount) : 0
        append(power * 16, 2)
        append(power > 0 ? power.trailingZeroBitCount : 0, 2)
        append(tableCount * 16 - power * 16, 2)
        var tables: [UInt8] = []
        var nextOffset = 12 + 16 * tableCount
        for table in 0..<tableCount {
            let record = directory + 12 + 16 * table
            guard let tag = read(record, 4), let checksum = read(record + 4, 4), let offset = read(record + 8, 4),
                let length = read(record + 12, 4), offset + length <= bytes.count
            else { return nil }
            append(tag, 4)
            append(checksum, 4)
            append(nextOffset, 4)
            append(length, 4)
            tables += bytes[offset..<(offset + length)]
            // Tables start on 4-byte boundaries.
            let padding = (4 - length % 4) % 4
            tables += [UInt8](repeating: 0, count: padding)
            nextOffset += length + padding
        }
        return Data(header + tables)
    }
}
