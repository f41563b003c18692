#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import LocalFileAccess

extension FeedReader {
    /// The chunk size for file reads: large enough that the per-call cost vanishes, small enough
    /// that memory stays flat.
    static let readChunkSize = 64 * 1024

    /// Streams a local feed file (or `-` for standard input) through a reader.
    ///
    /// Relative image references resolve against the file's directory and must stay inside it or
    /// inside `options.imageRoot`; standard input has no directory, so its relative references
    /// name files under `options.imageRoot`, or are reported as written without one.
    /// - Parameters:
    ///   - path: the file, or `-`.
    ///   - options: limits and roots.
    ///   - onItem: called once per item, in feed order, as soon as the item has closed.
    /// - Returns: the item count, format, feed title and feed-level warnings.
    /// - Throws: `FeedIngestError` (`.readFailed` when the file cannot be read), or whatever
    ///   `onItem` throws.
    public static func read(
        path: String, options: FeedIngestOptions = .init(), onItem: (FeedItem) throws -> Void
    ) throws -> FeedSummary {
        let isStandardInput = path == "-"
        let descriptor = isStandardInput ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FeedIngestError(
                code: .readFailed, message: "cannot open the feed: \(String(cString: strerror(errno))); check the path",
                source: path)
        }
        defer { if !isStandardInput { close(descriptor) } }
        let directory: String? =
            isStandardInput ? nil : URLResolver.directoryPart(of: LocalFileGate.absoluteNormalised(path))
        let reader = FeedReader(
            sourceName: path, baseURL: nil, feedDirectory: directory, options: options)
        var count = 0
        var byteCount = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readChunkSize, alignment: 16)
        defer { buffer.deallocate() }
        // A reader whose parser halted takes nothing more: the rest of the file is not read.
        while !reader.hasStoppedParsing {
            let readCount = readSome(descriptor, buffer.baseAddress, readChunkSize)
            if readCount < 0 {
                if errno == EINTR { continue }
                throw FeedIngestError(
                    code: .readFailed,
                    message: "reading failed after \(byteCount) bytes: \(String(cString: strerror(errno)))",
                    source: path)
            }
            if readCount == 0 { break }
            byteCount += readCount
            for item in try reader.consume(UnsafeRawBufferPointer(rebasing: buffer[..<readCount])) {
                try onItem(item)
                count += 1
            }
        }
        for item in try reader.finish() {
            try onItem(item)
            count += 1
        }
        return FeedSummary(
            itemCount: count, format: reader.format, feedTitle: reader.feedTitle, warnings: reader.feedWarnings,
            byteCount: byteCount)
    }
}

/// `read(2)`, named so that it does not collide with `FeedReader.read(path:options:onItem:)`.
private func readSome(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        return Glibc.read(descriptor, buffer, count)
    #else
        return Darwin.read(descriptor, buffer, count)
    #endif
}
