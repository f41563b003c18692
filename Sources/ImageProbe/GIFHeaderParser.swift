/// Reads a GIF's logical screen and finds out whether a second frame follows the first.
///
/// The size is the logical screen (what browsers and Pillow report). Animation is decided the
/// way Pillow decides it — more than one image — by skipping the first image's data
/// sub-blocks; that costs reading through the first frame, never further.
enum GIFHeaderParser {
    /// Parses a buffer that starts with `GIF87a` or `GIF89a`.
    static func parse(_ bytes: UnsafeRawBufferPointer, isComplete: Bool) -> ImageHeaderParseResult {
        let count = bytes.count
        let screenDescriptorEnd = 13
        guard screenDescriptorEnd <= count else {
            if !isComplete { return .needMoreBytes(atLeast: screenDescriptorEnd) }
            return ImageHeaderParser.truncated("GIF", at: count, needed: screenDescriptorEnd, what: "inside the logical screen descriptor")
        }
        let width = bytes.uint16LittleEndian(at: 6)
        let height = bytes.uint16LittleEndian(at: 8)
        guard width != 0, height != 0 else {
            return .failure(ImageProbeError(
                code: .invalidDimensions,
                message: "GIF logical screen at byte 6 declares \(width)×\(height) pixels; the file is damaged", offset: 6))
        }
        var info = ImageInfo(format: .gif, width: width, height: height, bytesRead: screenDescriptorEnd)
        let packedFields = bytes.byte(at: 10)
        var position = screenDescriptorEnd
        if packedFields & 0x80 != 0 { position += 3 << ((packedFields & 0x07) + 1) }
        var imageCount = 0

        while true {
            guard position < count else {
                if !isComplete { return .needMoreBytes(atLeast: position + 1) }
                info.warnings.append("GIF: the data ends at byte \(count) before the trailer; the file is truncated")
                break
            }
            let introducer = bytes[position]
            if introducer == 0x3B { position += 1; break }  // trailer
            if introducer == 0x2C {
                imageCount += 1
                if imageCount == 2 { info.isAnimated = true; position += 1; break }
                guard position + 11 <= count else {
                    if !isComplete { return .needMoreBytes(atLeast: position + 11) }
                    info.warnings.append("GIF: the data ends at byte \(count) inside the image descriptor at byte \(position); the file is truncated")
                    break
                }
                let imageFields = bytes.byte(at: position + 9)
                info.isInterlaced = imageFields & 0x40 != 0
                position += 10
                if imageFields & 0x80 != 0 { position += 3 << ((imageFields & 0x07) + 1) }
                position += 1  // LZW minimum code size
            } else if introducer == 0x21 {
                position += 2  // introducer and label
            } else {
                info.warnings.append("GIF: unknown block introducer 0x\(JPEGHeaderParser.hex(introducer)) at byte \(position); frames after it not counted")
                break
            }
            // Data sub-blocks: a size byte, that many bytes, until a zero size.
            while true {
                guard position < count else {
                    if !isComplete { return .needMoreBytes(atLeast: position + 1) }
                    break
                }
                let blockSize = bytes.byte(at: position)
                position += 1 + blockSize
                if blockSize == 0 { break }
            }
        }
        info.bytesRead = min(position, count)
        return .info(info)
    }
}

