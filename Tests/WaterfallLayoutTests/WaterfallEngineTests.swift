import FeedLayoutTestSupport
import Testing

@testable import WaterfallLayout

@Suite struct AspectFitTests {
    @Test func fitsWideImageIntoSquareCentred() {
        let rect = aspectFit(Size(width: 200, height: 100), inside: Rect(x: 10, y: 20, width: 100, height: 100))
        #expect(rect == Rect(x: 10, y: 45, width: 100, height: 50))
    }

    @Test func fitsTallImageIntoSquareCentred() {
        let rect = aspectFit(Size(width: 50, height: 100), inside: Rect(x: 0, y: 0, width: 100, height: 100))
        #expect(rect == Rect(x: 25, y: 0, width: 50, height: 100))
    }

    @Test func unboundedHeightGivesFullWidth() {
        // The PinterestLayout photo height: width * h / w.
        let rect = aspectFit(Size(width: 4000, height: 3000), inside: Rect(x: 0, y: 0, width: 160, height: .infinity))
        #expect(rect == Rect(x: 0, y: 0, width: 160, height: 120))
    }

    @Test func degenerateAspectRatioGivesEmptyRectAtCentre() {
        let rect = aspectFit(Size(width: 0, height: 10), inside: Rect(x: 0, y: 0, width: 100, height: 50))
        #expect(rect == Rect(x: 50, y: 25, width: 0, height: 0))
    }
}

@Suite struct GridTests {
    @Test func fixedColumnsShareTheWidthAfterInsetsAndGaps() throws {
        let grid = try WaterfallGrid(
            WaterfallConfiguration(
                containerWidth: 320, columns: .fixed(3), insets: Insets(all: 10), columnGap: 10))
        // (320 - 20 - 2*10) / 3 = 93.33…, floored to 93 device pixels.
        #expect(grid.columnWidth == 93)
        #expect(grid.columnX == [10, 113, 216])
    }

    @Test func adaptiveColumnCountFollowsTheDesignFormula() throws {
        // floor((1280 - 0 - 0 + 16) / (236 + 16)) = floor(5.14) = 5
        let grid = try WaterfallGrid(
            WaterfallConfiguration(containerWidth: 1280, columns: .adaptive(minimumWidth: 236), columnGap: 16))
        #expect(grid.columnCount == 5)
        let narrow = try WaterfallGrid(
            WaterfallConfiguration(
                containerWidth: 200, columns: .adaptive(minimumWidth: 236, minimumColumns: 2), columnGap: 16))
        #expect(narrow.columnCount == 2)
        let capped = try WaterfallGrid(
            WaterfallConfiguration(
                containerWidth: 4000, columns: .adaptive(minimumWidth: 100, maximumColumns: 6), columnGap: 0))
        #expect(capped.columnCount == 6)
    }

    @Test func rightToLeftMirrorsColumns() throws {
        let grid = try WaterfallGrid(
            WaterfallConfiguration(
                containerWidth: 300, columns: .fixed(2), insets: Insets(left: 10, right: 20), columnGap: 10,
                direction: .rightToLeft))
        // (300 - 30 - 10) / 2 = 130; column 0 ends at 300 - 20.
        #expect(grid.columnX == [150, 10])
    }

    @Test func scaleWorksInDevicePixels() throws {
        let grid = try WaterfallGrid(
            WaterfallConfiguration(
                containerWidth: 375, columns: .fixed(2), insets: Insets(all: 8), columnGap: 8, scale: 2))
        // (750 - 32 - 16) / 2 = 351 device pixels = 175.5 CSS px.
        #expect(grid.columnWidth == 351)
        #expect(grid.columnX == [16, 383])
    }

