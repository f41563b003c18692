import Testing

@testable import WaterfallLayout

@Suite struct FlowEngineTests {
    /// Rows 280 px wide (300 less insets of 10), photos 50 px high, 10 px between cells, 8 between rows.
    func engine(_ alignment: FlowAlignment, follow: Bool = false) throws -> FlowEngine {
        try FlowEngine(
            configuration: FlowConfiguration(
                containerWidth: 300, insets: Insets(all: 10), itemGap: 10, rowGap: 8, annotationSpacing: 4,
                photoHeight: 50, alignment: alignment, follow: follow))
    }

    /// A cell `width` px wide: the photo is `width × 50` at the photo height.
    func item(_ width: Double, annotation: Double = 0) -> WaterfallItem {
        WaterfallItem(photoSize: Size(width: width * 2, height: 100), annotationHeight: annotation)
    }

    /// Cells 100, 80 (with a 30-px annotation), 60 in the first row (260 of 280 px), then 120 and 50.
    func layOut(_ alignment: FlowAlignment) throws -> [PlacedItem] {
        var layout = try engine(alignment)
        var placed: [PlacedItem] = []
        #expect(layout.place(item(100)).isEmpty)
        #expect(layout.place(item(80, annotation: 30)).isEmpty)
        #expect(layout.place(item(60)).isEmpty)
        placed += layout.place(item(120))
        #expect(placed.count == 3 && layout.pendingCount == 1 && layout.state.nextIndex == 3)
        placed += layout.place(item(50))
        placed += layout.finish()
        #expect(placed.map(\.index) == [0, 1, 2, 3, 4])
        return placed
    }

    @Test(arguments: [
        (FlowAlignment.start, [10, 120, 210]),
        (.end, [30, 140, 230]),
        (.center, [20, 130, 220]),
        (.dataEnd, [190, 100, 30]),
        (.justified, [10, 130, 230]),
    ])
    func rowsAreAligned(alignment: FlowAlignment, xs: [Int]) throws {
        let placed = try layOut(alignment)
        #expect(placed[..<3].map(\.frame.x) == xs)
        #expect(placed[..<3].map(\.column) == [0, 1, 2])
        // The second row is 10 + (50 + 4 + 30) + 8 below: the first row is as tall as its tallest cell.
        #expect(placed[3...].allSatisfy { $0.frame.y == 102 })
        #expect(placed[1].frame == DeviceRect(x: xs[1], y: 10, width: 80, height: 84))
        #expect(placed[1].annotationFrame == DeviceRect(x: xs[1], y: 64, width: 80, height: 30))
    }

    @Test func theLastRowOfAJustifiedLayoutStaysAtTheStart() throws {
        let placed = try layOut(.justified)
        #expect(placed[3...].map(\.frame.x) == [10, 140])
        // The end alignment moves the last row too: 280 - 180 = 100 to the right.
        #expect(try layOut(.end)[3...].map(\.frame.x) == [110, 240])
    }

    @Test func aPhotoWiderThanTheRowIsShrunkAndCentred() throws {
        var layout = try FlowEngine(
            configuration: FlowConfiguration(containerWidth: 300, cellPadding: 5, photoHeight: 50))
        #expect(layout.contentWidth(for: Size(width: 1160, height: 100)) == 290)
        _ = layout.place(WaterfallItem(photoSize: Size(width: 1160, height: 100), annotationHeight: 0))
        let placed = layout.finish()
        #expect(placed[0].frame == DeviceRect(x: 0, y: 0, width: 300, height: 60))
        // 290 wide at 1160:100 is 25 high, centred in the 50-px slot.
        #expect(placed[0].photoFrame == DeviceRect(x: 5, y: 5 + 12, width: 290, height: 25))
    }

    /// The article's follow mode with equal widths: cells tuck under the cell whose bottom is highest.
    @Test func followModeTucksUnderTheHighestBottom() throws {
        var layout = try FlowEngine(
            configuration: FlowConfiguration(
                containerWidth: 300, itemGap: 10, rowGap: 10, photoHeight: 50, follow: true))
        var placed: [PlacedItem] = []
        // Three 80-px cells per row, 50, 90 and 70 high.
        for annotation in [0.0, 40, 20] {
            placed += layout.place(WaterfallItem(photoSize: Size(width: 80, height: 50), annotationHeight: annotation))
        }
        #expect(placed.isEmpty)
        for _ in 0..<3 {
            placed += layout.place(WaterfallItem(photoSize: Size(width: 80, height: 50), annotationHeight: 0))
        }
        #expect(placed.map(\.index) == [0, 1, 2, 3, 4, 5])
        // Bottoms 50, 90, 70 → item 3 under lane 0 at 60, item 4 under lane 2 at 80, item 5 under lane 1 at 100.
        #expect(placed[3...].map(\.frame.x) == [0, 180, 90])
        #expect(placed[3...].map(\.frame.y) == [60, 80, 100])
        #expect(placed[3...].map(\.column) == [0, 2, 1])
        #expect(layout.finish().isEmpty)
        // Ending follow mode: the next row starts below everything (item 5 ends at 100 + 50, then the row gap).
        _ = layout.place(WaterfallItem(photoSize: Size(width: 80, height: 50), annotationHeight: 0))
        #expect(layout.finish()[0].frame == DeviceRect(x: 0, y: 160, width: 80, height: 50))
    }

