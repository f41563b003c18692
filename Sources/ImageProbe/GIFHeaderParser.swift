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
            return ImageHeaderParser.truncated(
                "GIF", at: count, needed: screenDescriptorEnd, what: "inside the logical screen descriptor")
        }
        let width = bytes.uint16LittleEndian(at: 6)
        let height = bytes.uint16LittleEndian(at: 8)
        guard width != 0, height != 0 else {
            return .failure(
                ImageProbeError(
                    code: .invalidDimensions,
                    message: "GIF logical screen at byte 6 declares \(width)×\(height) pixels; the file is damaged",
                    offset: 6))
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
                    info.warnings.append(
                        "GIF: the data ends at byte \(count) inside the image descriptor at byte \(position); the file is truncated"
                    )
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
                info.warnings.append(
                    "GIF: unknown block introducer 0x\(JPEGHeaderParser.hex(introducer)) at byte \(position); frames after it not counted"
                )
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