    @Test(arguments: [
        (WaterfallConfiguration(containerWidth: 100, columns: .fixed(0)), "columns"),
        (WaterfallConfiguration(containerWidth: 20, insets: Insets(left: 10, right: 10)), "width"),
        (WaterfallConfiguration(containerWidth: 100, columns: .fixed(2), cellPadding: 25), "cell-padding"),
        (WaterfallConfiguration(containerWidth: 100, columnGap: -1), "gutter"),
        (WaterfallConfiguration(containerWidth: 100, scale: 0), "scale"),
        (WaterfallConfiguration(containerWidth: .nan), "width"),
        (
            WaterfallConfiguration(containerWidth: 100, maximumPhotoHeight: 10, minimumPhotoHeight: 20),
            "max-photo-height"
        ),
    ])
    func badConfigurationsNameTheOption(configuration: WaterfallConfiguration, option: String) {
        #expect(throws: WaterfallConfigurationError.self) { try WaterfallGrid(configuration) }
        do {
            _ = try WaterfallGrid(configuration)
        } catch {
            #expect(error.option == option)
        }
    }
}

@Suite struct PlacementTests {
    /// The Objective-C waterfall of the seed articles: 3 columns, insets and spacing, cells of given heights.
    @Test func threeColumnShortestColumnLayoutWithInsetsAndSpacing() throws {
        var engine = try WaterfallEngine(
            configuration: WaterfallConfiguration(
                containerWidth: 320, columns: .fixed(3), insets: Insets(all: 10), columnGap: 10, rowGap: 10))
        // A photo 93 wide and h tall gives a cell exactly h tall (no padding, no annotation).
        let heights = [100, 50, 80, 30, 60, 40, 90]
        let placed = heights.map {
            engine.place(WaterfallItem(photoSize: Size(width: 93, height: Double($0)), annotationHeight: 0))
        }
        // Heights after the first row: [120, 70, 100]. Item 3 (30) -> column 1 at 70 -> [120, 110, 100];
        // item 4 (60) -> column 2 at 100 -> [120, 110, 170]; item 5 (40) -> column 1 at 110 -> [120, 160, 170];
        // item 6 (90) -> column 0 at 120 -> [220, 160, 170].
        #expect(placed.map(\.column) == [0, 1, 2, 1, 2, 1, 0])
        #expect(placed.map(\.frame.y) == [10, 10, 10, 70, 100, 110, 120])
        #expect(placed.map(\.frame.x) == [10, 113, 216, 113, 216, 113, 10])
        #expect(engine.state.columnHeights == [220, 160, 170])
        #expect(engine.contentSize.height == 220 - 10 + 10)
    }

    /// The PinterestLayout tutorial: 2 columns, cell padding, photo by aspect fit plus annotation height.
    @Test func twoColumnPinterestLayoutWithPaddingPhotoAndAnnotation() throws {
        var engine = try WaterfallEngine(
            configuration: WaterfallConfiguration(containerWidth: 320, columns: .fixed(2), cellPadding: 6))
        // Column width 160, content width 148.
        let first = engine.place(WaterfallItem(photoSize: Size(width: 1000, height: 750), annotationHeight: 40))
        #expect(first.frame == DeviceRect(x: 0, y: 0, width: 160, height: 6 + 111 + 40 + 6))
        #expect(first.photoFrame == DeviceRect(x: 6, y: 6, width: 148, height: 111))
        #expect(first.annotationFrame == DeviceRect(x: 6, y: 117, width: 148, height: 40))
        let second = engine.place(WaterfallItem(photoSize: Size(width: 500, height: 1000), annotationHeight: 20.5))
        #expect(second.column == 1)
        // 148 * 2 = 296 photo; 20.5 rounds up to 21 so the text fits.
        #expect(second.frame == DeviceRect(x: 160, y: 0, width: 160, height: 6 + 296 + 21 + 6))
        let third = engine.place(WaterfallItem(photoSize: Size(width: 100, height: 100), annotationHeight: 0))
        #expect(third.column == 0)
        #expect(third.frame.y == 163)
    }

