import AsyncAlgorithms
import FeedIngest
import Foundation
import ImageProbe
import LayoutPages
import LocalFileAccess
import Logging
import ProbeCache
import RemoteFetch
import Synchronization
import TextMeasure
import WaterfallLayout

/// The whole `layout` job: feed → items → probed and measured → placed → pages.
///
/// Parsing streams and placement is sequential; probing and measuring run for up to `probeConcurrency` items at
/// once, a window at a time, so memory stays bounded by the window and the page, not the feed.
///
/// A pipeline is made once per set of options and can lay out any number of feeds, one after another or at once.
/// A command-line run makes the resources one run needs (an HTTP client, the probe cache); a server passes
/// ``LayoutResources`` it holds for its whole life, and its layouts then share them.
public struct LayoutPipeline: Sendable {
    public let options: LayoutOptions
    /// The grid of each layout the run makes: one, or one per breakpoint.
    public var grids: [WaterfallGrid] { geometries.map(\.grid) }
    /// Each layout's geometry: its grid, flow grid and how its annotations are measured.
    let geometries: [LayoutGeometry]
    let preparer: ItemPreparer
    /// The long-lived resources of the process, when it shares them; `nil` for a run that makes its own.
    private let resources: LayoutResources?

    /// The first (with no breakpoints, the only) layout's grid.
    public var grid: WaterfallGrid { grids[0] }

    /// Checks the options and loads the fonts.
    ///
    /// - Parameters:
    ///   - options: The layout options. With `resources`, `probeCachePath` is not used (the resources' cache is).
    ///   - resources: Shared resources (a server's); `nil` makes an HTTP client per run and opens the probe cache
    ///     at `options.probeCachePath`.
    /// - Throws: `LayoutError` with `.invalidOptions` (naming the option) or `.fontUnavailable`.
    public init(options: LayoutOptions, resources: LayoutResources? = nil) throws(LayoutError) {
        try options.validate()
        if let resources, resources.fetcher.configuration.allowPrivateNetwork != options.allowPrivateNetwork {
            throw LayoutError(
                .invalidOptions,
                "allowPrivateNetwork is \(options.allowPrivateNetwork), but the shared HTTP client's policy says "
                    + "\(resources.fetcher.configuration.allowPrivateNetwork): the two must agree",
                option: "allow-private-network")
        }
        var preparer = try ItemPreparer(options: options, resources: resources)
        let geometries = try options.geometries(annotationBand: preparer.annotationBand)
        preparer.geometries = geometries
        self.geometries = geometries
        self.options = options
        self.preparer = preparer
        self.resources = resources
    }

    /// The fonts the annotations are measured with, as every page records them.
    public var fonts: LayoutFonts { preparer.fonts }

    /// Everything besides the feed that decides this pipeline's pages, as text: each layout's options (their
    /// versioned encoding, the one cursors are checked against) and the digest of every font file. Two pipelines
    /// with the same identity make the same pages from the same feed, on any machine.
    public var identity: String {
        var text = ""
        for layout in options.layouts { text += layout.fingerprintEncoding }
        for face in preparer.fonts.title { text += "font.title=" + face.digest + "\n" }
        for face in preparer.fonts.caption { text += "font.caption=" + face.digest + "\n" }
        return text
    }

    /// The gate a run opens the local images of a feed through, for stages after the run that read them again
    /// (previews): the feed's folder (a local feed a person named) and `--image-root`; for any other feed, the
    /// image root alone.
    public func fileGate(for feed: FeedInput) -> LocalFileGate {
        LocalFileGate.forFeed(
            directory: feed.localPath.flatMap(FeedSource.localDirectory(of:)), imageRoot: options.imageRoot)
    }

    /// The gate for a feed named by path, `-` or URL (see ``fileGate(for:)``).
    public func fileGate(forFeed feedPath: String) -> LocalFileGate { fileGate(for: .path(feedPath)) }

