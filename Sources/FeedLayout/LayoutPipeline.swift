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
import WaterfallLayout

/// The whole `layout` job: feed → items → probed and measured → placed → pages.
///
/// Parsing streams and placement is sequential; probing and measuring run for up to `probeConcurrency` items at
/// once, a window at a time, so memory stays bounded by the window and the page, not the feed.
public struct LayoutPipeline: Sendable {
    public let options: LayoutOptions
    /// The grid of each layout the run makes: one, or one per breakpoint.
    public var grids: [WaterfallGrid] { geometries.map(\.grid) }
    /// Each layout's geometry: its grid, flow grid and how its annotations are measured.
    let geometries: [LayoutGeometry]
    private let preparer: ItemPreparer

    /// The first (with no breakpoints, the only) layout's grid.
    public var grid: WaterfallGrid { grids[0] }

    /// Checks the options and loads the fonts.
    ///
    /// - Throws: `LayoutError` with `.invalidOptions` (naming the option) or `.fontUnavailable`.
    public init(options: LayoutOptions) throws(LayoutError) {
        try options.validate()
        var preparer = try ItemPreparer(options: options)
        let geometries = try options.geometries(annotationBand: preparer.annotationBand)
        preparer.geometries = geometries
        self.geometries = geometries
        self.options = options
        self.preparer = preparer
    }

    /// The gate a run opens the local images of a feed through, for stages after the run that read them again
    /// (previews): the feed's folder (a local feed) and `--image-root`; for a feed from a URL, the image root alone.
    /// - Parameter feedPath: The feed as given to ``run(feedPath:resume:standardInputPrefix:logger:onProgress:onPage:)``.
    public func fileGate(forFeed feedPath: String) -> LocalFileGate {
        LocalFileGate.forFeed(directory: FeedSource.localDirectory(of: feedPath), imageRoot: options.imageRoot)
    }

    /// Lays out a feed file, calling `onPage` with each page as soon as it is complete.
    ///
    /// With breakpoints, the feed is read and its images probed once, and each breakpoint's layout gets its
    /// own pages (`LayoutPage.layoutIndex`); a page of one layout may come between two pages of another.
    ///
    /// - Parameters:
    ///   - feedPath: The feed's path, `-` for standard input, or an http(s) URL.
    ///   - resume: A cursor from an earlier page: the run starts with the page after it. Only for one layout:
    ///     a breakpoint's cursor resumes a run with that breakpoint's `--width` and `--columns`.
    ///   - logger: Where image fetching logs its requests.
    ///   - onPage: Receives pages in order; throwing stops the run.
    /// - Returns: What the run did.
    /// - Throws: `LayoutError` when the feed cannot be read or parsed at all, or the cursor does not fit.
    ///   - standardInputPrefix: With `feedPath` `-`: bytes already read from standard input (to tell a feed from
    ///     a list of feeds); the feed is these bytes followed by the rest of standard input.
    ///   - onProgress: Called after each batch of items with the counts so far.
    public func run(
        feedPath: String, resume: String? = nil, standardInputPrefix: Data = Data(),
        logger: Logger = Logger(label: "feedlayout", factory: { _ in SwiftLogNoOpLogHandler() }),
        onProgress: (LayoutProgress) -> Void = { _ in },
        onPage: (LayoutPage) throws -> Void
    ) async throws -> LayoutSummary {
        if resume != nil, grids.count > 1 {
            throw LayoutError(
                .invalidOptions,
                "--resume continues one layout: pass the cursor with that breakpoint's --width and --columns instead of --breakpoints"
            )
        }
        // The HTTP client for remote images lives exactly as long as the run.
        return try await RemoteFetcher.withFetcher(
            configuration: RemoteFetchConfiguration(allowPrivateNetwork: options.allowPrivateNetwork), logger: logger
        ) { fetcher in
            // The feed's images are read only inside its folders, as regular files.
            var local = LocalImageProber()
            local.gate = fileGate(forFeed: feedPath)
            let prober = CachingImageProber(
                prober: ImageProber(local: local, remote: RemoteImageProber(fetcher: fetcher)), cache: preparer.cache,
                decodeOptions: .placeholder, logger: logger)
            return try await run(
                feedPath: feedPath, resume: resume, prefix: standardInputPrefix, fetcher: fetcher, prober: prober,
                onProgress: onProgress, onPage: onPage)
        }
    }