    @Test func tiesGoToTheFirstColumnInReadingOrder() throws {
        var engine = try WaterfallEngine(
            configuration: WaterfallConfiguration(containerWidth: 400, columns: .fixed(4), direction: .rightToLeft))
        let columns = (0..<8).map { _ in
            engine.place(WaterfallItem(photoSize: Size(width: 1, height: 1), annotationHeight: 0)).column
        }
        #expect(columns == [0, 1, 2, 3, 0, 1, 2, 3])
        // Right-to-left: column 0 is at the right edge.
        #expect(engine.grid.columnX[0] == 300)
    }

    @Test func photoHeightLimitsCentreThePhotoInItsSlot() throws {
        var engine = try WaterfallEngine(
            configuration: WaterfallConfiguration(
                containerWidth: 200, columns: .fixed(1), maximumPhotoHeight: 300, minimumPhotoHeight: 100))
        let tall = engine.place(WaterfallItem(photoSize: Size(width: 100, height: 1000), annotationHeight: 0))
        #expect(tall.photoSlot.height == 300)
        #expect(tall.photoFrame == DeviceRect(x: 85, y: 0, width: 30, height: 300))
        let panorama = engine.place(WaterfallItem(photoSize: Size(width: 1000, height: 100), annotationHeight: 0))
        #expect(panorama.photoSlot.height == 100)
        #expect(panorama.photoFrame == DeviceRect(x: 0, y: 300 + 40, width: 200, height: 20))
    }

    @Test func annotationSpacingOnlyWhenThereIsAnAnnotation() throws {
        var engine = try WaterfallEngine(
            configuration: WaterfallConfiguration(containerWidth: 100, columns: .fixed(1), annotationSpacing: 8))
        let bare = engine.place(WaterfallItem(photoSize: Size(width: 1, height: 1), annotationHeight: 0))
        #expect(bare.frame.height == 100)
        let annotated = engine.place(WaterfallItem(photoSize: Size(width: 1, height: 1), annotationHeight: 17))
        #expect(annotated.frame.height == 125)
        #expect(annotated.annotationFrame.y == annotated.frame.y + 108)
    }
}

@Suite struct InvariantTests {
    static func randomConfiguration(_ random: inout SplitMix64) -> WaterfallConfiguration {
        WaterfallConfiguration(
            containerWidth: Double(Int.random(in: 200...1600, using: &random)),
            columns: .fixed(Int.random(in: 1...7, using: &random)),
            insets: Insets(all: Double(Int.random(in: 0...16, using: &random))),
            columnGap: Double(Int.random(in: 0...20, using: &random)),
            rowGap: Double(Int.random(in: 0...20, using: &random)),
            cellPadding: Double(Int.random(in: 0...8, using: &random)),
            annotationSpacing: Double(Int.random(in: 0...8, using: &random)),
            maximumPhotoHeight: Bool.random(using: &random) ? nil : 400,
            scale: [1, 2, 3, 1.5][Int.random(in: 0...3, using: &random)])
    }

    static func randomItem(_ random: inout SplitMix64) -> WaterfallItem {
        WaterfallItem(
            photoSize: Size(
                width: Double(Int.random(in: 1...5000, using: &random)),
                height: Double(Int.random(in: 1...5000, using: &random))),
            annotationHeight: Bool.random(using: &random) ? 0 : Double.random(in: 0...120, using: &random))
    }

    @Test(arguments: 0..<40)
    func everyItemGoesToTheShortestColumnWithoutOverlap(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(seed))
        let configuration = Self.randomConfiguration(&random)
        var engine = try WaterfallEngine(configuration: configuration)
        var placed: [PlacedItem] = []
        for _ in 0..<Int.random(in: 1...300, using: &random) {
            let before = engine.state.columnHeights
            let item = engine.place(Self.randomItem(&random))
            let shortest = before.min()!
            #expect(item.column == before.firstIndex(of: shortest)!)
            #expect(item.frame.y == shortest)
            #expect(item.frame.x == engine.grid.columnX[item.column])
            #expect(item.photoFrame.maxY <= item.annotationFrame.y)
            #expect(item.annotationFrame.maxY <= item.frame.maxY)
            if let last = placed.last { #expect(item.frame.y >= last.frame.y) }
            placed.append(item)
        }
        for (i, a) in placed.enumerated() {
            for b in placed[(i + 1)...] {
                let overlaps =
                    a.frame.x < b.frame.maxX && b.frame.x < a.frame.maxX && a.frame.y < b.frame.maxY
                    && b.frame.y < a.frame.maxY
                #expect(!overlaps, "items \(a.index) and \(b.index) overlap")
            }
        }
        #expect(placed.map(\.index) == Array(0..<placed.count))
    }

