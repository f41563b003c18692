/// Writes PNG files for decoding tests: any colour type and bit depth, Adam7 or not, with optional gAMA and tRNS
/// chunks. Image data goes into stored (uncompressed) deflate blocks, so no zlib is needed; tests that want a large
/// image cheaply use few columns and many rows.
struct PNGTestEncoder {
    /// PNG colour types.
    enum ColorType: UInt8 {
        case gray = 0, rgb = 2, palette = 3, grayAlpha = 4, rgba = 6

        var channels: Int {
            switch self {
            case .gray, .palette: 1
            case .grayAlpha: 2
            case .rgb: 3
            case .rgba: 4
            }
        }
    }

    var width: Int
    var height: Int
    var colorType: ColorType
    var bitDepth: Int
    var interlaced = false
    /// gAMA in units of 1/100000, if any.
    var gamma: UInt32?
    /// Raw tRNS chunk content, if any.
    var transparency: [UInt8]?
    /// PLTE entries (RGB triples), for palette images.
    var palette: [UInt8] = []

    /// The file, with `sample(x, y, channel)` giving each sample (masked to the bit depth).
    func encode(sample: (Int, Int, Int) -> Int) -> [UInt8] {
        var raw: [UInt8] = []
        let passes: [(x: Int, y: Int, dx: Int, dy: Int)] =
            interlaced
            ? [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            : [(0, 0, 1, 1)]
        for pass in passes {
            let columns = Array(stride(from: pass.x, to: width, by: pass.dx))
            guard !columns.isEmpty else { continue }
            for y in stride(from: pass.y, to: height, by: pass.dy) {
                raw.append(0)  // filter: none
                raw += packedRow(columns: columns, y: y, sample: sample)
            }
        }
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header = Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height))
        header += [UInt8(bitDepth), colorType.rawValue, 0, 0, interlaced ? 1 : 0]
        file += Self.chunk("IHDR", header)
        if let gamma { file += Self.chunk("gAMA", Self.bigEndian(gamma)) }
        if colorType == .palette { file += Self.chunk("PLTE", palette) }
        if let transparency { file += Self.chunk("tRNS", transparency) }
        file += Self.chunk("IDAT", Self.zlibStored(raw))
        file += Self.chunk("IEND", [])
        return file
    }

    private func packedRow(columns: [Int], y: Int, sample: (Int, Int, Int) -> Int) -> [UInt8] {
        let mask = (1 << bitDepth) - 1
        if bitDepth == 16 {
            return columns.flatMap { x in
                (0..<colorType.channels).flatMap { channel -> [UInt8] in
                    let value = sample(x, y, channel) & mask
                    return [UInt8(value >> 8), UInt8(value & 0xFF)]
                }
            }
        }
        if bitDepth == 8 {
            return columns.flatMap { x in (0..<colorType.channels).map { UInt8(sample(x, y, $0) & mask) } }
        }
        // 1, 2 or 4 bits: one channel, packed from the high bits.
        var bytes: [UInt8] = []
        var bits = 0
        var current = 0
        for x in columns {
            current = current << bitDepth | (sample(x, y, 0) & mask)
            bits += bitDepth
            if bits == 8 {
                bytes.append(UInt8(current))
                (bits, current) = (0, 0)
            }
        }
        if bits > 0 { bytes.append(UInt8(current << (8 - bits))) }
        return bytes
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeAndData = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typeAndData + bigEndian(crc32(typeAndData))
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    /// A zlib stream of stored deflate blocks.
    private static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var output: [UInt8] = [0x78, 0x01]
        var start = 0
        repeat {
            let end = min(data.count, start + 65_535)
            let length = UInt16(end - start)
            output.append(end == data.count ? 1 : 0)
            output += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)]
            output += data[start..<end]
            start = end
        } while start < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return output + bigEndian(b << 16 | a)
    }
}
