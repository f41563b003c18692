import FeedIngest
import Foundation
import Logging
import RemoteFetch

/// What `feedlayout ingest` reports at the end.
public struct IngestSummary: Sendable {
    public var items = 0
    public var itemsWithWarnings = 0
    public var format: String?
    /// Problems not tied to one item (junk after the root, an encoding retry, …).
    public var feedWarnings: [ItemWarning] = []
}

/// Streams a feed's items, as they close, to `onItem`.
///
/// - Parameters:
///   - feedPath: A file path, `-` for standard input, or an http(s) URL (streamed, never held whole).
///   - imageRoot: Local images may also live under this folder (local feeds only).
///   - allowPrivateNetwork: Whether a feed URL may point at a private, loopback or link-local address.
///   - logger: Where fetching a remote feed logs its requests.
///   - onItem: Receives every item in feed order.
/// - Throws: `LayoutError.feedUnreadable` / `.feedInvalid` when the feed cannot be read or parsed at all.
public func ingestFeed(
    at feedPath: String, imageRoot: String? = nil, allowPrivateNetwork: Bool = false,
    logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() }),
    onItem: (FeedItem) throws -> Void
) async throws -> IngestSummary {
    guard RemoteFetcher.isRemote(feedPath) else {
        return try await ingestFeed(
            from: FeedSource(path: feedPath, fetcher: nil), imageRoot: imageRoot, onItem: onItem)
    }
    // The HTTP client lives exactly as long as the feed is read.
    return try await RemoteFetcher.withFetcher(
        configuration: RemoteFetchConfiguration(allowPrivateNetwork: allowPrivateNetwork), logger: logger
    ) { fetcher in
        try await ingestFeed(from: FeedSource(path: feedPath, fetcher: fetcher), imageRoot: imageRoot, onItem: onItem)
    }
}

private func ingestFeed(
    from source: FeedSource, imageRoot: String?, onItem: (FeedItem) throws -> Void
) async throws -> IngestSummary {
    let reader = source.makeReader(imageRoot: imageRoot)
    var summary = IngestSummary()
    func deliver(_ items: [FeedItem]) throws {
        for item in items {
            summary.items += 1
            if !item.warnings.isEmpty { summary.itemsWithWarnings += 1 }
            try onItem(item)
        }
    }
    do {
        while let chunk = try await source.nextChunk() {
            try deliver(try chunk.withUnsafeBytes { try reader.consume($0) })
        }
        try deliver(try reader.finish())
    } catch let error as FeedIngestError {
        throw LayoutError(.feedInvalid, error.description)
    }
    summary.format = reader.format.map { "\($0)" }
    summary.feedWarnings = reader.feedWarnings.map(ItemWarning.init)
    return summary
}
