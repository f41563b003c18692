import AsyncAlgorithms
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
    public var feedWarnings: [FeedWarning] = []

    /// What a person is told after `ingest`: the counts, then the feed's own warnings, one per line.
    public func report(feed: String) -> [String] {
        let lines = ["\(feed): \(items) items (\(format ?? "unknown format")), \(itemsWithWarnings) with warnings"]
        return lines + feedWarnings.map { $0.reportLine(feed: feed) }
    }
}

/// Streams a feed's items, as they close, to `onItem`.
///
/// - Parameters:
///   - feedPath: A file path, `-` for standard input, or an http(s) URL (streamed, never held whole).
///   - imageRoot: Local images may also live under this folder (for a feed from a URL, the only local images
///     it may name, as `file:` URLs).
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

/// Reads a feed a caller holds (``FeedInput/bytes(_:name:baseURL:)``) or receives in chunks, as
/// ``ingestFeed(at:imageRoot:allowPrivateNetwork:logger:onItem:)`` reads a file: parsed on one task while this one
/// finishes the items, in feed order.
/// - Throws: `LayoutError.feedUnreadable` / `.feedInvalid` when the feed cannot be read or parsed at all.
public func ingestFeed(
    _ input: FeedInput, imageRoot: String? = nil, onItem: (FeedItem) throws -> Void
) async throws -> IngestSummary {
    try await ingestFeed(from: FeedSource(input, fetcher: nil), imageRoot: imageRoot, onItem: onItem)
}

private func ingestFeed(
    from source: sending FeedSource, imageRoot: String?, onItem: (FeedItem) throws -> Void
) async throws -> IngestSummary {
    // The parser runs in a child task and hands over items as captured; this task finishes and delivers them, so
    // on two cores libxml2 has a core nearly to itself. A failed delivery (a closed pipe) stops the parser too.
    var (summary, outcome) = try await FeedParsingStage.withParsing(
        source, imageRoot: imageRoot, windowSize: 256, clock: ContinuousClock()
    ) { windows, finishing in
        let finisher = FeedItemFinisher(finishing)
        var summary = IngestSummary()
        for try await window in windows.buffer(policy: .bounded(8)) {
            for item in window.items {
                let record = finisher.finish(item)
                summary.items += 1
                if !record.warnings.isEmpty { summary.itemsWithWarnings += 1 }
                try onItem(record)
            }
        }
        return summary
    }
    summary.format = outcome.format.map(\.rawValue)
    summary.feedWarnings = outcome.feedWarnings
    return summary
}
