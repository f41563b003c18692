import ByteTools
import FeedIngest
import ImageProbe
import LayoutPages
import Logging
import ProbeCache
import RemoteFetch
import TextMeasure

/// The pipeline split at its natural seam, so the expensive part runs in parallel on many machines: `prepare`
/// (parse, probe, measure: slow, independent per item) for ranges of items anywhere, then `place` (placement and
/// pages: fast, sequential) of all of them in one process. Placed in order, prepared items give the pages
/// ``run(_:resume:logger:onProgress:onPage:)`` gives, byte for byte.
extension LayoutPipeline {
    /// What prepared items carry to name the options and fonts they were prepared with: `place` refuses items
    /// prepared for other pages.
    package var preparedIdentity: String { "sha256:" + SHA256.hexDigest(Array(identity.utf8)).prefix(32) }

    /// Prepares the items of a feed whose 0-based index is in `range` (all of them when `nil`), in feed order.
    /// Items before the range are only parsed (not finished, probed or measured); reading stops after the range.
    ///
    /// - Returns: How many items were prepared, and how many items the feed has when reading went to its end
    ///   (`nil` when it stopped after the range).
    /// - Throws: `LayoutError` when the feed cannot be read, or what `onItem` throws.
    package func prepare(
        _ feed: FeedInput, items range: Range<Int>?,
        logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() }),
        onItem: (PreparedItem) async throws -> Void
    ) async throws -> (prepared: Int, feedItems: Int?) {
        try await RemoteFetcher.withFetcher(
            configuration: RemoteFetchConfiguration(allowPrivateNetwork: options.allowPrivateNetwork), logger: logger
        ) { fetcher in
            try await prepare(
                try await FeedSource(feed, fetcher: fetcher), prober: prober(for: feed, fetcher: fetcher, logger: logger),
                items: range, onItem: onItem)
        }
    }

    /// Cuts a feed file into about `count` ranges of similar size for ``prepare(file:bytes:logger:onItem:)``, by one
    /// scan of its markup (see `FeedByteSplitter`).
    /// - Throws: `LayoutError.feedUnreadable`, or `.feedInvalid` when the feed cannot be split by bytes (naming why).
    package static func byteRanges(ofFile path: String, count: Int) throws(LayoutError) -> [FeedByteRange] {
        do {
            return try FeedByteSplitter.split(path: path, into: count)
        } catch {
            throw LayoutError(error)
        }
    }

    /// Prepares the items of a feed file whose start tag begins in `range.bytes` (a range
    /// `FeedByteSplitter.split(path:into:)` made): only the file's head and that share are read. They are items
    /// `range.items` of the feed and are prepared as in the whole file, so `place` of every range's items gives
    /// the pages of the whole feed.
    ///
    /// - Returns: How many items were prepared.
    /// - Throws: `LayoutError`: `.invalidOptions` when the range does not fit the file (it does not begin at an
    ///   item, or its item count differs from what the file holds there), `.feedInvalid` when the feed cannot be
    ///   split by bytes, `.feedUnreadable`, or what `onItem` throws.
    package func prepare(
        file path: String, bytes range: FeedByteRange,
        logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() }),
        onItem: (PreparedItem) async throws -> Void
    ) async throws -> Int {
        let document: FeedByteSplitter.Document
        do {
            document = try FeedByteSplitter.document(path: path, range: range)
        } catch {
            throw LayoutError(error)
        }
        let first = range.items.lowerBound
        let prepared = try await RemoteFetcher.withFetcher(
            configuration: RemoteFetchConfiguration(allowPrivateNetwork: options.allowPrivateNetwork), logger: logger
        ) { fetcher in
            try await prepare(
                try FeedSource(path: path, document: document),
                prober: prober(for: .path(path), fetcher: fetcher, logger: logger), items: nil
            ) { item in
                var item = item
                item.item.index += first
                try await onItem(item)
            }.prepared
        }
        let bytes = "bytes " + FeedByteRange.text(range.bytes)
        if let found = document.itemCount, found != prepared {
            throw LayoutError(
                .feedInvalid,
                "\(path): \(bytes): the parser read \(prepared) items where the markup holds \(found): the feed is not one "
                    + "that can be split by bytes; prepare it with --items")
        }
        if range.items.upperBound != Int.max, range.items.count != prepared {
            throw LayoutError(
                .invalidOptions,
                "\(path): \(bytes) holds \(prepared) items, not \(range.items.count) (--items \(FeedByteRange.text(range.items))); "
                    + "take ranges from prepare --split of this very file")
        }
        return prepared
    }

    /// Prepares the items of `source` in `range` (all when `nil`), handing each to `onItem` in feed order.
    private func prepare(
        _ source: sending FeedSource, prober: CachingImageProber, items range: Range<Int>?,
        onItem: (PreparedItem) async throws -> Void
    ) async throws -> (prepared: Int, feedItems: Int?) {
        let end = range?.upperBound ?? Int.max
        var count = 0
        var seen = 0
        var reachedEnd = true
        _ = try await withPreparedWindows(
            source, prober: prober, memo: RunProbeMemo(statistics: nil), skippingBefore: range?.lowerBound ?? 0,
            finishingSkipped: false, clock: ContinuousClock()
        ) { window in
            seen += window.skippedCount
            for item in window.items {
                // Past the range, the stages ahead stop at their next window.
                guard item.item.index < end else {
                    reachedEnd = false
                    return false
                }
                try await onItem(item)
                count += 1
                seen += 1
            }
            return true
        }
        return (count, reachedEnd ? seen : nil)
    }

    /// Places prepared items into pages. The items must come in index order from 0, each once: a gap or an
    /// overlap is an error naming it.
    ///
    /// - Parameters:
    ///   - items: The prepared items, in order.
    ///   - onPage: Receives each page as soon as it is complete.
    /// - Returns: What the run did (the summary counts the prepared items' images and warnings).
    /// - Throws: `LayoutError.preparedItemsInvalid` for a gap or an overlap, or what `items` or `onPage` throw.
    package func place(
        _ items: some AsyncSequence<PreparedItem, any Error>, onPage: (LayoutPage) async throws -> Void
    ) async throws -> LayoutSummary {
        var run = try RunAssembler(options: options, fonts: preparer.fonts, geometries: geometries, resume: nil)
        var window: [PreparedItem] = []
        var next = 0
        func flush() async throws {
            var made: [LayoutPage] = []
            try run.add(window[...]) { made.append($0) }
            window.removeAll(keepingCapacity: true)
            for page in made { try await onPage(page) }
        }
        for try await item in items {
            let index = item.item.index
            guard index == next else {
                throw LayoutError(
                    .preparedItemsInvalid,
                    index > next
                        ? "prepared items: item \(index) "
                            + (next == 0 ? "comes first: " : "follows item \(next - 1): ")
                            + (index - next == 1 ? "item \(next) is" : "items \(next)–\(index - 1) are")
                            + " missing (a gap; prepare that range too)"
                        : "prepared items: item \(index) comes again after item \(next - 1) (an overlap: two ranges "
                            + "share it, or the files are out of order)")
            }
            next += 1
            window.append(item)
            // The windows `run` places, so that pages of several breakpoints interleave on standard output as
            // they do there.
            if window.count == windowSize { try await flush() }
            if run.isFinished { break }
        }
        try await flush()
        var made: [LayoutPage] = []
        let summary = try run.finish { made.append($0) }
        for page in made { try await onPage(page) }
        return summary
    }
}

extension LayoutError {
    /// A byte split's failure as the pipeline reports it: a range that does not fit the file is a wrong option.
    init(_ error: FeedByteSplitError) {
        let code: Code =
            switch error.kind {
            case .unreadable: .feedUnreadable
            case .notSplittable: .feedInvalid
            case .rangeMismatch: .invalidOptions
            }
        self.init(code, error.message)
    }
}
