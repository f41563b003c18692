import Foundation
import FeedIngest

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
///   - feedPath: A file path, or `-` for standard input.
///   - imageRoot: Local images may also live under this folder.
///   - onItem: Receives every item in feed order.
/// - Throws: `LayoutError.feedUnreadable` / `.feedInvalid` when the feed cannot be read or parsed at all.
public func ingestFeed(
    at feedPath: String, imageRoot: String? = nil, onItem: (FeedItem) throws -> Void
) throws -> IngestSummary {
    let source = try FeedSource(path: feedPath)
    let reader = FeedReader(
        sourceName: source.displayName, baseURL: nil, feedDirectory: source.directory,
        options: FeedIngestOptions(imageRoot: imageRoot))
    var summary = IngestSummary()
    func deliver(_ items: [FeedItem]) throws {
        for item in items {
            summary.items += 1
            if !item.warnings.isEmpty { summary.itemsWithWarnings += 1 }
            try onItem(item)
        }
    }
    do {
        while let chunk = try source.nextChunk() {
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
