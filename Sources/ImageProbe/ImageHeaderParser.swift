/// The outcome of parsing a prefix of an image.
public enum ImageHeaderParseResult: Sendable {
    /// The header was understood.
    case info(ImageInfo)
    /// The prefix ends before the header does; call again with at least this many bytes from the
    /// start of the input (or with `isComplete: true` if there are no more).
    case needMoreBytes(atLeast: Int)
    /// The input is not a valid image header.
    case failure(ImageProbeError)
}

/// Reads format, size and orientation from the first bytes of an image, without decoding it.
///
/// The parser is pure Swift with no Foundation and bounds-checks every read. It works on a
/// prefix that can grow: when the header continues past the bytes it was given it asks for more
/// through ``ImageHeaderParseResult/needMoreBytes(atLeast:)``, so a caller reading a file or a
/// network stream can fetch exactly what is needed.
public enum ImageHeaderParser {
    /// The longest signature test needs this many bytes (RIFF....WEBP).
    static let signatureLength = 12

    /// Parses whatever prefix of the file is available.
    ///
    /// The format is recognised by signature: JPEG (`FF D8 FF`), PNG, GIF87a/89a, WebP (RIFF
    /// `WEBP`) and BMP (`BM` with a known DIB header size).
    ///
    /// - Parameters:
    ///   - bytes: The first bytes of the input.
    ///   - isComplete: `true` when `bytes` is all there is, so running out of bytes is truncation
    ///     rather than a reason to ask for more.
    /// - Returns: The header's description, a request for a longer prefix, or a failure whose
    ///   source is empty (attribute it with ``ImageProbeError/attributed(to:)``).
    public static func parse(_ bytes: UnsafeRawBufferPointer, isComplete: Bool) -> ImageHeaderParseResult {
        var unexamined: Range<Int>?
        return parse(bytes, isComplete: isComplete, unexamined: &unexamined)
    }

    /// ``parse(_:isComplete:)``, also saying which requested bytes the parser will not look at.
    ///
    /// When the walk skips a segment or chunk that runs past the end of `bytes`, it asks for
    /// bytes beyond that segment; the segment's remaining payload, `unexamined`, is never read
    /// on any later call, so a reader that can seek may leave it unread (camera JPEGs can carry
    /// megabytes of XMP before the frame header).
    /// - Parameters:
    ///   - bytes: The first bytes of the input.
    ///   - isComplete: Whether `bytes` is all there is.
    ///   - unexamined: Set, alongside `.needMoreBytes`, to the range starting at `bytes.count` that
    ///     the parser skips by length; left alone otherwise.
    /// - Returns: As ``parse(_:isComplete:)``.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, isComplete: Bool, unexamined: inout Range<Int>?
    ) -> ImageHeaderParseResult {
        let count = bytes.count
        if count >= 3, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[2] == 0xFF {
            return JPEGHeaderParser.parse(bytes, isComplete: isComplete, unexamined: &unexamined)
        }
        if count >= 8, bytes.uint32BigEndian(at: 0) == 0x8950_4E47, bytes.uint32BigEndian(at: 4) == 0x0D0A_1A0A {
            return PNGHeaderParser.parse(bytes, isComplete: isComplete, unexamined: &unexamined)
        }
        if count >= 6, bytes.matches("GIF87a", at: 0) || bytes.matches("GIF89a", at: 0) {
            return GIFHeaderParser.parse(bytes, isComplete: isComplete)
        }
        if count >= 12, bytes.matches("RIFF", at: 0), bytes.matches("WEBP", at: 8) {
            return WebPHeaderParser.parse(bytes, isComplete: isComplete, unexamined: &unexamined)
        }
        if count >= 2, bytes[0] == 0x42, bytes[1] == 0x4D, count < 18 || BMPHeaderParser.hasKnownHeaderSize(bytes) {
            return BMPHeaderParser.parse(bytes, isComplete: isComplete)
        }
        if !isComplete && count < signatureLength && couldBeSignaturePrefix(bytes) {
            return .needMoreBytes(atLeast: signatureLength)
        }
        if count == 0 {
            return .failure(
                ImageProbeError(
                    code: .truncated,
                    message: "the input is empty (0 bytes); check that the file was fully written or downloaded",
                    offset: 0))
        }
        return .failure(
            ImageProbeError(
                code: .unknownFormat,
                message: "unrecognised signature at byte 0 (the file starts like \(kindOfContent(bytes))); "
                    + "supported formats are JPEG, PNG, GIF, WebP and BMP",
                offset: 0))
    }

    /// Whether a short prefix could still turn out to be one of the signatures.
    private static func couldBeSignaturePrefix(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let signatures: [[UInt8]] = [
            [0xFF, 0xD8, 0xFF], [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            Array("GIF8".utf8), Array("RIFF".utf8), Array("BM".utf8),
        ]
        return signatures.contains { signature in
            zip(bytes, signature).allSatisfy { $0 == $1 }
        }
    }

    /// What a non-image looks like, in a word, for error messages: never its bytes, which may be a secret (an image
    /// reference can name any file a person or feed points it at).
    static func kindOfContent(_ bytes: UnsafeRawBufferPointer) -> String {
        let head = bytes.prefix(512)
        let first = head.first { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
        if first == UInt8(ascii: "<") { return "markup: HTML, XML or SVG" }
        // Printable ASCII, white space and UTF-8 lead and continuation bytes.
        let isText = head.allSatisfy { $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        return isText ? "text" : "binary data of another kind"
    }

    /// The failure for an input that ended before its header did.
    static func truncated(_ format: String, at offset: Int, needed: Int, what: String) -> ImageHeaderParseResult {
        .failure(
            ImageProbeError(
                code: .truncated,
                message: "\(format) ends at byte \(offset) \(what) (needs at least \(needed) bytes); "
                    + "the file is incomplete: download or copy it again",
                offset: offset))
    }

    /// The failure for a malformed header.
    static func invalid(_ format: String, at offset: Int, _ what: String) -> ImageHeaderParseResult {
        .failure(
            ImageProbeError(
                code: .invalidHeader,
                message:
                    "\(format) header is invalid at byte \(offset): \(what); the file is damaged or not really \(format)",
                offset: offset))
    }
}
