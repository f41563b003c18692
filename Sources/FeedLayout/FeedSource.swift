import FeedIngest
import Foundation
import RemoteFetch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A feed's bytes, read in chunks from a file, standard input, an http(s) URL, memory or an async sequence, so
/// that a feed of any size streams: no source ever holds more than one chunk (beyond what its caller gave it).
final class FeedSource {
    /// How the feed is named in messages: the path or URL as given, or `stdin`.
    let displayName: String
    /// The absolute folder local image references resolve against; `nil` for a remote feed.
    let directory: String?
    /// The URL that served a remote feed, after redirects: the last base for relative references.
    let url: String?
    /// The charset of a remote feed's `Content-Type`, used when the document declares no encoding.
    let charset: String?
    private var backing: Backing
    private let chunkSize: Int
    /// Bytes read from standard input before the source was opened; they come first.
    private var prefix: [UInt8]
    /// The whole feed's index of the source's first item (``FeedInput/firstItemIndex``).
    private(set) var firstItemIndex = 0

    private enum Backing {
        case descriptor(Int32, closeAtEnd: Bool)
        case remote(RemoteBody.AsyncIterator)
        /// Bytes in memory and how many have been handed out.
        case memory([UInt8], offset: Int)
        case chunks(FeedChunks.Iterator)
        /// A document put together from pieces of a file (a share of a feed split by bytes): the piece being read
        /// and how far.
        case pieces(Int32, [FeedByteSplitter.Document.Piece], piece: Int, offset: Int)
    }

    /// Opens a feed.
    ///
    /// - Parameters:
    ///   - input: The feed.
    ///   - fetcher: Fetches a remote feed; `nil` refuses URLs.
    /// - Throws: `LayoutError.feedUnreadable` as ``init(path:fetcher:maximumBytes:standardInputPrefix:chunkSize:)``
    ///   does, and for a base URL that is not http(s).
    convenience init(_ input: FeedInput, fetcher: RemoteFetcher?) async throws(LayoutError) {
        switch input.source {
        case .path(let path, let prefix):
            try await self.init(path: path, fetcher: fetcher, standardInputPrefix: prefix)
        case .bytes(let bytes):
            try self.init(held: .memory(bytes, offset: 0), name: input.name, baseURL: input.baseURL)
            firstItemIndex = input.firstItemIndex
        case .chunks(let chunks):
            try self.init(held: .chunks(chunks.makeIterator()), name: input.name, baseURL: input.baseURL)
        }
    }

    /// A feed given as bytes or chunks: it has no folder, and its relative references resolve against `baseURL`.
    private init(held backing: Backing, name: String, baseURL: String?) throws(LayoutError) {
        if let baseURL, !RemoteFetcher.isRemote(baseURL) {
            throw LayoutError(.feedUnreadable, "\(name): the base URL \(baseURL) is not an http(s) URL")
        }
        displayName = name
        directory = nil
        url = baseURL
        charset = nil
        self.backing = backing
        chunkSize = 256 * 1024
        prefix = []
    }

