/// Reads a Windows / OS/2 bitmap's DIB header.
enum BMPHeaderParser {
    /// The DIB header sizes in use: OS/2 1.x core (12), OS/2 2.x (16, 64), Windows 3.x–5 (40–124).
    static func hasKnownHeaderSize(_ bytes: UnsafeRawBufferPointer) -> Bool {
        switch bytes.uint32LittleEndian(at: 14) {
        case 12, 16, 40, 52, 56, 64, 108, 124: return true
        default: return false
        }
    }

    /// Parses a buffer that starts with `BM`.
    static func parse(_ bytes: UnsafeRawBufferPointer, isComplete: Bool) -> ImageHeaderParseResult {
        let count = bytes.count
        guard 18 <= count else {
            if !isComplete { return .needMoreBytes(atLeast: 30) }
            return ImageHeaderParser.truncated("BMP", at: count, needed: 18, what: "before the DIB header")
        }
        let isCoreHeader = bytes.uint32LittleEndian(at: 14) == 12
        let needed = isCoreHeader ? 26 : 30
        guard needed <= count else {
            if !isComplete { return .needMoreBytes(atLeast: needed) }
            return ImageHeaderParser.truncated("BMP", at: count, needed: needed, what: "inside the DIB header")
        }
        let width: Int
        let storedHeight: Int
        let bitsPerPixel: Int
        if isCoreHeader {
            width = bytes.uint16LittleEndian(at: 18)
            storedHeight = bytes.uint16LittleEndian(at: 20)
            bitsPerPixel = bytes.uint16LittleEndian(at: 24)
        } else {
            width = bytes.int32LittleEndian(at: 18)
            storedHeight = bytes.int32LittleEndian(at: 22)
            bitsPerPixel = bytes.uint16LittleEndian(at: 28)
        }
        // A negative height means the rows are stored top-down; the size is its magnitude.
        let height = abs(storedHeight)
        guard width > 0, height > 0 else {
            return .failure(
                ImageProbeError(
                    code: .invalidDimensions,
                    message: "BMP DIB header at byte 14 declares \(width)×\(storedHeight) pixels; the file is damaged",
                    offset: 18))
        }
        return .info(ImageInfo(format: .bmp, width: width, height: height, bytesRead: needed, bitDepth: bitsPerPixel))
    }
}
