import FeedIngest
import WaterfallLayout

/// The sequential half of a run: every layout's page assembler, and the summary, which counts each item once
/// however many layouts place it.
package struct RunAssembler {
    var assemblers: [PageAssembler]
    package var summary = LayoutSummary()

    /// - Parameter itemsBeforeCursorRead: Whether the run reads the feed's items before the cursor (and checks them
    ///   against it), or begins at the cursor's item, its caller having shown the items before it are the cursor's
    ///   (a feed resumed by bytes, `FeedInput.resumed`).
    package init(
        options: LayoutOptions, fonts: LayoutFonts, geometries: [LayoutGeometry], resume: String?,
        itemsBeforeCursorRead: Bool = true
    ) throws(LayoutError) {
        var assemblers: [PageAssembler] = []
        for (index, (layout, geometry)) in zip(options.layouts, geometries).enumerated() {
            assemblers.append(
                try PageAssembler(
                    options: layout, fonts: fonts, geometry: geometry, layoutIndex: index, resume: resume,
                    itemsBeforeCursorRead: itemsBeforeCursorRead))
        }
        self.assemblers = assemblers
    }

    /// Every layout has written the pages it was asked for (`--max-pages`).
    /// The index of the first item the run lays out: the cursor's next item, or 0. Items before it are only
    /// checked against the cursor, so the stages ahead of placement need not prepare them.
    package var resumeIndex: Int { assemblers.map(\.resumeIndex).max() ?? 0 }

    package var isFinished: Bool { assemblers.allSatisfy(\.isFinished) }

    package mutating func isBeforeCursor(_ item: FeedItem) -> Bool {
        var before = false
        for index in assemblers.indices where assemblers[index].isBeforeCursor(item) { before = true }
        return before
    }

    package mutating func add(_ items: ArraySlice<PreparedItem>, onPage: (LayoutPage) throws -> Void) throws {
        for index in assemblers.indices { try assemblers[index].add(items, onPage: onPage) }
        // By position: `for prepared in items` copied each whole item (its strings and arrays retained).
        for position in items.indices {
            summary.items += 1
            if items[position].photo.sizeSource == .header { summary.imagesProbed += 1 }
            if items[position].photo.isUnreadImage { summary.imageFailures += 1 }
            for warning in items[position].warnings { summary.warningsByCode[warning.code, default: 0] += 1 }
            summary.warnings += items[position].warnings.count
            summary.stageTimes.probe += items[position].probeTime
            summary.stageTimes.measure += items[position].measureTime
        }
    }

    package var progress: LayoutProgress {
        LayoutProgress(
            items: summary.items, imagesProbed: summary.imagesProbed, imageFailures: summary.imageFailures,
            pages: assemblers.reduce(0) { $0 + $1.pagesWritten })
    }

    package mutating func finish(onPage: (LayoutPage) throws -> Void) throws -> LayoutSummary {
        for index in assemblers.indices { summary.pages += try assemblers[index].finish(onPage: onPage) }
        return summary
    }
}

/// A section starting or ending, as a page reports it.
public enum SectionEvent: Sendable, Hashable {
    /// A section starts: its position among the sections, the feed's key for it, its header band (if any), and
    /// where it starts on the scroll axis (device pixels).
    case start(index: Int, key: String, header: DeviceRect?, start: Int)
    /// A section ends, with all its frames.
    case end(SectionFrames)
}

/// Places prepared items in order and cuts them into pages: the sequential half of the pipeline.
///
/// The engine hands cells back in batches (a flow row at a time), so a page can only end between batches, and a
/// cursor carries the state, feed digest and section key of the last batch boundary. Section changes happen
/// between boundaries: their events wait for the next batch and go to the page it lands in, and a cursor cut
/// before that batch makes the resumed run make the same change again.
struct PageAssembler {
    let options: LayoutOptions
    /// The fonts the annotations were measured with: every page records them.
    let fonts: LayoutFonts
    /// The options' and fonts' fingerprint, which every cursor carries: computed once, it formats a dozen strings.
    private let fingerprint: UInt64
    /// The fonts' tags every cursor carries, computed once.
    private let fontTags: [Int]
    let geometry: LayoutGeometry
    var grid: WaterfallGrid { geometry.grid }
    /// Which layout of the run this is; its prepared annotation is `annotations[layoutIndex]`.
    let layoutIndex: Int
    private var engine: LayoutEngine
    private(set) var isFinished = false

