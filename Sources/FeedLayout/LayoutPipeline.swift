import FeedIngest
import Foundation
import ImageProbe
import Logging
import ProbeCache
import RemoteFetch
import WaterfallLayout

/// One laid-out pin: its frames and what a client renders in them.
public struct LaidOutItem: Sendable {
    public var index: Int
    public var id: String
    public var link: String?
    public var placed: PlacedItem
    public var photo: ResolvedPhoto
    /// The title block, placed at the top of the annotation frame.
    public var title: MeasuredText?
    /// The caption block, below the title (and the title-caption gap).
    public var text: MeasuredText?
    public var warnings: [ItemWarning]

    public init(
        index: Int, id: String, link: String?, placed: PlacedItem, photo: ResolvedPhoto, title: MeasuredText?,
        text: MeasuredText?, warnings: [ItemWarning]
    ) {
        self.index = index
        self.id = id
        self.link = link
        self.placed = placed
        self.photo = photo
        self.title = title
        self.text = text
        self.warnings = warnings
    }
}

/// A page: a contiguous run of items in feed order, and what the next page needs.
public struct LayoutPage: Sendable {
    /// Which layout of the run the page belongs to: 0, or the breakpoint's position in `--breakpoints`.
    public var layoutIndex: Int
    /// That layout's grid.
    public var grid: WaterfallGrid
    public var index: Int
    public var items: [LaidOutItem]
    /// Column heights in device pixels after the page's last item.
    public var columnHeights: [Int]
    /// The layout's height so far in device pixels, bottom inset included.
    public var contentHeight: Int
    /// The cursor for the next page; `nil` on the last page.
    public var cursor: String?
    /// How balanced and how well ordered the page is.
    public var quality: LayoutQuality
    /// The order measures over every page up to and including this one.
    public var totals: LayoutQualityTotals

    public init(
        layoutIndex: Int = 0, grid: WaterfallGrid, index: Int, items: [LaidOutItem], columnHeights: [Int],
        contentHeight: Int, cursor: String?, quality: LayoutQuality, totals: LayoutQualityTotals
    ) {
        self.layoutIndex = layoutIndex
        self.grid = grid
        self.index = index
        self.items = items
        self.columnHeights = columnHeights
        self.contentHeight = contentHeight
        self.cursor = cursor
        self.quality = quality
        self.totals = totals
    }
}

/// What a run did, for the summary line and the exit code.
public struct LayoutSummary: Sendable {
    public var items = 0
    public var pages = 0
    public var imagesProbed = 0
    /// Items whose image could not be read (missing, corrupt, refused); their photo size was declared or guessed.
    /// Any makes the command exit with 1.
    public var imageFailures = 0
    public var warnings = 0
    /// Warnings counted by code, for the summary.
    public var warningsByCode: [String: Int] = [:]
    public var feedFormat: String?
    /// Problems with the feed as a whole (not with one item): where the parser recovered, junk after the root.
    public var feedWarnings: [ItemWarning] = []
    /// Time per stage. Probing and measuring run in concurrent tasks: theirs is the sum over the tasks.
    public var stageTimes = StageTimes()
}

/// Where a run's time went.
public struct StageTimes: Sendable {
    /// Reading and parsing the feed.
    public var parse: Duration = .zero
    /// Probing photos (summed over concurrent tasks).
    public var probe: Duration = .zero
    /// Measuring titles and captions (summed over concurrent tasks).
    public var measure: Duration = .zero
    /// Placing items and cutting pages.
    public var place: Duration = .zero
    /// Handing pages to the caller (writing files or standard output).
    public var write: Duration = .zero
}

/// How far a run has come, reported after each batch of items (for a progress line).
public struct LayoutProgress: Sendable {
    public var items: Int
    public var imagesProbed: Int
    public var imageFailures: Int
    public var pages: Int
}

/// The whole `layout` job: feed → items → probed and measured → placed → pages.
///
/// Parsing streams and placement is sequential; probing and measuring run for up to `probeConcurrency` items at
/// once, a window at a time, so memory stays bounded by the window and the page, not the feed.
public struct LayoutPipeline: Sendable {
    public let options: LayoutOptions
    /// The grid of each layout the run makes: one, or one per breakpoint.
    public let grids: [WaterfallGrid]
    private let preparer: ItemPreparer

    /// The first (with no breakpoints, the only) layout's grid.
    public var grid: WaterfallGrid { grids[0] }

