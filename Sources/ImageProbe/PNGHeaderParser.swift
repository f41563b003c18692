/// Reads a PNG's IHDR and the chunks before the first IDAT.
///
/// The IHDR must come first (after Apple's optional CgBI chunk), be 13 bytes long, carry a
/// valid CRC and a legal colour type / bit depth pair. Chunks between IHDR and the first IDAT
/// are walked for `acTL` (APNG) and `eXIf` (orientation). Nothing past the first IDAT is
/// requested; chunks after it are only examined when they are already in the buffer, so that
/// a misplaced eXIf gets its warning without reading the whole image data for it.
enum PNGHeaderParser {
    /// Chunk types compared as big-endian integers, which is cheaper than comparing strings.
    private enum ChunkType {
        static let header = 0x4948_4452  // IHDR
        static let appleCgBI = 0x4367_4249  // CgBI
        static let imageData = 0x4944_4154  // IDAT
        static let imageEnd = 0x4945_4E44  // IEND
        static let animationControl = 0x6163_544C  // acTL
        static let exif = 0x6558_4966  // eXIf
    }

    /// The largest value a PNG length or dimension may take (2³¹ − 1).
    static let maximumValue = 0x7FFF_FFFF

    /// Parses a buffer that starts with the PNG signature.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, isComplete: Bool, unexamined: inout Range<Int>?
    ) -> ImageHeaderParseResult {
        let count = bytes.count
        var position = 8
        var isAppleOptimized = false

        func ranOutBeforeHeader(needing needed: Int) -> ImageHeaderParseResult {
            if !isComplete { return .needMoreBytes(atLeast: max(needed, count + 1)) }
            return ImageHeaderParser.truncated("PNG", at: count, needed: needed, what: "inside the IHDR chunk")
        }

        guard position + 8 <= count else { return ranOutBeforeHeader(needing: position + 8) }
        if bytes.uint32BigEndian(at: position + 4) == ChunkType.appleCgBI {
            // Apple's Xcode "pngcrush" variant puts CgBI first; the IHDR follows it.
            isAppleOptimized = true
            let length = bytes.uint32BigEndian(at: position)
            guard length <= 64 else {
                return ImageHeaderParser.invalid("PNG", at: position, "CgBI chunk declares length \(length)")
            }
            position += 12 + length
            guard position + 8 <= count else { return ranOutBeforeHeader(needing: position + 8) }
        }
        guard bytes.uint32BigEndian(at: position + 4) == ChunkType.header else {
            return ImageHeaderParser.invalid(
                "PNG", at: position + 4,
                "the first chunk is '\(chunkName(bytes, at: position + 4))', but IHDR must come first")
        }
        let headerLength = bytes.uint32BigEndian(at: position)
        guard headerLength == 13 else {
            return ImageHeaderParser.invalid("PNG", at: position, "IHDR declares length \(headerLength), it must be 13")
        }
        let data = position + 8
        guard data + 13 + 4 <= count else { return ranOutBeforeHeader(needing: data + 13 + 4) }
        let storedCRC = bytes.uint32BigEndian(at: data + 13)
        let computedCRC = crc32(bytes, from: position + 4, to: data + 13)
        guard storedCRC == computedCRC else {
            return ImageHeaderParser.invalid(
                "PNG", at: data + 13, "IHDR CRC is \(hex32(storedCRC)) but the chunk's bytes give \(hex32(computedCRC))"
            )
        }
        let width = bytes.uint32BigEndian(at: data)
        let height = bytes.uint32BigEndian(at: data + 4)
        let bitDepth = bytes.byte(at: data + 8)
        let colourType = bytes.byte(at: data + 9)
        guard width != 0, height != 0 else {
            return .failure(
                ImageProbeError(
                    code: .invalidDimensions,
                    message:
                        "PNG IHDR at byte \(position) declares \(width)×\(height) pixels; zero is not allowed, the file is damaged",
                    offset: data))
        }
        guard width <= maximumValue, height <= maximumValue else {
            return ImageHeaderParser.invalid(
                "PNG", at: data, "IHDR declares \(width)×\(height), above the limit of 2³¹−1")
        }
        guard isValid(colourType: colourType, bitDepth: bitDepth) else {
            return ImageHeaderParser.invalid(
                "PNG", at: data + 8,
                "colour type \(colourType) with bit depth \(bitDepth) is not a combination PNG allows")
        }
        guard bytes[data + 10] == 0, bytes[data + 11] == 0 else {
            return ImageHeaderParser.invalid("PNG", at: data + 10, "unknown compression or filter method")
        }
        let interlaceMethod = bytes.byte(at: data + 12)
        guard interlaceMethod <= 1 else {
            return ImageHeaderParser.invalid("PNG", at: data + 12, "unknown interlace method \(interlaceMethod)")
        }

        var info = ImageInfo(
            format: .png, width: width, height: height, bytesRead: data + 17, isInterlaced: interlaceMethod == 1,
            bitDepth: bitDepth, isAppleOptimizedPNG: isAppleOptimized)
        var hasSeenImageData = false
        var hasSeenExif = false
        position = data + 17

        while true {
            guard position + 8 <= count else {
                if hasSeenImageData { break }
                if !isComplete {
                    // A skipped chunk's data past the end is never looked at.
                    if position > count { unexamined = count..<position }
                    return .needMoreBytes(atLeast: max(position + 8, count + 1))
                }
                info.warnings.append(
                    "PNG: the data ends at byte \(count), before any image data (IDAT); the file is truncated")
                info.bytesRead = count
                return .info(info)
            }
            let length = bytes.uint32BigEndian(at: position)
            let type = bytes.uint32BigEndian(at: position + 4)
            guard length <= maximumValue else {
                if hasSeenImageData {
                    info.warnings.append(
                        "PNG: chunk at byte \(position) declares length \(length), above 2³¹−1; chunks after it ignored"
                    )
                    break
                }
                return ImageHeaderParser.invalid("PNG", at: position, "chunk declares length \(length), above 2³¹−1")
            }
            let chunkData = position + 8
            let chunkEnd = chunkData + length + 4
            if !hasSeenImageData { info.bytesRead = chunkData }

            if type == ChunkType.imageEnd {
                break
            } else if type == ChunkType.imageData {
                hasSeenImageData = true
            } else if type == ChunkType.animationControl && !hasSeenImageData {
                // acTL only makes an APNG when it precedes the image data; the canvas is the IHDR size.
                guard chunkData + 4 <= count else {
                    if !isComplete { return .needMoreBytes(atLeast: chunkData + 4) }
                    info.warnings.append("PNG: the acTL chunk at byte \(position) is truncated")
                    break
                }
                info.isAnimated = bytes.uint32BigEndian(at: chunkData) > 1
            } else if type == ChunkType.exif {
                if hasSeenImageData {
                    info.warnings.append(
                        "PNG: eXIf chunk at byte \(position) comes after the image data (IDAT) and is ignored, as the PNG specification requires"
                    )
                } else if !hasSeenExif {
                    let dataEnd = chunkData + length
                    if dataEnd > count && !isComplete { return .needMoreBytes(atLeast: dataEnd) }
                    hasSeenExif = true
                    let available = min(dataEnd, count)
                    // The specification says raw TIFF; some writers keep JPEG's Exif identifier.
                    let tiffStart =
                        ExifOrientationReader.hasIdentifier(bytes, at: chunkData)
                        ? chunkData + ExifOrientationReader.identifierLength : chunkData
                    info.orientation = ExifOrientationReader.orientation(
                        in: bytes, tiffStart: tiffStart, tiffEnd: available, container: "PNG eXIf",
                        warnings: &info.warnings)
                    info.bytesRead = available
                }
            }
            if hasSeenImageData && chunkEnd > count {
                if isComplete {
                    info.warnings.append(
                        "PNG: the data ends at byte \(count), inside the chunk that starts at byte \(position); the image data is truncated"
                    )
                }
                break
            }
            position = chunkEnd
        }
        return .info(info)
    }

    /// The colour type / bit depth pairs of the PNG specification, table 11.1.
    static func isValid(colourType: Int, bitDepth: Int) -> Bool {
        switch colourType {
        case 0: return bitDepth == 1 || bitDepth == 2 || bitDepth == 4 || bitDepth == 8 || bitDepth == 16
        case 3: return bitDepth == 1 || bitDepth == 2 || bitDepth == 4 || bitDepth == 8
        case 2, 4, 6: return bitDepth == 8 || bitDepth == 16
        default: return false
        }
    }

    /// CRC-32 (ISO 3309, reflected 0xEDB88320) of `bytes[start..<end]`, bit by bit.
    ///
    /// Only the 17 bytes of IHDR are checked, so a table would cost more to build than it saves.
    static func crc32(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Int {
        var crc: UInt32 = 0xFFFF_FFFF
        for index in start..<end {
            crc ^= UInt32(bytes[index])
            for _ in 0..<8 {
                crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1)))
            }
        }
        return Int(crc ^ 0xFFFF_FFFF)
    }

    /// A chunk type as text, with non-letters shown as `?`, for messages.
    static func chunkName(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> String {
        String(
            decoding: (0..<4).map { index -> UInt8 in
                let byte = bytes[offset + index]
                return (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) ? byte : 0x3F
            }, as: UTF8.self)
    }

    /// `0x` and eight hex digits.
    static func hex32(_ value: Int) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