    /// Items before this index were laid out by earlier pages; they are only checked against the cursor.
    let resumeIndex: Int
    private let resumeDigest: UInt64?
    private var prefixVerified = false
    private var itemsSeen = 0

    /// What a cursor cut at the last batch boundary carries.
    private var boundaryState: EngineState
    private var boundaryDigest = StableHash()
    private var boundarySectionKey: UInt64
    /// Items given to the engine whose cells have not come out yet (a flow row still open), in feed order.
    private var waiting: [PreparedItem] = []
    /// The current section's key: a hash of the last `<fl:section>` seen; 0 before any.
    private var sectionKey: UInt64
    /// Section events since the last batch: they go with the next one.
    private var waitingEvents: [SectionEvent] = []

    private var pageIndex: Int
    private var qualityTotals: LayoutQualityTotals
    private(set) var pagesWritten = 0
    private var pageItems: [LaidOutItem] = []
    private var pageEvents: [SectionEvent] = []
    private var pageTop = 0

    init(
        options: LayoutOptions, fonts: LayoutFonts, geometry: LayoutGeometry, layoutIndex: Int = 0, resume: String?,
        itemsBeforeCursorRead: Bool = true
    ) throws(LayoutError) {
        self.options = options
        self.fonts = fonts
        fingerprint = fonts.fingerprint(combinedWith: options.fingerprint)
        fontTags = fonts.tags
        self.geometry = geometry
        self.layoutIndex = layoutIndex
        if let resume {
            let cursor = try LayoutCursor(decoding: resume)
            guard cursor.fingerprint == fingerprint else {
                if let difference = fonts.difference(fromTags: cursor.fontTags) {
                    throw LayoutError(
                        .cursorMismatch,
                        "--resume: the cursor was made with other fonts (\(difference)); resume on a machine with "
                            + "the same font files, or pass the fonts of the run that wrote it")
                }
                throw LayoutError(
                    .cursorMismatch,
                    "--resume: the cursor was made with other layout options (or by a feedlayout from before 2026-11-26, whose "
                        + "options fingerprint was encoded otherwise); pass the same options as the run that wrote it"
                )
            }
            do {
                engine = try geometry.makeEngine(options: options, resumingFrom: cursor.state)
            } catch {
                throw LayoutError(.cursorMismatch, "--resume: \(error.message)")
            }
            // Waterfall pages hold at most the page size (a flow row may overfill a page, so flow is not checked).
            if let pageSize = options.pagination.pageSize, options.flow == nil,
                cursor.pageIndex < (cursor.state.nextIndex + pageSize - 1) / pageSize
            {
                throw LayoutError(
                    .invalidCursor,
                    "--resume: the cursor says \(cursor.pageIndex) pages hold the \(cursor.state.nextIndex) items "
                        + "before it, but pages hold at most \(pageSize); pass the `cursor` string of a page exactly "
                        + "as written")
            }
            resumeIndex = cursor.state.nextIndex
            resumeDigest = cursor.feedDigest
            if !itemsBeforeCursorRead {
                // The items before the cursor are its own: their digest is the one it carries.
                itemsSeen = resumeIndex
                prefixVerified = true
                boundaryDigest = StableHash(continuing: cursor.feedDigest)
            }
            pageIndex = cursor.pageIndex
            qualityTotals = cursor.qualityTotals
            sectionKey = cursor.sectionKey
        } else {
            do {
                engine = try geometry.makeEngine(options: options, resumingFrom: nil)
            } catch {
                throw LayoutError(.invalidOptions, error.description)
            }
            resumeIndex = 0
            resumeDigest = nil
            pageIndex = 0
            qualityTotals = LayoutQualityTotals()
            sectionKey = 0
        }
        boundaryState = engine.state
        boundarySectionKey = sectionKey
    }

    /// Counts an item and, when an earlier page already laid it out, feeds its id into the digest the cursor
    /// is checked against.
    ///
    /// - Returns: Whether the item comes before the cursor and is to be skipped.
    mutating func isBeforeCursor(_ item: FeedItem) -> Bool {
        defer { itemsSeen += 1 }
        guard itemsSeen < resumeIndex else { return false }
        boundaryDigest.combine(item.id)
        boundaryDigest.combine(0)
        return true
    }