    /// Checks the options and loads the fonts.
    ///
    /// - Throws: `LayoutError` with `.invalidOptions` (naming the option) or `.fontUnavailable`.
    public init(options: LayoutOptions) throws(LayoutError) {
        guard options.probeConcurrency >= 1 else {
            throw LayoutError(.invalidOptions, "--probe-concurrency must be at least 1")
        }
        guard options.fallbackAspectRatio.isFinite, options.fallbackAspectRatio > 0 else {
            throw LayoutError(.invalidOptions, "--fallback-aspect-ratio must be a positive number")
        }
        if let size = options.pagination.pageSize, size < 1 {
            throw LayoutError(.invalidOptions, "--page-size must be at least 1, got \(size)")
        }
        if let height = options.pagination.pageHeight, !(height.isFinite && height > 0) {
            throw LayoutError(.invalidOptions, "--page-height must be a positive length, got \(height)")
        }
        var grids: [WaterfallGrid] = []
        for (layout, breakpoint) in zip(options.layouts, options.breakpoints.map(Optional.some) + [nil]) {
            do {
                grids.append(try WaterfallGrid(layout.waterfall))
            } catch {
                throw LayoutError(.invalidOptions, (breakpoint.map { "--breakpoints \($0): " } ?? "") + error.description)
            }
        }
        self.grids = grids
        self.options = options
        preparer = try ItemPreparer(options: options, grids: grids)
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
                "--resume continues one layout: pass the cursor with that breakpoint's --width and --columns instead of --breakpoints")
        }
        // The HTTP client for remote images lives exactly as long as the run.
        return try await RemoteFetcher.withFetcher(
            configuration: RemoteFetchConfiguration(allowPrivateNetwork: options.allowPrivateNetwork), logger: logger
        ) { fetcher in
            let prober = CachingImageProber(
                prober: ImageProber(remote: RemoteImageProber(fetcher: fetcher)), cache: preparer.cache,
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
        var run = try RunAssembler(options: options, grids: grids, resume: resume)
        let source = try await FeedSource(path: feedPath, fetcher: fetcher, standardInputPrefix: prefix)
        let clock = ContinuousClock()
        // Pages are handed over inside placement: time them apart, so placing and writing are told apart.
        var writeTime = Duration.zero
        func timedOnPage(_ page: LayoutPage) throws {
            let started = clock.now
            defer { writeTime += clock.now - started }
            try onPage(page)
        }
        let memo = RunProbeMemo()
        func add(_ window: [FeedItem]) async throws {
            let prepared = await prepare(window, prober: prober, memo: memo)
            let started = clock.now
            let writtenBefore = writeTime
            try run.add(prepared, onPage: timedOnPage)
            run.summary.stageTimes.place += clock.now - started - (writeTime - writtenBefore)
            onProgress(run.progress)
        }
        let reader = source.makeReader(imageRoot: options.imageRoot)
        let windowSize = max(32, options.probeConcurrency * 4)
        var window: [FeedItem] = []
        window.reserveCapacity(windowSize)

        do {
            while !run.isFinished {
                let parseStarted = clock.now
                guard let chunk = try await source.nextChunk() else { break }
                let items = try chunk.withUnsafeBytes { try reader.consume($0) }
                run.summary.stageTimes.parse += clock.now - parseStarted
                for item in items {
                    if run.isBeforeCursor(item) { continue }
                    window.append(item)
                    if window.count == windowSize {
                        try await add(window)
                        window.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !run.isFinished {
                let parseStarted = clock.now
                let items = try reader.finish()
                run.summary.stageTimes.parse += clock.now - parseStarted
                for item in items where !run.isBeforeCursor(item) { window.append(item) }
            }
        } catch let error as FeedIngestError {
            throw LayoutError(.feedInvalid, error.description)
        }
        if !run.isFinished, !window.isEmpty { try await add(window) }
        run.summary.feedFormat = reader.format.map { "\($0)" }
        run.summary.feedWarnings = reader.feedWarnings.map(ItemWarning.init)
        var summary = try run.finish(onPage: timedOnPage)
        summary.stageTimes.write = writeTime
        return summary
    }

    /// Probes and measures a window of items concurrently, keeping feed order.
    private func prepare(_ items: [FeedItem], prober: CachingImageProber, memo: RunProbeMemo) async -> [PreparedItem] {
        let preparer = preparer
        return await withTaskGroup(of: (Int, PreparedItem).self) { group in
            var results = [PreparedItem?](repeating: nil, count: items.count)
            var next = 0
            func addTask() {
                let position = next
                let item = items[position]
                group.addTask { (position, await preparer.prepare(item, prober: prober, memo: memo)) }
                next += 1
            }
            while next < min(options.probeConcurrency, items.count) { addTask() }
            while let (position, prepared) = await group.next() {
                results[position] = prepared
                if next < items.count { addTask() }
            }
            return results.map { $0! }
        }
    }
}

/// The sequential half of a run: every layout's page assembler, and the summary, which counts each item once
/// however many layouts place it.
struct RunAssembler {
    var assemblers: [PageAssembler]
    var summary = LayoutSummary()

    init(options: LayoutOptions, grids: [WaterfallGrid], resume: String?) throws(LayoutError) {
        var assemblers: [PageAssembler] = []
        for (index, (layout, grid)) in zip(options.layouts, grids).enumerated() {
            assemblers.append(try PageAssembler(options: layout, grid: grid, layoutIndex: index, resume: resume))
        }
        self.assemblers = assemblers
    }

    /// Every layout has written the pages it was asked for (`--max-pages`).
    var isFinished: Bool { assemblers.allSatisfy(\.isFinished) }

    mutating func isBeforeCursor(_ item: FeedItem) -> Bool {
        var before = false
        for index in assemblers.indices where assemblers[index].isBeforeCursor(item) { before = true }
        return before
    }

    mutating func add(_ items: [PreparedItem], onPage: (LayoutPage) throws -> Void) throws {
        for index in assemblers.indices { try assemblers[index].add(items, onPage: onPage) }
        for prepared in items {
            summary.items += 1
            if prepared.photo.sizeSource == .header { summary.imagesProbed += 1 }
            if prepared.photo.isUnreadImage { summary.imageFailures += 1 }
            for warning in prepared.warnings { summary.warningsByCode[warning.code, default: 0] += 1 }
            summary.warnings += prepared.warnings.count
            summary.stageTimes.probe += prepared.probeTime
            summary.stageTimes.measure += prepared.measureTime
        }
    }

    var progress: LayoutProgress {
        LayoutProgress(
            items: summary.items, imagesProbed: summary.imagesProbed, imageFailures: summary.imageFailures,
            pages: assemblers.reduce(0) { $0 + $1.pagesWritten })
    }

    mutating func finish(onPage: (LayoutPage) throws -> Void) throws -> LayoutSummary {
        for index in assemblers.indices { summary.pages += try assemblers[index].finish(onPage: onPage) }
        return summary
    }
}

/// Places prepared items in order and cuts them into pages: the sequential half of the pipeline.
struct PageAssembler {
    let options: LayoutOptions
    let grid: WaterfallGrid
    /// Which layout of the run this is; its prepared annotation is `annotations[layoutIndex]`.
    let layoutIndex: Int
    var engine: WaterfallEngine
    private(set) var isFinished = false

    /// Items before this index were laid out by earlier pages; they are only checked against the cursor.
    private let resumeIndex: Int
    private let resumeDigest: UInt64?
    private var prefixVerified = false
    private var feedDigest = StableHash()
    private var itemsSeen = 0

    private var pageIndex: Int
    private var qualityTotals: LayoutQualityTotals
    private(set) var pagesWritten = 0
    private var pageItems: [LaidOutItem] = []
    private var pageTop = 0

    init(options: LayoutOptions, grid: WaterfallGrid, layoutIndex: Int = 0, resume: String?) throws(LayoutError) {
        self.options = options
        self.grid = grid
        self.layoutIndex = layoutIndex
        if let resume {
            let cursor = try LayoutCursor(decoding: resume)
            guard cursor.fingerprint == options.fingerprint else {
                throw LayoutError(
                    .cursorMismatch,
                    "--resume: the cursor was made with other layout options; pass the same options as the run that wrote it")
            }
            do {
                engine = try WaterfallEngine(configuration: options.waterfall, resumingFrom: cursor.state)
            } catch {
                throw LayoutError(.cursorMismatch, "--resume: \(error.message)")
            }
            resumeIndex = cursor.state.nextIndex
            resumeDigest = cursor.feedDigest
            pageIndex = cursor.pageIndex
            qualityTotals = cursor.qualityTotals
        } else {
            do {
                engine = try WaterfallEngine(configuration: options.waterfall)
            } catch {
                throw LayoutError(.invalidOptions, error.description)
            }
            resumeIndex = 0
            resumeDigest = nil
            pageIndex = 0
            qualityTotals = LayoutQualityTotals()
        }
    }

    /// Counts an item and, when an earlier page already laid it out, feeds its id into the digest the cursor
    /// is checked against.
    ///
    /// - Returns: Whether the item comes before the cursor and is to be skipped.
    mutating func isBeforeCursor(_ item: FeedItem) -> Bool {
        defer { itemsSeen += 1 }
        guard itemsSeen < resumeIndex else { return false }
        feedDigest.combine(item.id)
        feedDigest.combine(0)
        return true
    }

    /// Places a window of prepared items, writing every page that completes.
    mutating func add(_ items: [PreparedItem], onPage: (LayoutPage) throws -> Void) throws {
        try verifyResumedPrefix()
        let gap = grid.deviceLengthRoundingUp(options.annotation.titleTextGap)
        for prepared in items where !isFinished {
            let annotationHeight = prepared.annotations[layoutIndex].deviceHeight(titleTextGap: gap)
            let item = WaterfallItem(
                photoSize: prepared.photo.size, annotationHeight: Double(annotationHeight) / grid.scale,
                span: prepared.item.columnSpan)
            // Cut before placing: the state and digest now are exactly what the next page's cursor needs.
            if !pageItems.isEmpty, startsNewPage(top: engine.nextPosition(for: item.span).top) {
                try emitPage(state: engine.state, nextPageDigest: feedDigest.value, onPage: onPage)
                if let maximum = options.maximumPages, pagesWritten >= maximum {
                    isFinished = true
                    return
                }
            }
            let placed = engine.place(item)
            if pageItems.isEmpty { pageTop = placed.frame.y }
            pageItems.append(laidOut(prepared, placed))
            feedDigest.combine(prepared.item.id)
            feedDigest.combine(0)
        }
    }

    /// Writes the last page (or an empty first page for an empty feed).
    ///
    /// - Returns: How many pages this layout wrote in all.
    mutating func finish(onPage: (LayoutPage) throws -> Void) throws -> Int {
        try verifyResumedPrefix()
        if !isFinished, !pageItems.isEmpty || (pagesWritten == 0 && resumeIndex == 0) {
            try emitPage(state: engine.state, nextPageDigest: nil, onPage: onPage)
        }
        isFinished = true
        return pagesWritten
    }

    private func startsNewPage(top: Int) -> Bool {
        if let size = options.pagination.pageSize, pageItems.count >= size { return true }
        if let height = options.pagination.pageHeight {
            let band = height * grid.scale
            return (Double(top) / band).rounded(.down) > (Double(pageTop) / band).rounded(.down)
        }
        return false
    }

    /// Writes the current page.
    ///
    /// - Parameters:
    ///   - state: The engine state after the page's last item.
    ///   - nextPageDigest: The feed digest before the next page's first item, or `nil` when this is the last page
    ///     (it then gets no cursor).
    private mutating func emitPage(state: WaterfallState, nextPageDigest: UInt64?, onPage: (LayoutPage) throws -> Void)
        throws
    {
        let quality = LayoutQuality(items: pageItems.map(\.placed), columnHeights: state.columnHeights, grid: grid)
        qualityTotals.add(quality)
        let cursor = nextPageDigest.map {
            LayoutCursor(
                fingerprint: options.fingerprint, feedDigest: $0, pageIndex: pageIndex + 1, state: state,
                qualityTotals: qualityTotals
            ).encoded()
        }
        let page = LayoutPage(
            layoutIndex: layoutIndex, grid: grid, index: pageIndex, items: pageItems, columnHeights: state.columnHeights,
            contentHeight: state.contentBottom + grid.insets.bottom, cursor: cursor, quality: quality,
            totals: qualityTotals)
        try onPage(page)
        pageItems.removeAll(keepingCapacity: true)
        pageIndex += 1
        pagesWritten += 1
    }

    /// Checks, once every item before the cursor has been seen, that their ids are the ones the cursor was
    /// made from: a cursor must not silently continue another feed, or a feed that changed under it.
    private mutating func verifyResumedPrefix() throws(LayoutError) {
        guard let expected = resumeDigest, !prefixVerified else { return }
        guard itemsSeen >= resumeIndex else {
            throw LayoutError(
                .cursorMismatch,
                "--resume: the cursor points at item \(resumeIndex) but the feed has only \(itemsSeen) items; "
                    + "it belongs to another feed, or the feed changed")
        }
        guard feedDigest.value == expected else {
            throw LayoutError(
                .cursorMismatch,
                "--resume: the \(resumeIndex) items before the cursor are not the ones it was made from; "
                    + "it belongs to another feed, or the feed changed")
        }
        prefixVerified = true
    }

    private func laidOut(_ prepared: PreparedItem, _ placed: PlacedItem) -> LaidOutItem {
        let annotation = placed.annotationFrame
        var title = prepared.annotations[layoutIndex].title
        var text = prepared.annotations[layoutIndex].text
        if let height = title?.deviceHeight {
            title?.frame = DeviceRect(x: annotation.x, y: annotation.y, width: annotation.width, height: height)
        }
        if let height = text?.deviceHeight {
            text?.frame = DeviceRect(x: annotation.x, y: annotation.maxY - height, width: annotation.width, height: height)
        }
        return LaidOutItem(
            index: placed.index, id: prepared.item.id, link: prepared.item.link, placed: placed, photo: prepared.photo,
            title: title, text: text, warnings: prepared.warnings)
    }
}
