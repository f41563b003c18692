/// Walks JPEG segments by their declared lengths up to the first scan.
///
/// Never searches for byte patterns: an Exif thumbnail is a whole JPEG with its own SOF, and
/// a pattern search finds the thumbnail's size. Segments are skipped by length, so everything
/// inside APPn payloads stays invisible. Markers may be preceded by any number of 0xFF fill
/// bytes; junk between segments is skipped up to the next 0xFF with a warning.
enum JPEGHeaderParser {
    /// What the first frame header (SOFn) says.
    private struct Frame {
        var marker: UInt8
        var precision: Int
        var width: Int
        var height: Int
        var componentCount: Int
    }

    /// Whether a marker is a start-of-frame: C0–CF except DHT (C4), JPG (C8) and DAC (CC).
    @inline(__always)
    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// Whether a start-of-frame marker means progressive coding (SOF2, SOF6, SOF10, SOF14).
    @inline(__always)
    static func isProgressive(_ marker: UInt8) -> Bool {
        marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
    }

    /// Parses a buffer that starts with `FF D8 FF`. See ``ImageHeaderParser/parse(_:isComplete:)``.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, isComplete: Bool, unexamined: inout Range<Int>?
    ) -> ImageHeaderParseResult {
        let count = bytes.count
        var position = 2
        var frame: Frame?
        var orientation = 1
        var hasSeenExif = false
        var warnings: [String] = []

        /// Builds the result once the walk has learned all it will.
        func finish(at end: Int) -> ImageHeaderParseResult {
            guard let frame else {
                return ImageHeaderParser.invalid("JPEG", at: end, "no frame header (SOFn) before the scan data")
            }
            return .info(
                ImageInfo(
                    format: .jpeg, width: frame.width, height: frame.height, orientation: orientation,
                    bytesRead: min(end, count), isProgressive: isProgressive(frame.marker),
                    isCMYK: frame.componentCount == 4, bitDepth: frame.precision, warnings: warnings))
        }

        /// The buffer ends before `needed`: ask for more, or report truncation.
        func ranOut(needing needed: Int) -> ImageHeaderParseResult {
            if !isComplete { return .needMoreBytes(atLeast: max(needed, count + 1)) }
            if frame != nil {
                warnings.append(
                    "JPEG: the data ends at byte \(count), before the first scan; the size comes from the frame header but the file is truncated"
                )
                return finish(at: count)
            }
            return ImageHeaderParser.truncated(
                "JPEG", at: count, needed: needed, what: "before the frame header (SOFn)")
        }

        while true {
            guard position < count else {
                // Past the end by a segment's length: the rest of that segment is never looked at.
                if position > count { unexamined = count..<position }
                return ranOut(needing: position + 2)
            }
            if bytes[position] != 0xFF {
                let junkStart = position
                while position < count && bytes[position] != 0xFF { position += 1 }
                warnings.append(
                    "JPEG: skipped \(position - junkStart) junk byte(s) between segments at byte \(junkStart)")
                continue
            }
            // Any number of 0xFF fill bytes may precede a marker.
            while position < count && bytes[position] == 0xFF { position += 1 }
            guard position < count else { return ranOut(needing: position + 1) }
            let marker = bytes[position]
            let markerOffset = position - 1
            position += 1

            switch marker {
            case 0x00:
                // FF 00 is a stuffed data byte, never a marker: this is junk too.
                warnings.append("JPEG: skipped a stuffed FF 00 between segments at byte \(markerOffset)")
                continue
            case 0x01, 0xD0...0xD8:
                continue  // TEM, RSTn and a stray SOI stand alone: no length follows.
            case 0xD9:
                guard frame != nil else {
                    return ImageHeaderParser.invalid(
                        "JPEG", at: markerOffset, "end of image (EOI) before any frame header (SOFn)")
                }
                warnings.append("JPEG: end of image (EOI) at byte \(markerOffset) before any scan")
                return finish(at: position)
            case 0xDA:
                guard frame != nil else {
                    return ImageHeaderParser.invalid(
                        "JPEG", at: markerOffset, "scan (SOS) before any frame header (SOFn)")
                }
                return finish(at: position)
            default:
                break
            }

            guard position + 2 <= count else { return ranOut(needing: position + 2) }
            let length = bytes.uint16BigEndian(at: position)
            guard length >= 2 else {
                return ImageHeaderParser.invalid(
                    "JPEG", at: position,
                    "segment FF \(hex(marker)) at byte \(markerOffset) declares length \(length), the minimum is 2")
            }
            let payloadStart = position + 2
            let segmentEnd = position + length

            if isStartOfFrame(marker) {
                if frame == nil {
                    guard length >= 8 else {
                        return ImageHeaderParser.invalid(
                            "JPEG", at: position,
                            "frame header FF \(hex(marker)) is \(length) bytes long, too short for its fields")
                    }
                    guard payloadStart + 6 <= count else { return ranOut(needing: payloadStart + 6) }
                    let height = bytes.uint16BigEndian(at: payloadStart + 1)
                    let width = bytes.uint16BigEndian(at: payloadStart + 3)
                    let componentCount = bytes.byte(at: payloadStart + 5)
                    guard height != 0 else {
                        return .failure(
                            ImageProbeError(
                                code: .invalidDimensions,
                                message:
                                    "JPEG frame header at byte \(markerOffset) declares height 0 (the height follows later in a DNL marker, which a header probe cannot read); decode the file or re-encode it",
                                offset: payloadStart + 1))
                    }
                    guard width != 0 else {
                        return .failure(
                            ImageProbeError(
                                code: .invalidDimensions,
                                message:
                                    "JPEG frame header at byte \(markerOffset) declares width 0; the file is damaged",
                                offset: payloadStart + 3))
                    }
                    guard componentCount >= 1, length >= 8 + 3 * componentCount else {
                        return ImageHeaderParser.invalid(
                            "JPEG", at: payloadStart + 5,
                            "frame header declares \(componentCount) components but is \(length) bytes long")
                    }
                    frame = Frame(
                        marker: marker, precision: bytes.byte(at: payloadStart), width: width, height: height,
                        componentCount: componentCount)
                    // Orientation can only come from an Exif segment seen so far or still to come.
                    if hasSeenExif { return finish(at: payloadStart + 6) }
                } else {
                    warnings.append(
                        "JPEG: extra frame header FF \(hex(marker)) at byte \(markerOffset) ignored; the first one counts"
                    )
                }
            } else if marker == 0xE1 && !hasSeenExif && length >= 2 + ExifOrientationReader.identifierLength {
                guard payloadStart + ExifOrientationReader.identifierLength <= count else {
                    return ranOut(needing: payloadStart + ExifOrientationReader.identifierLength)
                }
                if ExifOrientationReader.hasIdentifier(bytes, at: payloadStart) {
                    // Only the first Exif segment counts, as in every reader we compare against.
                    if segmentEnd > count && !isComplete { return .needMoreBytes(atLeast: segmentEnd) }
                    hasSeenExif = true
                    orientation = ExifOrientationReader.orientation(
                        in: bytes, tiffStart: payloadStart + ExifOrientationReader.identifierLength,
                        tiffEnd: min(segmentEnd, count), container: "JPEG APP1 Exif", warnings: &warnings)
                    if frame != nil { return finish(at: min(segmentEnd, count)) }
                }
            }
            position = segmentEnd
        }
    }

    /// A marker byte as two hex digits, for messages.
    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