    @Test func sectionsPlaceTheOpenRowAndAddHeadersAndFooters() throws {
        var layout = try FlowEngine(
            configuration: FlowConfiguration(
                containerWidth: 300, insets: Insets(all: 10), itemGap: 10, rowGap: 8, photoHeight: 50,
                sectionInsets: Insets(top: 4, left: 6, bottom: 3, right: 6), decorationOutset: 2))
        let begun = layout.beginSection(header: 20)
        #expect(begun.items.isEmpty && begun.header == DeviceRect(x: 10, y: 10, width: 280, height: 20))
        _ = layout.place(item(100))
        let ended = layout.endSection(footer: 10)
        #expect(ended.items.map(\.frame) == [DeviceRect(x: 16, y: 34, width: 100, height: 50)])
        #expect(ended.section.footer == DeviceRect(x: 10, y: 87, width: 280, height: 10))
        #expect(ended.section.decoration == DeviceRect(x: 14, y: 32, width: 104, height: 54))
        #expect(ended.section.start == 10 && ended.section.end == 97 && ended.section.items == 0..<1)
        #expect(layout.contentSize.height == 107)
    }

    @Test func badFlowConfigurationsNameTheOption() {
        for (configuration, option) in [
            (FlowConfiguration(containerWidth: 100, photoHeight: 0), "row-photo-height"),
            (FlowConfiguration(containerWidth: 100, cellPadding: 50, photoHeight: 10), "cell-padding"),
            (FlowConfiguration(containerWidth: 100, insets: Insets(left: 60, right: 60), photoHeight: 10), "width"),
            (FlowConfiguration(containerWidth: 100, itemGap: -1, photoHeight: 10), "gutter"),
        ] {
            do {
                _ = try FlowGrid(configuration)
                Issue.record("accepted \(configuration)")
            } catch {
                #expect(error.option == option)
            }
        }
    }

    @Test func followStatesFromAnotherWidthAreRefused() throws {
        var layout = try FlowEngine(
            configuration: FlowConfiguration(containerWidth: 300, photoHeight: 50, follow: true))
        for _ in 0..<5 { _ = layout.place(WaterfallItem(photoSize: Size(width: 120, height: 50), annotationHeight: 0)) }
        #expect(!layout.state.followSegments.isEmpty)
        #expect(throws: WaterfallConfigurationError.self) {
            try FlowEngine(
                configuration: FlowConfiguration(containerWidth: 320, photoHeight: 50, follow: true),
                resumingFrom: layout.state)
        }
    }
}

@Suite struct FlowEdgeTests {
    /// A cell that ends exactly at the row's edge still fits (the aligned flow layout needs one pixel more).
    @Test func aCellEndingAtTheEdgeFits() throws {
        var layout = try FlowEngine(
            configuration: FlowConfiguration(containerWidth: 210, itemGap: 10, photoHeight: 50, alignment: .end))
        for _ in 0..<2 { _ = layout.place(WaterfallItem(photoSize: Size(width: 100, height: 50), annotationHeight: 0)) }
        #expect(layout.pendingCount == 2)
        let row = layout.place(WaterfallItem(photoSize: Size(width: 100, height: 50), annotationHeight: 0))
        #expect(row.map(\.frame.x) == [0, 110])
    }

    /// Rows of cells with different heights are top-aligned; the state between rows resumes the open row.
    @Test func resumingReplacesTheOpenRow() throws {
        let configuration = FlowConfiguration(containerWidth: 250, itemGap: 10, rowGap: 5, photoHeight: 40)
        let items = [60.0, 30, 90, 120, 20].map {
            WaterfallItem(photoSize: Size(width: 100, height: 40), annotationHeight: $0)
        }
        var whole = try FlowEngine(configuration: configuration)
        let expected = items.flatMap { whole.place($0) } + whole.finish()
        // Two 100-px cells per row: rows at 0, then 40 + 60 + 5 below, then 40 + 120 + 5 further.
        #expect(expected.map(\.frame.y) == [0, 0, 105, 105, 270])
        var first = try FlowEngine(configuration: configuration)
        let placed = items[..<3].flatMap { first.place($0) }
        #expect(placed.map(\.index) == [0, 1] && first.state.nextIndex == 2 && first.pendingCount == 1)
        var second = try FlowEngine(configuration: configuration, resumingFrom: first.state)
        let rest = items[2...].flatMap { second.place($0) } + second.finish()
        #expect(placed + rest == expected)
    }
}
