/// An item as the parser captured it: raw fields, not yet turned into text, resolved or dated.
///
/// Finishing an item (HTML to plain text, URL resolution, dates, the image choice) is most of what
/// ingest costs beyond libxml2's own parsing, and it needs nothing from the parser. So a reader can
/// hand out captured items (``FeedReader/captureItems(_:)``) and go on parsing while another task
/// finishes them with a ``FeedItemFinisher``: on two cores the parser then runs nearly alone on one.
public struct CapturedFeedItem: Sendable {
    /// Both cases boxed: an item is copied several times on its way to the finisher (into a window, out of it),
    /// and a bare builder or record in the payload made each copy retain a dozen references.
    enum Content: Sendable {
        /// An XML item, finished later.
        case raw(RawItem)
        /// A JSON Feed item: decoded whole at the end of the input, finished at once.
        case finished(FinishedItem)
    }

    let content: Content
    /// The item's position in the feed, from 0.
    public let index: Int

    init(raw builder: ItemBuilder, index: Int) {
        content = .raw(RawItem(builder))
        self.index = index
    }

    init(finished item: FeedItem) {
        content = .finished(FinishedItem(item))
        index = item.index
    }
}

/// A JSON Feed item's record, shared rather than copied.
final class FinishedItem: Sendable {
    let item: FeedItem

    init(_ item: FeedItem) {
        self.item = item
    }
}

/// A captured XML item's builder, shared rather than copied.
final class RawItem: Sendable {
    let builder: ItemBuilder

    init(_ builder: ItemBuilder) {
        self.builder = builder
    }

    /// The record, finished from the builder in place: read through the box from outside, the builder was
    /// copied (every field retained and released) on its way into the finisher.
    func finish(with finisher: ItemFinisher, index: Int) -> FeedItem {
        finisher.finish(builder, index: index)
    }
}

/// Turns captured items into records.
///
/// Not `Sendable`: it keeps an HTML parser and a cache of resolved folders. Each task that finishes
/// items makes its own from the reader's ``FeedReader/finishing`` settings; any number can work on
/// one feed's items, and the record depends only on the item, never on which finisher made it.
public final class FeedItemFinisher {
    /// What a finisher needs to know about the feed: where it lives and the limits.
    public struct Settings: Sendable {
        let baseURL: String?
        let feedDirectory: String?
        let options: FeedIngestOptions
    }

    let finisher: ItemFinisher

    /// Creates a finisher for one feed's items.
    /// - Parameter settings: the reader's ``FeedReader/finishing``.
    public init(_ settings: Settings) {
        finisher = ItemFinisher(
            resolver: URLResolver(
                feedURL: settings.baseURL, feedDirectory: settings.feedDirectory,
                imageRoot: settings.options.imageRoot),
            converter: HTMLTextConverter(), options: settings.options)
    }

    /// The record of a captured item: exactly what ``FeedReader/consume(_:)`` returns for it.
    public func finish(_ item: CapturedFeedItem) -> FeedItem {
        finisher.finish(item)
    }
}

extension ItemFinisher {
    func finish(_ item: CapturedFeedItem) -> FeedItem {
        switch item.content {
        case .raw(let raw): raw.finish(with: self, index: item.index)
        case .finished(let finished): finished.item
        }
    }
}
