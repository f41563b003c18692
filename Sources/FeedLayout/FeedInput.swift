import Foundation
import LayoutPages
import RemoteFetch

/// Where a feed's bytes come from.
///
/// A person names a feed by path, `-` or URL (``path(_:standardInputPrefix:)``); a server holds the bytes a client
/// sent (``bytes(_:name:baseURL:)``), is still receiving them (``chunks(_:name:baseURL:)``), or has a URL a client
/// gave (``url(_:)``). Only a path may name local files: a feed from bytes, chunks or a URL reads local photos only
/// under `LayoutOptions.imageRoot`, and with no image root, none at all, so what a client sends can never make the
/// process open a file the client names.
public struct FeedInput: Sendable {
    enum Source: Sendable {
        /// A file, `-` (standard input, after bytes already read from it) or an http(s) URL.
        case path(String, standardInputPrefix: Data)
        case bytes([UInt8])
        case chunks(FeedChunks)
    }

    let source: Source
    /// The whole feed's index of the first item these bytes hold: not 0 for a feed resumed by bytes
    /// (``resumed(_:firstItem:name:baseURL:)``).
    package private(set) var firstItemIndex = 0
    /// How messages name the feed: its path or URL, or the name given with its bytes.
    public let name: String
    /// For bytes and chunks: the http(s) URL relative references resolve against (the feed has no location of its
    /// own); `nil` leaves relative references unresolved (each such photo gets a warning).
    public let baseURL: String?

    /// A feed a person named: a file path, `-` for standard input, or an http(s) URL. A local feed's photos may
    /// be read from its own folder (and the image root).
    /// - Parameter standardInputPrefix: With `-`: bytes already read from standard input; the feed is these bytes
    ///   followed by the rest of standard input.
    public static func path(_ path: String, standardInputPrefix: Data = Data()) -> FeedInput {
        FeedInput(
            source: .path(path, standardInputPrefix: standardInputPrefix), name: path == "-" ? "stdin" : path,
            baseURL: nil)
    }

    /// A feed at an http(s) URL: fetched with the run's HTTP client (its address policy, timeouts and size limit).
    /// - Throws: `LayoutError.feedUnreadable` when the URL is not http(s) (a `file:` URL or a path is refused).
    public static func url(_ url: String) throws(LayoutError) -> FeedInput {
        guard RemoteFetcher.isRemote(url) else {
            throw LayoutError(.feedUnreadable, "\(url): only http(s) URLs are fetched; a local file cannot be named here")
        }
        return FeedInput(source: .path(url, standardInputPrefix: Data()), name: url, baseURL: nil)
    }

    /// A feed held in memory.
    /// - Parameters:
    ///   - name: How messages name the feed.
    ///   - baseURL: The http(s) URL relative references resolve against (where the feed was found).
    public static func bytes(_ bytes: some Sequence<UInt8>, name: String = "feed", baseURL: String? = nil) -> FeedInput {
        FeedInput(source: .bytes(Array(bytes)), name: name, baseURL: baseURL)
    }

    /// A feed resumed by bytes: `bytes` are ``FeedByteSplitter/resumedFeed(_:atItemStart:knownLines:)`` of the whole feed at
    /// its item `index`, whose items are numbered from there. A run of it must resume from a cursor whose next item
    /// is `index`, and takes the items before the cursor as the ones the cursor was made from without reading them:
    /// only for a caller that has shown they are (the bytes before that item are those of the feed the cursor's
    /// pages were made from, ``FeedAppend``).
    package static func resumed(_ bytes: [UInt8], firstItem index: Int, name: String, baseURL: String?) -> FeedInput {
        var input = FeedInput(source: .bytes(bytes), name: name, baseURL: baseURL)
        input.firstItemIndex = index
        return input
    }

    /// A feed arriving in chunks (a request body, a message queue): parsing starts with the first chunk, and
    /// memory holds a chunk at a time, not the feed.
    /// - Parameters:
    ///   - chunks: The feed's bytes in order; iterated once, by the run. An error it throws fails the run as an
    ///     unreadable feed.
    ///   - name: How messages name the feed.
    ///   - baseURL: The http(s) URL relative references resolve against.
    public static func chunks<Chunks: AsyncSequence & Sendable>(
        _ chunks: Chunks, name: String = "feed", baseURL: String? = nil
    ) -> FeedInput where Chunks.Element == [UInt8] {
        FeedInput(source: .chunks(FeedChunks(chunks)), name: name, baseURL: baseURL)
    }

    /// Whether local photos may be read from the feed's own folder: only for a local feed a person named.
    var localPath: String? {
        guard case .path(let path, _) = source, !RemoteFetcher.isRemote(path) else { return nil }
        return path
    }
}

/// An async sequence of byte chunks with its type erased, so that `FeedInput` stays one concrete type.
struct FeedChunks: Sendable {
    let makeIterator: @Sendable () -> Iterator

    init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == [UInt8] {
        makeIterator = {
            var iterator = chunks.makeAsyncIterator()
            return Iterator { try await iterator.next() }
        }
    }

    /// One pass over the chunks, used by one task.
    final class Iterator {
        let next: () async throws -> [UInt8]?
        init(next: @escaping () async throws -> [UInt8]?) { self.next = next }
    }
}