    @Test(arguments: 0..<20)
    func resumingFromASavedStateGivesTheSameFrames(seed: Int) throws {
        var random = SplitMix64(seed: UInt64(1000 + seed))
        let configuration = Self.randomConfiguration(&random)
        let items = (0..<120).map { _ in Self.randomItem(&random) }
        var whole = try WaterfallEngine(configuration: configuration)
        let expected = items.map { whole.place($0) }
        let cut = Int.random(in: 0...items.count, using: &random)
        var first = try WaterfallEngine(configuration: configuration)
        var resumedFrames = items[..<cut].map { first.place($0) }
        var second = try WaterfallEngine(configuration: configuration, resumingFrom: first.state)
        resumedFrames += items[cut...].map { second.place($0) }
        #expect(resumedFrames == expected)
        #expect(second.state == whole.state)
    }

    @Test func photoFramesKeepTheAspectRatioWithinRounding() throws {
        var random = SplitMix64(seed: 7)
        var engine = try WaterfallEngine(
            configuration: WaterfallConfiguration(containerWidth: 375, columns: .fixed(2), cellPadding: 4))
        for _ in 0..<500 {
            let item = Self.randomItem(&random)
            let frame = engine.place(item).photoFrame
            let expectedHeight = Double(frame.width) * item.photoSize.height / item.photoSize.width
            #expect(abs(Double(frame.height) - expectedHeight) <= 0.5 + 1e-9)
        }
    }

    @Test func aStateFromAnotherColumnCountIsRefused() throws {
        let engine = try WaterfallEngine(configuration: WaterfallConfiguration(containerWidth: 300, columns: .fixed(3)))
        #expect(throws: WaterfallConfigurationError.self) {
            try WaterfallEngine(
                configuration: WaterfallConfiguration(containerWidth: 300, columns: .fixed(2)),
                resumingFrom: engine.state)
        }
    }
}

@Suite struct PlacementOrderAndSpanTests {
    func configuration(_ columns: Int, placement: PlacementOrder = .shortestFirst, tolerance: Double = 0)
        -> WaterfallConfiguration
    {
        WaterfallConfiguration(
            containerWidth: Double(columns * 100), columns: .fixed(columns), columnGap: 0, placement: placement,
            orderTolerance: tolerance)
    }

    func engine(_ columns: Int, placement: PlacementOrder = .shortestFirst, tolerance: Double = 0) throws
        -> WaterfallEngine
    {
        try WaterfallEngine(configuration: configuration(columns, placement: placement, tolerance: tolerance))
    }

    /// A photo 100 wide and `height` tall gives a cell exactly that tall in a 100-px column.
    func item(_ height: Double, span: ColumnSpan = .single) -> WaterfallItem {
        WaterfallItem(photoSize: Size(width: 100, height: height), annotationHeight: 0, span: span)
    }

    /// A cell exactly `height` tall across `span` 100-px columns with no gaps.
    func cell(_ height: Double, span: Int) -> WaterfallItem {
        WaterfallItem(
            photoSize: Size(width: Double(100 * span), height: height), annotationHeight: 0, span: .columns(span))
    }

    @Test func roundRobinsIgnoreHeights() throws {
        var leftToRight = try engine(3, placement: .leftToRight)
        #expect([300, 10, 10, 10, 10].map { leftToRight.place(item($0)).column } == [0, 1, 2, 0, 1])
        var rightToLeft = try engine(3, placement: .rightToLeft)
        #expect([300, 10, 10, 10].map { rightToLeft.place(item($0)).column } == [2, 1, 0, 2])
    }