    /// Places a window of prepared items, writing every page that completes.
    ///
    /// Items are read where they are (`items[position]`'s fields) rather than copied out one by one: a copy of a
    /// prepared item retains and releases every string and array of its feed item, and moves its bytes.
    mutating func add(_ items: ArraySlice<PreparedItem>, onPage: (LayoutPage) throws -> Void) throws {
        try verifyResumedPrefix()
        for position in items.indices where !isFinished {
            if let key = items[position].item.layout.section {
                let hash = Self.sectionHash(key)
                if hash != sectionKey {
                    try changeSection(to: key, hash: hash, onPage: onPage)
                    if isFinished { return }
                }
            }
            let cells = engine.place(engineItem(items, position))
            if waiting.isEmpty, cells.count == 1 {
                // The usual case (a waterfall places each item at once): the item goes straight to its page,
                // not through `waiting`.
                try take(cells, of: items, from: position, onPage: onPage)
            } else {
                waiting.append(items[position])
                try takeWaiting(cells, onPage: onPage)
            }
            if engine.contentBottom > WaterfallLimits.maximumCoordinate {
                throw LayoutError(
                    .feedInvalid,
                    "item \(items[position].item.index) (\(items[position].item.id)) ends past device pixel "
                        + "\(WaterfallLimits.maximumCoordinate), the largest position a JSON number holds exactly; "
                        + "is an image's declared size absurd?")
            }
        }
    }

    /// Writes the last page (or an empty first page for an empty feed).
    ///
    /// - Returns: How many pages this layout wrote in all.
    mutating func finish(onPage: (LayoutPage) throws -> Void) throws -> Int {
        try verifyResumedPrefix()
        guard !isFinished else { return pagesWritten }
        try takeWaiting(engine.breakRow(), onPage: onPage)
        if !isFinished, boundaryState.hasSections {
            waitingEvents.append(.end(engine.endSection(footer: options.sections.footerHeight)))
        }
        if !isFinished, !pageItems.isEmpty || !waitingEvents.isEmpty || (pagesWritten == 0 && resumeIndex == 0) {
            pageEvents += waitingEvents
            waitingEvents.removeAll()
            try emitPage(cursor: nil, onPage: onPage)
        }
        isFinished = true
        return pagesWritten
    }

    /// Ends the current section (with its footer) and starts the next (with its header). The open row, if any,
    /// is placed first: its cells belong to the section that ends.
    private mutating func changeSection(to key: String, hash: UInt64, onPage: (LayoutPage) throws -> Void) throws {
        try takeWaiting(engine.breakRow(), onPage: onPage)
        if isFinished { return }
        let sections = options.sections
        if engine.sectionIsOpen { waitingEvents.append(.end(engine.endSection(footer: sections.footerHeight))) }
        let header = engine.beginSection(header: sections.headerHeight)
        // In flow mode `grid` is the one-lane vertical stand-in, whose scroll start is the top inset too.
        let section = engine.state.section
        waitingEvents.append(
            .start(index: section.index, key: key, header: header, start: section.start ?? grid.scrollStartInset))
        sectionKey = hash
    }

    /// What the engine needs of an item: on the horizontal axis the annotation gets its fixed band.
    private func engineItem(_ items: ArraySlice<PreparedItem>, _ position: Int) -> WaterfallItem {
        let annotationHeight: Int
        if let band = geometry.annotationBand {
            annotationHeight = band
        } else {
            let gap = grid.deviceLengthRoundingUp(options.annotation.titleTextGap)
            annotationHeight = items[position].annotations[layoutIndex].deviceHeight(titleTextGap: gap)
        }
        return WaterfallItem(
            photoSize: items[position].photo.size, annotationHeight: Double(annotationHeight) / grid.scale,
            span: items[position].item.columnSpan)
    }

    /// Takes a batch of cells for the oldest waiting items.
    private mutating func takeWaiting(_ cells: [PlacedItem], onPage: (LayoutPage) throws -> Void) throws {
        try take(cells, of: waiting[...], from: 0, onPage: onPage)
        waiting.removeFirst(min(cells.count, waiting.count))
    }

