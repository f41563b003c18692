import FeedIngest
import WaterfallLayout

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