    @Test func toleranceTakesTheFirstColumnCloseEnoughToTheShortest() throws {
        var strict = try engine(3)
        var tolerant = try engine(3, tolerance: 25)
        for height in [120.0, 100, 110] {
            _ = strict.place(item(height))
            _ = tolerant.place(item(height))
        }
        // Heights are now [120, 100, 110]: strict takes column 1; within 25 of 100, column 0 comes first.
        #expect(strict.place(item(10)).column == 1)
        #expect(tolerant.place(item(10)).column == 0)
    }

    @Test func aWideItemTakesTheWindowWhoseTallestColumnIsLowest() throws {
        var layout = try engine(4)
        for height in [50.0, 200, 60, 70] { _ = layout.place(item(height)) }
        // Windows of two: [50,200]→200, [200,60]→200, [60,70]→70: columns 2 and 3, at 70.
        let wide = layout.place(item(100, span: .columns(2)))
        #expect(wide.column == 2 && wide.columnSpan == 2)
        // The square photo is fitted to the two-column width: 200 × 200.
        #expect(wide.frame == DeviceRect(x: 200, y: 70, width: 200, height: 200))
        #expect(layout.state.columnHeights == [50, 200, 270, 270])
    }

    @Test func aFullWidthItemStartsBelowEveryColumn() throws {
        var layout = try engine(3)
        for height in [50.0, 80, 30] { _ = layout.place(item(height)) }
        let banner = layout.place(item(40, span: .fullWidth))
        #expect(banner.frame == DeviceRect(x: 0, y: 80, width: 300, height: 40 * 3))
        #expect(layout.state.columnHeights == [200, 200, 200])
    }

    @Test func spansAreClampedToTheColumnCount() throws {
        var layout = try engine(2)
        #expect(layout.place(item(100, span: .columns(5))).columnSpan == 2)
    }

    @Test func rightToLeftSpansCoverTheirColumnsOnScreen() throws {
        var layout = try WaterfallEngine(
            configuration: WaterfallConfiguration(
                containerWidth: 300, columns: .fixed(3), columnGap: 0, direction: .rightToLeft))
        let wide = layout.place(item(100, span: .columns(2)))
        // Reading columns 0 and 1 are the two rightmost.
        #expect(wide.column == 0 && wide.frame.x == 100 && wide.frame.width == 200)
    }

    /// Cells (height, span) in 100-px columns, and the columns Chromium gives them.
    struct GridLanesCase: Sendable, CustomStringConvertible {
        var columns: Int
        var tolerance: Double
        var cells: [[Int]]
        var expected: [Int]
        var description: String { "\(columns) columns, tolerance \(tolerance): \(cells)" }
    }

    /// The columns Chromium 156 gives the same cells in a `display: grid-lanes` container of 100-px tracks with no
    /// gaps (checked by hand with `--enable-experimental-web-platform-features`). The last cell goes elsewhere under
    /// shortest-first in each: an exact tie, a near tie within the tolerance, a spanning item.
    static let gridLanesCases: [GridLanesCase] = [
        GridLanesCase(
            columns: 4, tolerance: 0, cells: [[10, 1], [20, 1], [10, 1], [30, 1], [15, 1], [15, 1], [5, 1], [1, 1]],
            expected: [0, 1, 2, 3, 0, 2, 1, 2]),
        GridLanesCase(
            columns: 3, tolerance: 15, cells: [[100, 1], [120, 1], [110, 1], [5, 1], [1, 1]],
            expected: [0, 1, 2, 0, 1]),
        GridLanesCase(
            columns: 3, tolerance: 14.99, cells: [[100, 1], [120, 1], [110, 1], [5, 1], [1, 1]],
            expected: [0, 1, 2, 0, 2]),
        GridLanesCase(columns: 4, tolerance: 0, cells: [[10, 2], [20, 1], [10, 2], [30, 2]], expected: [0, 2, 0, 2]),
    ]