    /// Opens a feed a person named.
    ///
    /// - Parameters:
    ///   - path: A file path, `-` for standard input, or an http(s) URL.
    ///   - fetcher: Fetches a remote feed (with its timeouts, redirect limit and private-network policy);
    ///     `nil` refuses URLs.
    ///   - maximumBytes: A remote feed larger than this fails (the reader's input-size limit).
    ///   - standardInputPrefix: For `-`: bytes of standard input already read; they are the feed's beginning.
    ///   - chunkSize: Bytes per read from a file.
    /// - Throws: `LayoutError.feedUnreadable` naming the path or URL when it does not exist, is a folder, cannot
    ///   be opened, or the server refuses, fails or times out.
    init(
        path: String, fetcher: RemoteFetcher?, maximumBytes: Int = FeedIngestOptions().maxInputBytes,
        standardInputPrefix: Data = Data(), chunkSize: Int = 256 * 1024
    ) async throws(LayoutError) {
        self.chunkSize = chunkSize
        prefix = path == "-" ? [UInt8](standardInputPrefix) : []
        if RemoteFetcher.isRemote(path) {
            guard let fetcher else {
                throw LayoutError(
                    .feedUnreadable, "\(path): this command reads feeds from files or standard input only")
            }
            do {
                // Bounded by the connect and idle timeouts and the size limit, not by a total: a large feed that
                // arrives steadily is read to its end.
                let (body, resource) = try await fetcher.streamBody(
                    path, maximumBytes: maximumBytes, boundedInTotal: false)
                displayName = path
                directory = nil
                url = resource.finalURL
                charset = resource.charset
                backing = .remote(body.makeAsyncIterator())
            } catch {
                throw LayoutError(.feedUnreadable, error.message)
            }
            return
        }
        url = nil
        charset = nil
        if path == "-" {
            displayName = "stdin"
            directory = Self.localDirectory(of: path)
            backing = .descriptor(STDIN_FILENO, closeAtEnd: false)
            return
        }
        displayName = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LayoutError(.feedUnreadable, "\(path): no such file; check the feed path")
        }
        guard !isDirectory.boolValue else {
            throw LayoutError(
                .feedUnreadable, "\(path): is a folder; pass the feed file itself (e.g. \(path)/feed.xml)")
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw LayoutError(.feedUnreadable, "\(path): cannot be opened for reading; check its permissions")
        }
        backing = .descriptor(descriptor, closeAtEnd: true)
        directory = Self.localDirectory(of: path)
    }

    /// Opens a share of a feed file split by bytes: its document's pieces read in order, relative references
    /// resolved against the file's folder as for the whole file.
    /// - Throws: `LayoutError.feedUnreadable` when the file cannot be opened.
    init(path: String, document: FeedByteSplitter.Document, chunkSize: Int = 256 * 1024) throws(LayoutError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw LayoutError(.feedUnreadable, "\(path): cannot be opened for reading; check its permissions")
        }
        displayName = path
        directory = Self.localDirectory(of: path)
        url = nil
        charset = nil
        self.chunkSize = chunkSize
        prefix = []
        backing = .pieces(descriptor, document.pieces, piece: 0, offset: 0)
    }

    deinit {
        switch backing {
        case .descriptor(let descriptor, closeAtEnd: true), .pieces(let descriptor, _, _, _): close(descriptor)
        default: break
        }
    }

    /// A reader for this feed: its base URL (remote) or folder (local), and the transport's charset.
    func makeReader(imageRoot: String?) -> FeedReader {
        let reader = FeedReader(
            sourceName: displayName, baseURL: url, feedDirectory: directory,
            options: FeedIngestOptions(imageRoot: imageRoot, transportEncoding: charset))
        if firstItemIndex > 0 { reader.numberItems(from: firstItemIndex) }
        return reader
    }

    /// The folder a feed's relative image references resolve against: the file's folder, the working folder
    /// for standard input, `nil` for an http(s) URL.
    static func localDirectory(of path: String) -> String? {
        if RemoteFetcher.isRemote(path) { return nil }
        if path == "-" { return FileManager.default.currentDirectoryPath }
        return URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent().path
    }

    /// The next chunk, or `nil` at the end of the feed.
    func nextChunk() async throws(LayoutError) -> [UInt8]? {
        if !prefix.isEmpty {
            defer { prefix = [] }
            return prefix
        }
        switch backing {
        case .descriptor(let descriptor, _):
            while true {
                var failure: Int32 = 0
                let chunk = [UInt8](unsafeUninitializedCapacity: chunkSize) { buffer, count in
                    let result = read(descriptor, buffer.baseAddress, chunkSize)
                    count = max(0, result)
                    if result < 0 { failure = errno }
                }
                if failure == EINTR { continue }
                if failure != 0 {
                    throw LayoutError(
                        .feedUnreadable, "\(displayName): read failed: \(String(cString: strerror(failure)))")
                }
                return chunk.isEmpty ? nil : chunk
            }
        case .pieces(let descriptor, let pieces, var piece, var offset):
            while piece < pieces.count {
                switch pieces[piece] {
                case .bytes(let bytes) where offset < bytes.count:
                    let end = min(bytes.count, offset + chunkSize)
                    backing = .pieces(descriptor, pieces, piece: piece, offset: end)
                    return Array(bytes[offset..<end])
                case .file(let range) where offset < range.count:
                    let length = min(chunkSize, range.count - offset)
                    var failure: Int32 = 0
                    let chunk = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
                        let result = pread(descriptor, buffer.baseAddress, length, off_t(range.lowerBound + offset))
                        count = max(0, result)
                        if result < 0 { failure = errno }
                    }
                    if failure == EINTR { continue }
                    if failure != 0 || chunk.isEmpty {
                        let reason = failure != 0 ? String(cString: strerror(failure)) : "the file got shorter"
                        throw LayoutError(.feedUnreadable, "\(displayName): read failed: \(reason)")
                    }
                    backing = .pieces(descriptor, pieces, piece: piece, offset: offset + chunk.count)
                    return chunk
                default:
                    piece += 1
                    offset = 0
                }
            }
            backing = .pieces(descriptor, pieces, piece: piece, offset: 0)
            return nil
        case .memory(let bytes, let offset):
            guard offset < bytes.count else { return nil }
            let end = min(bytes.count, offset + chunkSize)
            backing = .memory(bytes, offset: end)
            return Array(bytes[offset..<end])
        case .chunks(let iterator):
            do {
                return try await iterator.next()
            } catch let error as LayoutError {
                throw error
            } catch is CancellationError {
                throw LayoutError(.feedUnreadable, "\(displayName): reading the feed was cancelled")
            } catch {
                throw LayoutError(.feedUnreadable, "\(displayName): reading the feed failed: \(error)")
            }
        case .remote(var iterator):
            do {
                let chunk = try await iterator.next()
                backing = .remote(iterator)
                return chunk
            } catch let error as RemoteFetchError {
                throw LayoutError(.feedUnreadable, error.message)
            } catch {
                throw LayoutError(.feedUnreadable, "\(displayName): \(error)")
            }
        }
    }
}
