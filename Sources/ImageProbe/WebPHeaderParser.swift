/// Reads the canvas of a WebP from its first chunk (VP8, VP8L or VP8X).
///
/// For VP8X files with the EXIF flag the chunks are walked to the EXIF chunk for the
/// orientation. That chunk normally follows the image data, so such files are read to it.
enum WebPHeaderParser {
    /// Parses a buffer that starts with `RIFF....WEBP`.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, isComplete: Bool, unexamined: inout Range<Int>?
    ) -> ImageHeaderParseResult {
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
                "WebP", at: 12,
                "the first chunk is '\(PNGHeaderParser.chunkName(bytes, at: 12))', expected VP8, VP8L or VP8X")
        }
        guard 30 <= count else { return ranOut(needing: 30, "inside the VP8X header") }
        let flags = bytes.byte(at: 20)
        guard
            case .info(var info) = dimensions(
                width: bytes.uint24LittleEndian(at: 24) + 1, height: bytes.uint24LittleEndian(at: 27) + 1, at: 24,
                bytesRead: 30)
        else { return ImageHeaderParser.invalid("WebP", at: 24, "bad VP8X canvas") }
        info.isAnimated = flags & 0x02 != 0
        guard flags & 0x08 != 0 else { return .info(info) }

        // Chunks are padded to an even length.
        var position = firstChunkEnd + (firstChunkEnd & 1)
        while true {
            guard position + 8 <= count else {
                if !isComplete {
                    // The image data chunks before EXIF are skipped by length, never looked at.
                    if position > count { unexamined = count..<position }
                    return .needMoreBytes(atLeast: max(position + 8, count + 1))
                }
                info.warnings.append(
                    "WebP: the VP8X header announces EXIF but the data ends at byte \(count) before an EXIF chunk")
                return .info(info)
            }
            let chunkSize = bytes.uint32LittleEndian(at: position + 4)
            let data = position + 8
            if bytes.matches("EXIF", at: position) {
                let dataEnd = data + chunkSize
                if dataEnd > count && !isComplete { return .needMoreBytes(atLeast: dataEnd) }
                let available = min(dataEnd, count)
                let tiffStart =
                    ExifOrientationReader.hasIdentifier(bytes, at: data)
                    ? data + ExifOrientationReader.identifierLength : data
                info.orientation = ExifOrientationReader.orientation(
                    in: bytes, tiffStart: tiffStart, tiffEnd: available, container: "WebP EXIF",
                    warnings: &info.warnings)
                info.bytesRead = available
                return .info(info)
            }
            position = data + chunkSize + (chunkSize & 1)
        }
    }

    private static func dimensions(width: Int, height: Int, at offset: Int, bytesRead: Int) -> ImageHeaderParseResult {
        guard width != 0, height != 0 else {
            return .failure(
                ImageProbeError(
                    code: .invalidDimensions,
                    message: "WebP header at byte \(offset) declares \(width)×\(height) pixels; the file is damaged",
                    offset: offset))
        }
        return .info(ImageInfo(format: .webp, width: width, height: height, bytesRead: bytesRead))
    }
}