    @Test(arguments: gridLanesCases)
    func gridLanesTakesThePossibleWindowAfterThePreviousItem(_ example: GridLanesCase) throws {
        var gridLanes = try engine(example.columns, placement: .gridLanes, tolerance: example.tolerance)
        var shortestFirst = try engine(example.columns, tolerance: example.tolerance)
        var shortestFirstColumns: [Int] = []
        for (index, cell) in example.cells.enumerated() {
            let item = self.cell(Double(cell[0]), span: cell[1])
            let placed = gridLanes.place(item)
            #expect(placed.column == example.expected[index], "cell \(index)")
            #expect(placed.frame.height == cell[0])
            shortestFirstColumns.append(shortestFirst.place(item).column)
        }
        #expect(shortestFirstColumns.dropLast() == example.expected.dropLast())
        #expect(shortestFirstColumns.last != example.expected.last)
    }

    /// More cells Chromium placed, where the cursor wraps past the last window of a spanning item.
    @Test func gridLanesWrapsPastTheLastWindow() throws {
        func columns(_ count: Int, _ cells: [(height: Double, span: Int)]) throws -> [Int] {
            var layout = try engine(count, placement: .gridLanes)
            return cells.map { layout.place(cell($0.height, span: $0.span)).column }
        }
        #expect(
            try columns(4, [(20, 1), (10, 1), (10, 1), (10, 1), (10, 1), (5, 2), (1, 1), (1, 1)])
                == [0, 1, 2, 3, 1, 2, 2, 3])
        #expect(try columns(3, [(10, 1), (10, 2), (10, 2), (10, 1), (5, 2)]) == [0, 1, 0, 2, 0])
    }

    @Test func gridLanesToleranceAdmitsWhatChromiumsLayoutUnitsAdmit() throws {
        // 10.3 px is 659/64 px in LayoutUnits: at scale 2 a top 20 device pixels (10 px) above the lowest is
        // possible, 21 is not; rounding to the nearest device pixel would admit 21.
        let configuration = WaterfallConfiguration(
            containerWidth: 300, columns: .fixed(3), scale: 2, placement: .gridLanes, orderTolerance: 10.3)
        #expect(try WaterfallGrid(configuration).orderTolerance == 20)
        var shortestFirst = configuration
        shortestFirst.placement = .shortestFirst
        #expect(try WaterfallGrid(shortestFirst).orderTolerance == 21)
    }

    @Test func gridLanesResumesFromItsCursor() throws {
        var whole = try engine(4, placement: .gridLanes)
        var first = try engine(4, placement: .gridLanes)
        let heights: [Double] = [10, 20, 10, 30, 15, 15, 5, 1, 7, 7, 7]
        let expected = heights.map { whole.place(item($0)) }
        var frames = heights[..<6].map { first.place(item($0)) }
        #expect(first.state.placementCursor == 3, "the previous item took column 2")
        var second = try WaterfallEngine(
            configuration: configuration(4, placement: .gridLanes), resumingFrom: first.state)
        frames += heights[6...].map { second.place(item($0)) }
        #expect(frames == expected)
    }

    /// Regression: a rectangle inside the gutter between two columns missed the item spanning both.
    @Test func queriesFindSpanningItemsThroughGutters() throws {
        var layout = try WaterfallEngine(
            configuration: WaterfallConfiguration(containerWidth: 320, columns: .fixed(3), columnGap: 10))
        let wide = layout.place(
            WaterfallItem(photoSize: Size(width: 2, height: 1), annotationHeight: 0, span: .columns(2)))
        var index = WaterfallIndex(grid: layout.grid)
        index.insert(wide)
        // Column 0 is x 0..<100, the gutter 100..<110, column 1 110..<210.
        #expect(index.items(intersecting: DeviceRect(x: 102, y: 5, width: 4, height: 4)) == [0])
        #expect(index.items(intersecting: DeviceRect(x: 215, y: 5, width: 4, height: 4)) == [])
    }
}