    /// Takes a batch of cells from the engine, the cells of `items` from `start` on, in order: cuts the page
    /// before it if the batch starts a new one, then adds it and moves the boundary past it.
    private mutating func take(
        _ cells: [PlacedItem], of items: ArraySlice<PreparedItem>, from start: Int,
        onPage: (LayoutPage) throws -> Void
    ) throws {
        guard let first = cells.first else { return }
        if !pageItems.isEmpty, startsNewPage(top: scrollPosition(first.frame), adding: cells.count) {
            try emitPage(
                cursor: LayoutCursor(
                    fingerprint: fingerprint, feedDigest: boundaryDigest.value, fontTags: fontTags,
                    pageIndex: pageIndex + 1,
                    state: boundaryState, sectionKey: boundarySectionKey, qualityTotals: qualityTotals),
                onPage: onPage)
            if let maximum = options.maximumPages, pagesWritten >= maximum {
                isFinished = true
                return
            }
        }
        if pageItems.isEmpty { pageTop = scrollPosition(first.frame) }
        pageEvents += waitingEvents
        waitingEvents.removeAll()
        let state = engine.state
        let section = state.hasSections ? state.section.index : nil
        for (offset, placed) in cells.prefix(items.endIndex - start).enumerated() {
            pageItems.append(laidOut(items, start + offset, placed, section: section))
            boundaryDigest.combine(items[start + offset].item.id)
            boundaryDigest.combine(0)
        }
        boundaryState = state
        boundarySectionKey = sectionKey
    }

    /// A frame's position on the scroll axis.
    private func scrollPosition(_ frame: DeviceRect) -> Int { grid.axis == .horizontal ? frame.x : frame.y }

    private func startsNewPage(top: Int, adding count: Int) -> Bool {
        if let size = options.pagination.pageSize, pageItems.count + count > size { return true }
        if let height = options.pagination.pageHeight {
            let band = height * grid.scale
            return (Double(top) / band).rounded(.down) > (Double(pageTop) / band).rounded(.down)
        }
        return false
    }

    /// Writes the current page.
    ///
    /// - Parameter cursor: Where the next page starts, or `nil` when this is the last page.
    private mutating func emitPage(cursor: LayoutCursor?, onPage: (LayoutPage) throws -> Void) throws {
        let lanes = cursor.map { _ in laneHeights(boundaryState) } ?? engine.laneHeights
        let bottom = cursor.map { _ in boundaryState.contentBottom } ?? engine.contentBottom
        let quality = LayoutQuality(items: pageItems.map(\.placed), columnHeights: lanes, grid: grid)
        qualityTotals.add(quality)
        var cursor = cursor
        cursor?.qualityTotals = qualityTotals
        let page = LayoutPage(
            layoutIndex: layoutIndex, grid: grid, flowGrid: geometry.flowGrid, fonts: fonts, index: pageIndex,
            items: pageItems,
            sections: pageEvents, columnHeights: lanes, contentHeight: bottom + grid.scrollEndInset,
            cursor: cursor?.encoded(), quality: quality, totals: qualityTotals)
        try onPage(page)
        pageItems.removeAll(keepingCapacity: true)
        pageEvents.removeAll()
        pageIndex += 1
        pagesWritten += 1
    }

    private func laneHeights(_ state: EngineState) -> [Int] {
        switch state {
        case .waterfall(let state): state.columnHeights
        case .flow(let state): [state.rowTop]
        }
    }

    /// A section key's hash for cursors; never 0, which means "no section yet".
    static func sectionHash(_ key: String) -> UInt64 {
        var hash = StableHash()
        hash.combine(key)
        return max(hash.value, 1)
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
        guard boundaryDigest.value == expected else {
            throw LayoutError(
                .cursorMismatch,
                "--resume: the \(resumeIndex) items before the cursor are not the ones it was made from; "
                    + "it belongs to another feed, or the feed changed")
        }
        prefixVerified = true
    }

    private func laidOut(
        _ items: ArraySlice<PreparedItem>, _ position: Int, _ placed: PlacedItem, section: Int?
    ) -> LaidOutItem {
        let annotation = placed.annotationFrame
        var title = items[position].annotations[layoutIndex].title
        var text = items[position].annotations[layoutIndex].text
        var top = annotation.y
        if let height = title?.deviceHeight {
            title?.frame = DeviceRect(x: annotation.x, y: top, width: annotation.width, height: height)
            top += height + grid.deviceLengthRoundingUp(options.annotation.titleTextGap)
        }
        if let height = text?.deviceHeight {
            // Under the title and the gap; in a band taller than the text (horizontal axis) the rest stays empty.
            text?.frame = DeviceRect(x: annotation.x, y: top, width: annotation.width, height: height)
        }
        return LaidOutItem(
            index: placed.index, id: items[position].item.id, link: items[position].item.link, placed: placed,
            photo: items[position].photo, title: title, text: text, warnings: items[position].warnings,
            section: section)
    }
}