/// Reads the canvas of a WebP from its first chunk (VP8, VP8L or VP8X).
///
/// For VP8X files with the EXIF flag the chunks are walked to the EXIF chunk for the
/// orientation. That chunk normally follows the image data, so such files are read to it.
enum WebPHeaderParser {
    /// Parses a buffer that starts with `RIFF....WEBP`.
    static func parse(_ bytes: UnsafeRawBufferPointer, isComplete: Bool) -> ImageHeaderParseResult {
        let count = bytes.count
        func ranOut(needing needed: Int, _ what: String) -> ImageHeaderParseResult {
            if !isComplete { return .needMoreBytes(atLeast: max(needed, count + 1)) }
            return ImageHeaderParser.truncated("WebP", at: count, needed: needed, what: what)
        }
        guard 20 <= count else { return ranOut(needing: 20, "before the first chunk") }
        let firstChunkEnd = 20 + bytes.uint32LittleEndian(at: 16)
        if bytes.matches("VP8 ", at: 12) {
            guard 30 <= count else { return ranOut(needing: 30, "inside the VP8 frame header") }
            guard bytes[20] & 0x01 == 0, bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A else {
                return ImageHeaderParser.invalid("WebP", at: 20, "the VP8 chunk does not start with a key frame")
            }
            // The top two bits of each dimension are a scaling hint, not part of the size.
            return dimensions(
                width: bytes.uint16LittleEndian(at: 26) & 0x3FFF, height: bytes.uint16LittleEndian(at: 28) & 0x3FFF,
                at: 26, bytesRead: 30)
        }
        if bytes.matches("VP8L", at: 12) {
            guard 25 <= count else { return ranOut(needing: 25, "inside the VP8L header") }
            let bits = bytes.uint32LittleEndian(at: 21)
            guard bytes[20] == 0x2F, bits >> 29 == 0 else {
                return ImageHeaderParser.invalid("WebP", at: 20, "bad VP8L signature or version")
            }
            return dimensions(width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1, at: 21, bytesRead: 25)
        }
        guard bytes.matches("VP8X", at: 12) else {
            return ImageHeaderParser.invalid(
                "WebP", at: 12, "the first chunk is '\(PNGHeaderParser.chunkName(bytes, at: 12))', expected VP8, VP8L or VP8X")
        }
        guard 30 <= count else { return ranOut(needing: 30, "inside the VP8X header") }
        let flags = bytes.byte(at: 20)
        guard case .info(var info) = dimensions(
            width: bytes.uint24LittleEndian(at: 24) + 1, height: bytes.uint24LittleEndian(at: 27) + 1, at: 24,
            bytesRead: 30)
        else { return ImageHeaderParser.invalid("WebP", at: 24, "bad VP8X canvas") }
        info.isAnimated = flags & 0x02 != 0
        guard flags & 0x08 != 0 else { return .info(info) }

        // Chunks are padded to an even length.
        var position = firstChunkEnd + (firstChunkEnd & 1)
        while true {
            guard position + 8 <= count else {
                if !isComplete { return .needMoreBytes(atLeast: max(position + 8, count + 1)) }
                info.warnings.append("WebP: the VP8X header announces EXIF but the data ends at byte \(count) before an EXIF chunk")
                return .info(info)
            }
            let chunkSize = bytes.uint32LittleEndian(at: position + 4)
            let data = position + 8
            if bytes.matches("EXIF", at: position) {
                let dataEnd = data + chunkSize
                if dataEnd > count && !isComplete { return .needMoreBytes(atLeast: dataEnd) }
                let available = min(dataEnd, count)
                let tiffStart = ExifOrientationReader.hasIdentifier(bytes, at: data)
                    ? data + ExifOrientationReader.identifierLength : data
                info.orientation = ExifOrientationReader.orientation(
                    in: bytes, tiffStart: tiffStart, tiffEnd: available, container: "WebP EXIF", warnings: &info.warnings)
                info.bytesRead = available
                return .info(info)
            }
            position = data + chunkSize + (chunkSize & 1)
        }
    }

    private static func dimensions(width: Int, height: Int, at offset: Int, bytesRead: Int) -> ImageHeaderParseResult {
        guard width != 0, height != 0 else {
            return .failure(ImageProbeError(
                code: .invalidDimensions,
                message: "WebP header at byte \(offset) declares \(width)×\(height) pixels; the file is damaged", offset: offset))
        }
        return .info(ImageInfo(format: .webp, width: width, height: height, bytesRead: bytesRead))
    }
}

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
            return .failure(ImageProbeError(
                code: .invalidDimensions,
                message: "BMP DIB header at byte 14 declares \(width)×\(storedHeight) pixels; the file is damaged", offset: 18))
        }
        return .info(ImageInfo(format: .bmp, width: width, height: height, bytesRead: needed, bitDepth: bitsPerPixel))
    }
}
