import ByteTools
/// The input sanitizer over a stream of chunks: a UTF-8 sequence, reference or marker split by a
/// chunk's end is held back until the next.
struct SanitizingStream: Sendable {
    var sanitizer: InputSanitizer
    private var tail: [UInt8] = []

    /// How many bytes of a chunk go with the bytes the last one held back: more than the longest thing held back
    /// (a reference of 32 characters, a CDATA marker, a UTF-8 sequence).
    private static let joinLength = 64

    init(_ sanitizer: InputSanitizer) {
        self.sanitizer = sanitizer
    }

    /// Cleans `bytes`, after what the last call held back.
    /// - Parameters:
    ///   - isFinal: true for the end of the input: nothing is held back.
    ///   - repairs: receives the repairs made, in input order.
    /// - Returns: the clean bytes.
    mutating func clean(
        _ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool, repairs: inout [InputSanitizer.Repair]
    ) -> GrowableBytes {
        // Room for the usual growth (a bare `&` becomes `&#38;`, a text section adds its markers), so that the
        // output is not moved as it grows.
        let size = tail.count + bytes.count
        let output = GrowableBytes(capacity: size + size / 4 + 64)
        var start = 0
        if !tail.isEmpty {
            // What the last chunk held back (a few bytes) is finished with the first bytes of this one; the rest
            // is cleaned in place. Appending the whole chunk to the held-back bytes copied nearly every chunk.
            let joined = bytes.count > Self.joinLength ? Self.joinLength : bytes.count
            let heldBack = tail.count
            tail.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[..<joined]))
            let consumed = tail.withUnsafeBufferPointer {
                sanitizer.process($0, isFinal: isFinal && joined == bytes.count, output: output)
            }
            if consumed >= heldBack && joined < bytes.count {
                tail.removeAll(keepingCapacity: true)
                start = consumed - heldBack
            } else {
                // The chunk was short (or the join did not decide): the rest goes the way of the held-back bytes.
                tail.removeFirst(consumed)
                tail.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[joined...]))
                let consumedAll = tail.withUnsafeBufferPointer {
                    sanitizer.process($0, isFinal: isFinal, output: output)
                }
                tail.removeFirst(consumedAll)
                start = bytes.count
            }
        }
        if start < bytes.count {
            let rest = UnsafeBufferPointer(rebasing: bytes[start...])
            let consumed = sanitizer.process(rest, isFinal: isFinal, output: output)
            if consumed < rest.count { tail.append(contentsOf: UnsafeBufferPointer(rebasing: rest[consumed...])) }
        }
        repairs.append(contentsOf: sanitizer.repairs)
        sanitizer.repairs.removeAll(keepingCapacity: true)
        return output
    }
}

/// A feed's bytes as a ``FeedInputSanitizer`` cleaned them, for ``FeedReader/captureItems(sanitized:)``.
public struct SanitizedChunk: Sendable {
    /// The sanitizer's own buffer, handed to the parser as it was written (not copied into an array).
    let bytes: GrowableBytes
    let repairs: [InputSanitizer.Repair]
    /// Input bytes sanitized so far, this chunk's included (the reader's errors quote it).
    let inputByteCount: Int
    /// Whether this is the end of the input (from ``FeedInputSanitizer/finish()``).
    public let isFinal: Bool
}

/// Repairs a feed's bytes (invalid UTF-8, control characters, bare `&`, HTML entities; see the
/// reader's documentation) ahead of its reader.
///
/// Sanitizing is a pass over every byte that libxml2 must wait for. Once a reader has decided how
/// to read the feed, ``FeedReader/detachSanitizer()`` hands this pass out, so that another task can
/// run it a chunk ahead while the reader parses: on two cores, libxml2 then has one to itself.
public struct FeedInputSanitizer: Sendable {
    var stream: SanitizingStream
    let sourceName: String
    let maxInputBytes: Int
    var inputByteCount: Int

    /// Cleans the next chunk of the input.
    /// - Parameter bytes: the chunk; any size, split anywhere.
    /// - Returns: the clean bytes for the reader.
    /// - Throws: `FeedIngestError` `.inputTooLarge` past the reader's input limit.
    public mutating func sanitize(_ bytes: UnsafeRawBufferPointer) throws(FeedIngestError) -> SanitizedChunk {
        inputByteCount += bytes.count
        if inputByteCount > maxInputBytes {
            throw FeedIngestError.inputTooLarge(limit: maxInputBytes, source: sourceName)
        }
        return clean(bytes.bindMemory(to: UInt8.self), isFinal: false)
    }

    /// Cleans what was held back at the end of the input; pass it to
    /// ``FeedReader/captureRemainingItems(sanitized:)``.
    public mutating func finish() -> SanitizedChunk {
        clean(UnsafeBufferPointer(start: nil, count: 0), isFinal: true)
    }

    private mutating func clean(_ bytes: UnsafeBufferPointer<UInt8>, isFinal: Bool) -> SanitizedChunk {
        var repairs: [InputSanitizer.Repair] = []
        let output = stream.clean(bytes, isFinal: isFinal, repairs: &repairs)
        return SanitizedChunk(bytes: output, repairs: repairs, inputByteCount: inputByteCount, isFinal: isFinal)
    }
}

extension FeedIngestError {
    static func inputTooLarge(limit: Int, source: String) -> FeedIngestError {
        FeedIngestError(
            code: .inputTooLarge,
            message:
                "the input is larger than the limit of \(limit) bytes (passed at byte offset \(limit)); raise maxInputBytes if the feed is trusted",
            source: source)
    }
}