    private func run(
        feedPath: String, resume: String?, prefix: Data, fetcher: RemoteFetcher, prober: CachingImageProber,
        onProgress: (LayoutProgress) -> Void, onPage: (LayoutPage) throws -> Void
    ) async throws -> LayoutSummary {
        var run = try RunAssembler(options: options, fonts: preparer.fonts, geometries: geometries, resume: resume)
        let source = try await FeedSource(path: feedPath, fetcher: fetcher, standardInputPrefix: prefix)
        // Items before a cursor are only counted and checked: the stages ahead of placement need not prepare them.
        let resumeIndex = run.resumeIndex
        let clock = ContinuousClock()
        // Pages are handed over inside placement: time them apart, so placing and writing are told apart.
        var writeTime = Duration.zero
        func timedOnPage(_ page: LayoutPage) throws {
            let started = clock.now
            defer { writeTime += clock.now - started }
            try onPage(page)
        }
        let memo = RunProbeMemo()
        func add(_ window: [PreparedItem]) throws {
            let started = clock.now
            let writtenBefore = writeTime
            try run.add(window, onPage: timedOnPage)
            run.summary.stageTimes.place += clock.now - started - (writeTime - writtenBefore)
            onProgress(run.progress)
        }

        // Three stages: parsing and preparing (probing and measuring, itself concurrent) are child tasks of this
        // one, placing and writing happen here; bounded buffers between them keep memory at a few windows. On two
        // cores parsing overlaps the rest. Being children, the stages stop when this task is cancelled, and when
        // placement stops early (`--max-pages`) or fails, cancelling them stops them at their next window.
        let windowSize = max(32, options.probeConcurrency * 4)
        let prepared = AsyncThrowingChannel<PreparedWindow, any Error>()
        let preparer = preparer
        let probeConcurrency = options.probeConcurrency
        let ((), parse) = try await FeedParsingStage.withParsing(
            source, imageRoot: options.imageRoot, windowSize: windowSize, clock: clock
        ) { parsed, finishing in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    await Self.prepare(
                        from: parsed, into: prepared, finishing: finishing, skippingBefore: resumeIndex,
                        preparer: preparer, prober: prober, memo: memo, concurrency: probeConcurrency)
                }
                // Whatever ends placement, the stages ahead stop at their next window.
                defer { group.cancelAll() }
                for try await batch in prepared.buffer(policy: .bounded(4)) {
                    var window: [PreparedItem] = []
                    var unprepared: [FeedItem] = []
                    for item in batch.skipped where !run.isBeforeCursor(item) { unprepared.append(item) }
                    // Only when the cursor's index and the assembler disagree: prepare here what was skipped.
                    if !unprepared.isEmpty {
                        window += await Self.prepare(
                            unprepared, preparer: preparer, prober: prober, memo: memo, concurrency: probeConcurrency)
                    }
                    // Items before the cursor are a prefix of the feed: count them, then take the rest whole (copying
                    // prepared items one by one costs a retain per field).
                    var beforeCursor = 0
                    for position in batch.items.indices where run.isBeforeCursor(batch.items[position].item) {
                        beforeCursor += 1
                    }
                    if window.isEmpty && beforeCursor == 0 {
                        window = batch.items
                    } else {
                        window += batch.items[beforeCursor...]
                    }
                    if !window.isEmpty { try add(window) }
                    if run.isFinished { break }
                }
            }
        }
        run.summary.stageTimes.parse = parse.time
        run.summary.feedFormat = parse.format.map { "\($0)" }
        run.summary.feedWarnings = parse.feedWarnings
        var summary = try run.finish(onPage: timedOnPage)
        summary.stageTimes.write = writeTime
        return summary
    }

    /// A window on its way to placement: the items before the resume cursor as read, the rest prepared.
    struct PreparedWindow: Sendable {
        var skipped: [FeedItem]
        var items: [PreparedItem]
    }

    /// The preparing stage: finishes the items of each window (HTML to text, URLs, dates), probes and measures them,
    /// in order, and sends the window on. Cancelling the task stops it at its next window.
    private static func prepare(
        from input: AsyncThrowingChannel<FeedParsingStage.Window, any Error>,
        into output: AsyncThrowingChannel<PreparedWindow, any Error>, finishing: FeedItemFinisher.Settings,
        skippingBefore resumeIndex: Int, preparer: ItemPreparer, prober: CachingImageProber, memo: RunProbeMemo,
        concurrency: Int
    ) async {
        let finisher = FeedItemFinisher(finishing)
        do {
            // The buffer lets parsing run up to eight windows ahead of preparing.
            for try await window in input.buffer(policy: .bounded(8)) {
                let finished = window.items.map(finisher.finish)
                let skipCount = min(finished.count, max(0, resumeIndex - window.firstPosition))
                let items = await prepare(
                    Array(finished[skipCount...]), preparer: preparer, prober: prober, memo: memo,
                    concurrency: concurrency)
                await output.send(PreparedWindow(skipped: Array(finished[..<skipCount]), items: items))
                if Task.isCancelled { return }
            }
            output.finish()
        } catch {
            output.fail(error)
        }
    }

    /// Probes and measures a window of items with up to `concurrency` tasks, keeping feed order. Each task takes
    /// the next unprepared item until none is left, so a slow (remote) probe holds up one task, not the window,
    /// and a window costs a few tasks, not one per item.
    private static func prepare(
        _ items: [FeedItem], preparer: ItemPreparer, prober: CachingImageProber, memo: RunProbeMemo,
        concurrency: Int
    ) async -> [PreparedItem] {
        guard !items.isEmpty else { return [] }
        let next = PipelineCounter()
        return await withTaskGroup(of: [(Int, PreparedItem)].self) { group in
            for _ in 0..<min(concurrency, items.count) {
                group.addTask {
                    var done: [(Int, PreparedItem)] = []
                    while let position = next.take(below: items.count) {
                        done.append((position, await preparer.prepare(items[position], prober: prober, memo: memo)))
                    }
                    return done
                }
            }
            var results = [PreparedItem?](repeating: nil, count: items.count)
            for await done in group {
                for (position, prepared) in done { results[position] = prepared }
            }
            return results.map { $0! }
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