    /// Lays out a feed named by path, `-` or URL; see ``run(_:resume:logger:onProgress:onPage:)``.
    ///
    /// - Parameter standardInputPrefix: With `feedPath` `-`: bytes already read from standard input (to tell a
    ///   feed from a list of feeds); the feed is these bytes followed by the rest of standard input.
    public func run(
        feedPath: String, resume: String? = nil, standardInputPrefix: Data = Data(),
        logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() }),
        onProgress: (LayoutProgress) -> Void = { _ in },
        onPage: (LayoutPage) async throws -> Void
    ) async throws -> LayoutSummary {
        try await run(
            .path(feedPath, standardInputPrefix: standardInputPrefix), resume: resume, logger: logger,
            onProgress: onProgress, onPage: onPage)
    }

    /// Lays out a feed, handing each page to `onPage` as soon as it is complete.
    ///
    /// With breakpoints, the feed is read and its images probed once, and each breakpoint's layout gets its
    /// own pages (`LayoutPage.layoutIndex`); a page of one layout may come between two pages of another.
    ///
    /// `onPage` may take its time (write to a store, to a socket): the stages ahead wait for it, a few windows of
    /// items ahead at most. Cancelling the calling task stops every stage at its next window and ends the run
    /// with `CancellationError`.
    ///
    /// - Parameters:
    ///   - feed: The feed.
    ///   - resume: A cursor from an earlier page: the run starts with the page after it. Only for one layout:
    ///     a breakpoint's cursor resumes a run with that breakpoint's `--width` and `--columns`.
    ///   - logger: Where image fetching logs its requests.
    ///   - onProgress: Called after each batch of items with the counts so far.
    ///   - onPage: Receives pages in order; throwing stops the run.
    /// - Returns: What the run did.
    /// - Throws: `LayoutError` when the feed cannot be read or parsed at all, or the cursor does not fit.
    public func run(
        _ feed: FeedInput, resume: String? = nil,
        logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() }),
        onProgress: (LayoutProgress) -> Void = { _ in },
        onPage: (LayoutPage) async throws -> Void
    ) async throws -> LayoutSummary {
        if resume != nil, grids.count > 1 {
            throw LayoutError(
                .invalidOptions,
                "--resume continues one layout: pass the cursor with that breakpoint's --width and --columns instead of --breakpoints"
            )
        }
        if let resources {
            // Every task of the run, children included, runs on the resources' threads (see LayoutThreadPool).
            return try await withTaskExecutorPreference(resources.executor) {
                try await run(
                    feed, resume: resume, fetcher: resources.fetcher, logger: logger, onProgress: onProgress,
                    onPage: onPage)
            }
        }
        // The HTTP client for a remote feed and its images lives exactly as long as the run.
        return try await RemoteFetcher.withFetcher(
            configuration: RemoteFetchConfiguration(allowPrivateNetwork: options.allowPrivateNetwork), logger: logger
        ) { fetcher in
            try await run(
                feed, resume: resume, fetcher: fetcher, logger: logger, onProgress: onProgress, onPage: onPage)
        }
    }

    /// A feed's pages as an async sequence: the run starts when iteration starts, and runs a few windows ahead of
    /// the consumer at most. Ending the iteration early (a `break`, a cancelled task) cancels the run.
    ///
    /// For the run's summary as well as its pages, use ``run(_:resume:logger:onProgress:onPage:)``.
    public func pages(
        of feed: FeedInput, resume: String? = nil,
        logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() })
    ) -> LayoutPageSequence {
        LayoutPageSequence { channel in
            _ = try await run(feed, resume: resume, logger: logger) { page in await channel.send(page) }
        }
    }

    private func run(
        _ feed: FeedInput, resume: String?, fetcher: RemoteFetcher, logger: Logger,
        onProgress: (LayoutProgress) -> Void, onPage: (LayoutPage) async throws -> Void
    ) async throws -> LayoutSummary {
        let prober = prober(for: feed, fetcher: fetcher, logger: logger)
        var run = try RunAssembler(
            options: options, fonts: preparer.fonts, geometries: geometries, resume: resume,
            itemsBeforeCursorRead: feed.firstItemIndex == 0)
        if feed.firstItemIndex > 0, resume == nil || run.resumeIndex != feed.firstItemIndex {
            throw LayoutError(
                .cursorMismatch,
                "\(feed.name): the feed resumes at item \(feed.firstItemIndex), "
                    + (resume == nil ? "but the run has no cursor" : "but the cursor's next item is \(run.resumeIndex)")
            )
        }
        let source = try await FeedSource(feed, fetcher: fetcher)
        // Items before a cursor are only counted and checked: the stages ahead of placement need not prepare them.
        let resumeIndex = run.resumeIndex
        let clock = ContinuousClock()
        // Pages are handed over after placement: time them apart, so placing and writing are told apart.
        var writeTime = Duration.zero
        func hand(_ pages: [LayoutPage]) async throws {
            let started = clock.now
            defer { writeTime += clock.now - started }
            for page in pages { try await onPage(page) }
        }
        let memo = RunProbeMemo(statistics: resources?.probeStatistics)
        func add(_ window: ArraySlice<PreparedItem>) async throws {
            let started = clock.now
            var made: [LayoutPage] = []
            try run.add(window) { made.append($0) }
            run.summary.stageTimes.place += clock.now - started
            try await hand(made)
            onProgress(run.progress)
        }

        let parse = try await withPreparedWindows(
            source, prober: prober, memo: memo, skippingBefore: resumeIndex, clock: clock
        ) { batch in
            // Placed a placement window at a time (a quarter of what was prepared together): pages of several
            // breakpoints interleave on standard output at those windows' ends.
            for start in stride(from: 0, to: batch.skippedCount + batch.items.count, by: windowSize) {
                if start > 0 && Task.isCancelled { return false }
                let positions = start..<min(start + windowSize, batch.skippedCount + batch.items.count)
                // Skipped items come first in a window, then the prepared ones.
                let skipped = batch.skipped[positions.clamped(to: batch.skipped.indices)]
                let items = batch.items[
                    ((positions.lowerBound - batch.skippedCount)..<(positions.upperBound - batch.skippedCount))
                        .clamped(to: batch.items.indices)]
                var unprepared: [FeedItem] = []
                for item in skipped where !run.isBeforeCursor(item) { unprepared.append(item) }
                // Items before the cursor are a prefix of the feed: count them, then take the rest whole (copying
                // prepared items one by one costs a retain per field).
                var beforeCursor = items.startIndex
                while beforeCursor < items.endIndex && run.isBeforeCursor(items[beforeCursor].item) {
                    beforeCursor += 1
                }
                if unprepared.isEmpty {
                    if beforeCursor < items.endIndex { try await add(items[beforeCursor...]) }
                } else {
                    // Only when the cursor's index and the assembler disagree: prepare here what was skipped.
                    let window =
                        await Self.prepare(
                            unprepared, preparer: preparer, prober: prober, memo: memo,
                            concurrency: options.probeConcurrency) + items[beforeCursor...]
                    try await add(window[...])
                }
                if run.isFinished { return false }
            }
            return true
        }
        run.summary.stageTimes.parse = parse.time
        run.summary.feedFormat = parse.format.map { "\($0)" }
        run.summary.feedWarnings = parse.feedWarnings
        var made: [LayoutPage] = []
        var summary = try run.finish { made.append($0) }
        try await hand(made)
        summary.stageTimes.write = writeTime
        return summary
    }

    /// How many items placement takes at a time. Several breakpoints' pages interleave on standard output at the end
    /// of each such window, so it is part of the output.
    package var windowSize: Int { max(32, options.probeConcurrency * 4) }

    /// How many items the stages ahead of placement hand over at a time (parsing, finishing, preparing): four
    /// placement windows, but for the first, one (the first page waits for no more than before: a window's photos
    /// are all probed before any of it is placed). A window costs three hand-overs between tasks, a task group and a
    /// read of the probe cache; at a quarter as many windows, `layout` of 100,000 small items took 6–7 % less time.
    package var preparationWindowSize: Int { windowSize * 4 }

    /// The prober of a feed's photos: its images are read only inside its folders, as regular files.
    func prober(for feed: FeedInput, fetcher: RemoteFetcher, logger: Logger) -> CachingImageProber {
        var local = LocalImageProber()
        local.gate = fileGate(for: feed)
        var prober = CachingImageProber(
            prober: ImageProber(local: local, remote: RemoteImageProber(fetcher: fetcher)), cache: preparer.cache,
            decodeOptions: .placeholder, logger: logger)
        if let now = resources?.now { prober.now = now }
        return prober
    }

    /// Runs the stages ahead of placement over a feed and hands each prepared window to `body`, in feed order,
    /// until the feed ends or `body` returns `false`.
    ///
    /// Four stages: parsing, finishing (HTML to text, URLs, dates, and the probe cache's entries for the window's
    /// photos) and preparing (probing and measuring, itself concurrent) are child tasks of this one; `body` (placing
    /// and writing) runs here. Bounded buffers between them keep memory at a few windows. On two cores parsing
    /// overlaps the rest, and finishing the next window overlaps preparing this one. Being children, the stages stop
    /// when this task is cancelled, and when `body` stops early (`--max-pages`, the end of a prepared range) or
    /// fails, cancelling them stops them at their next window.
    ///
    /// - Parameters:
    ///   - skippingBefore: Items before this index are neither probed nor measured.
    ///   - finishingSkipped: Whether those items are finished (HTML to text, URLs, dates) and handed over in
    ///     ``PreparedWindow/skipped`` (a resumed run checks them against its cursor), or only parsed.
    /// - Returns: What parsing found (its time, the feed's format and feed-level warnings).
    func withPreparedWindows(
        _ source: sending FeedSource, prober: CachingImageProber, memo: RunProbeMemo, skippingBefore: Int,
        finishingSkipped: Bool = true, clock: ContinuousClock, _ body: (PreparedWindow) async throws -> Bool
    ) async throws -> FeedParsingStage.Outcome {
        let finished = AsyncThrowingChannel<FinishedWindow, any Error>()
        let prepared = AsyncThrowingChannel<PreparedWindow, any Error>()
        let (preparer, concurrency) = (preparer, options.probeConcurrency)
        let ((), parse) = try await FeedParsingStage.withParsing(
            source, imageRoot: options.imageRoot, windowSize: preparationWindowSize, firstWindowSize: windowSize,
            clock: clock
        ) { parsed, finishing in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await Self.finish(
                        from: parsed, into: finished, finishing: finishing, skippingBefore: skippingBefore,
                        finishingSkipped: finishingSkipped, prober: prober, memo: memo)
                }
                group.addTask {
                    await Self.prepare(
                        from: finished, into: prepared, preparer: preparer, prober: prober, memo: memo,
                        concurrency: concurrency)
                }
                // Whatever ends `body`, the stages ahead stop at their next window.
                defer { group.cancelAll() }
                for try await window in prepared.buffer(policy: .bounded(4)) {
                    if try await !body(window) { break }
                }
            }
        }
        return parse
    }

    /// A window on its way to placement: the items before the resume cursor as read, the rest prepared.
    struct PreparedWindow: Sendable {
        var skipped: [FeedItem]
        var items: [PreparedItem]
        /// How many items were skipped (also when they were not finished, and `skipped` is empty).
        var skippedCount: Int
    }

    /// A window on its way to preparing: its items finished, with the probe cache's entries for their photos.
    struct FinishedWindow: Sendable {
        var skipped: [FeedItem]
        var items: [FeedItem]
        var skippedCount: Int
        var cachedProbes: [String: CachedProbe?]
    }

    /// The finishing stage: finishes the items of each window (HTML to text, URLs, dates), reads the probe cache's
    /// entries for the photos of those to prepare, in order, and sends the window on. Cancelling the task stops it
    /// at its next window.
    static func finish(
        from input: AsyncThrowingChannel<FeedParsingStage.Window, any Error>,
        into output: AsyncThrowingChannel<FinishedWindow, any Error>, finishing: FeedItemFinisher.Settings,
        skippingBefore resumeIndex: Int, finishingSkipped: Bool, prober: CachingImageProber, memo: RunProbeMemo
    ) async {
        let finisher = FeedItemFinisher(finishing)
        do {
            // The buffer lets parsing run up to eight windows ahead of finishing.
            for try await window in input.buffer(policy: .bounded(8)) {
                let skipCount = min(window.items.count, max(0, resumeIndex - window.firstPosition))
                // A record depends only on its item, so items nobody looks at need not be finished.
                let skipped = finishingSkipped ? window.items[..<skipCount].map(finisher.finish) : []
                let items = window.items[skipCount...].map(finisher.finish)
                let cachedProbes = await cachedProbes(of: items, prober: prober, memo: memo)
                await output.send(
                    FinishedWindow(
                        skipped: skipped, items: items, skippedCount: skipCount, cachedProbes: cachedProbes))
                if Task.isCancelled { return }
            }
            output.finish()
        } catch {
            output.fail(error)
        }
    }

    /// The preparing stage: probes and measures the items of each window, in order, and sends the window on.
    /// Cancelling the task stops it at its next window.
    static func prepare(
        from input: AsyncThrowingChannel<FinishedWindow, any Error>,
        into output: AsyncThrowingChannel<PreparedWindow, any Error>, preparer: ItemPreparer,
        prober: CachingImageProber, memo: RunProbeMemo, concurrency: Int
    ) async {
        do {
            // Finishing runs up to two windows ahead.
            for try await window in input.buffer(policy: .bounded(2)) {
                let items = await prepare(
                    window.items, preparer: preparer, prober: prober, memo: memo, cached: window.cachedProbes,
                    concurrency: concurrency)
                await output.send(
                    PreparedWindow(skipped: window.skipped, items: items, skippedCount: window.skippedCount))
                if Task.isCancelled { return }
            }
            output.finish()
        } catch {
            output.fail(error)
        }
    }

    /// The probe cache's entries for the photo URLs of `items`, read at once (a file's probe does not go through
    /// the cache).
    private static func cachedProbes(
        of items: [FeedItem], prober: CachingImageProber, memo: RunProbeMemo
    ) async -> [String: CachedProbe?] {
        await memo.cachedEntries(
            for: items.compactMap { item in item.image.flatMap { $0.localPath == nil ? $0.url : nil } },
            prober: prober)
    }

    /// Probes and measures a window of items with up to `concurrency` tasks, keeping feed order. Each task takes
    /// the next unprepared item until none is left, so a slow (remote) probe holds up one task, not the window,
    /// and a window costs a few tasks, not one per item.
    /// - Parameter cached: The probe cache's entries for the window's photos; `nil` reads them here.
    private static func prepare(
        _ items: [FeedItem], preparer: ItemPreparer, prober: CachingImageProber, memo: RunProbeMemo,
        cached: [String: CachedProbe?]? = nil, concurrency: Int
    ) async -> [PreparedItem] {
        guard !items.isEmpty else { return [] }
        let entries: [String: CachedProbe?]
        if let cached { entries = cached } else { entries = await cachedProbes(of: items, prober: prober, memo: memo) }
        let next = PipelineCounter()
        return await withTaskGroup(of: [(Int, PreparedItem)].self) { group in
            for _ in 0..<min(concurrency, items.count) {
                group.addTask {
                    var done: [(Int, PreparedItem)] = []
                    while let position = next.take(below: items.count) {
                        let prepared = await preparer.prepare(
                            items[position], prober: prober, memo: memo, cached: entries)
                        done.append((position, prepared))
                    }
                    return done
                }
            }
            // Items are moved, not copied, from the tasks' lists into feed order: a copy of a prepared item retains
            // and releases every string and array in it.
            var results = [PreparedItem?](repeating: nil, count: items.count)
            for await var done in group {
                while let (position, prepared) = done.popLast() { results[position] = consume prepared }
            }
            var ordered: [PreparedItem] = []
            ordered.reserveCapacity(results.count)
            for position in results.indices { ordered.append(results[position].take()!) }
            return ordered
        }
    }
}

/// Hands out 0, 1, 2, … to the tasks that prepare a window.
final class PipelineCounter: Sendable {
    private let value = Atomic<Int>(0)

    /// The next number, or `nil` once `limit` is reached.
    func take(below limit: Int) -> Int? {
        let taken = value.wrappingAdd(1, ordering: .relaxed).oldValue
        return taken < limit ? taken : nil
    }
}
