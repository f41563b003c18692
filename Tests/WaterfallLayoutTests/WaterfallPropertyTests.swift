import PropertyBased
import Testing

@testable import WaterfallLayout

/// A generated layout problem. Every value derives from a few integers, so the property library can shrink a
/// failure down to a small configuration and a short item list.
struct LayoutCase: CustomStringConvertible {
    var configuration: WaterfallConfiguration
    var items: [WaterfallItem]

    init(settings: Int, itemCodes: [Int]) {
        var bits = UInt64(truncatingIfNeeded: settings)
        func take(_ count: UInt64) -> Int {
            defer { bits /= count }
            return Int(bits % count)
        }
        let placement = PlacementOrder.allCases[take(UInt64(PlacementOrder.allCases.count))]
        configuration = WaterfallConfiguration(
            // At least 300 px: room for 7 columns even with the largest insets, gaps and padding below, so every
            // generated case is a layout the grid accepts and no case is silently skipped.
            containerWidth: Double(300 + take(1300)),
            columns: .fixed(1 + take(7)),
            insets: Insets(top: Double(take(17)), left: Double(take(17)), bottom: Double(take(17)), right: Double(take(17))),
            columnGap: Double(take(21)),
            rowGap: Double(take(21)),
            cellPadding: Double(take(9)),
            annotationSpacing: Double(take(9)),
            maximumPhotoHeight: take(2) == 0 ? nil : Double(200 + take(400)),
            minimumPhotoHeight: Double(take(3) * 40),
            scale: [1, 2, 3, 1.5][take(4)],
            direction: take(2) == 0 ? .leftToRight : .rightToLeft,
            placement: placement,
            orderTolerance: take(2) == 0 ? 0 : Double(take(120)))
        items = itemCodes.map { code in
            var bits = UInt64(truncatingIfNeeded: code)
            func take(_ count: UInt64) -> Int {
                defer { bits /= count }
                return Int(bits % count)
            }
            let width = Double(1 + take(5000))
            let height = Double(1 + take(5000))
            let annotation = take(3) == 0 ? 0 : Double(take(12_000)) / 100
            let spanChoice = take(20)
            let span: ColumnSpan = spanChoice == 0 ? .fullWidth : spanChoice <= 2 ? .columns(2 + take(3)) : .single
            return WaterfallItem(photoSize: Size(width: width, height: height), annotationHeight: annotation, span: span)
        }
    }

    var description: String { "\(configuration.columns) \(configuration.placement) tol \(configuration.orderTolerance), \(items.count) items" }

    /// Lays the items out, checking before each placement that the engine picks the column its rule names.
    func layOut(checkingRules: Bool = false) throws -> (WaterfallEngine, [PlacedItem]) {
        var engine = try WaterfallEngine(configuration: configuration)
        var placed: [PlacedItem] = []
        for item in items {
            let heights = engine.state.columnHeights
            let span = engine.grid.columnCount(for: item.span)
            let result = engine.place(item)
            if checkingRules { Self.checkRule(result, heights: heights, span: span, grid: engine.grid, previous: placed) }
            placed.append(result)
        }
        return (engine, placed)
    }

    static func checkRule(_ item: PlacedItem, heights: [Int], span: Int, grid: WaterfallGrid, previous: [PlacedItem]) {
        #expect(item.columnSpan == span)
        let window = item.column..<(item.column + span)
        #expect(item.frame.y == heights[window].max()!)
        if grid.placement == .gridLanes {
            // Every span alike: the first window within the tolerance of the lowest, from the column after the
            // previous item's window, wrapping; from window 0 when that column starts no window.
            let tops = (0...(heights.count - span)).map { heights[$0..<($0 + span)].max()! }
            let limit = tops.min()! + grid.orderTolerance
            let cursor = previous.last.map { $0.column + $0.columnSpan } ?? 0
            let searchOrder = cursor < tops.count ? Array(cursor..<tops.count) + Array(0..<cursor) : Array(tops.indices)
            #expect(item.column == searchOrder.first { tops[$0] <= limit }!)
            return
        }
        if span > 1 {
            // The window whose tallest column is lowest, the first on ties.
            let tops = (0...(heights.count - span)).map { heights[$0..<($0 + span)].max()! }
            #expect(item.column == tops.firstIndex(of: tops.min()!)!)
            return
        }
        switch grid.placement {
        case .shortestFirst:
            let limit = heights.min()! + grid.orderTolerance
            #expect(item.column == heights.firstIndex { $0 <= limit }!)
            if grid.orderTolerance == 0 {
                #expect(item.column == heights.firstIndex(of: heights.min()!)!)
            }
        case .gridLanes:
            break  // Checked above, for every span.
        case .leftToRight, .rightToLeft:
            let step = grid.placement == .leftToRight ? 1 : -1
            let start = grid.placement == .leftToRight ? 0 : grid.columnCount - 1
            let expected = previous.last.map { last in
                let edge = grid.placement == .leftToRight ? last.column + last.columnSpan - 1 : last.column
                return (edge + step + grid.columnCount) % grid.columnCount
            } ?? start
            #expect(item.column == expected)
        }
    }
}

let layoutCases = Gen.int(in: 0...Int.max).array(of: 0...160)

@Suite struct WaterfallPropertyTests {
    @Test func everyItemIsPlacedOnceWithoutOverlapByItsRule() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            let layout = LayoutCase(settings: settings, itemCodes: codes)
            let (engine, placed) = try layout.layOut(checkingRules: true)
            #expect(placed.map(\.index) == Array(0..<codes.count))
            for (i, a) in placed.enumerated() {
                #expect(a.frame.x >= 0 && a.frame.maxX <= engine.grid.containerWidth)
                #expect(a.photoFrame.maxY <= a.annotationFrame.y && a.annotationFrame.maxY <= a.frame.maxY)
                for b in placed[(i + 1)...] {
                    let overlaps = a.frame.x < b.frame.maxX && b.frame.x < a.frame.maxX
                        && a.frame.y < b.frame.maxY && b.frame.y < a.frame.maxY
                    #expect(!overlaps, "\(layout): items \(a.index) and \(b.index) overlap")
                }
            }
        }
    }

    /// DESIGN.md's promise that pages rely on. It holds for one-column items in the strict waterfall only: a
    /// spanning item sits at its window's tallest column, so the next one-column item may start above it, and
    /// tolerance and round robins trade this order away on purpose.
    @Test func strictWaterfallTopsNeverDecrease() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            var layout = LayoutCase(settings: settings, itemCodes: codes)
            layout.configuration.placement = .shortestFirst
            layout.configuration.orderTolerance = 0
            for index in layout.items.indices { layout.items[index].span = .single }
            let (_, placed) = try layout.layOut()
            for (a, b) in zip(placed, placed.dropFirst()) { #expect(b.frame.y >= a.frame.y) }
        }
    }

    @Test func layoutIsDeterministic() async {
        await propertyCheck(count: 60, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            let layout = LayoutCase(settings: settings, itemCodes: codes)
            let (first, a) = try layout.layOut()
            let (second, b) = try layout.layOut()
            #expect(a == b)
            #expect(first.state == second.state)
        }
    }

    @Test func resumingAnywhereGivesTheSameFrames() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max), layoutCases, Gen.int(in: 0...160)) {
            settings, codes, cut in
            let layout = LayoutCase(settings: settings, itemCodes: codes)
            let (whole, expected) = try layout.layOut()
            let cut = min(cut, codes.count)
            var first = try WaterfallEngine(configuration: layout.configuration)
            var frames = layout.items[..<cut].map { first.place($0) }
            var second = try WaterfallEngine(configuration: layout.configuration, resumingFrom: first.state)
            frames += layout.items[cut...].map { second.place($0) }
            #expect(frames == expected)
            #expect(second.state == whole.state)
        }
    }

    @Test func elementsInRectEqualABruteForceScan() async {
        await propertyCheck(
            count: 100, input: Gen.int(in: 0...Int.max), layoutCases, Gen.int(in: 0...Int.max)
        ) { settings, codes, rectCode in
            let layout = LayoutCase(settings: settings, itemCodes: codes)
            let (engine, placed) = try layout.layOut()
            var index = WaterfallIndex(grid: engine.grid)
            for item in placed { index.insert(item) }
            var bits = UInt64(truncatingIfNeeded: rectCode)
            func take(_ count: Int) -> Int {
                defer { bits /= UInt64(count) }
                return Int(bits % UInt64(count))
            }
            let height = max(1, engine.contentSize.height)
            for _ in 0..<4 {
                let rect = DeviceRect(
                    x: take(engine.grid.containerWidth), y: take(height), width: 1 + take(engine.grid.containerWidth),
                    height: 1 + take(height))
                let expected = placed.filter {
                    $0.frame.x < rect.maxX && rect.x < $0.frame.maxX && $0.frame.y < rect.maxY && rect.y < $0.frame.maxY
                }.map(\.index)
                #expect(index.items(intersecting: rect) == expected, "\(layout): \(rect)")
            }
            for item in placed { #expect(index.frame(ofItem: item.index) == item.frame) }
            #expect(index.frame(ofItem: placed.count) == nil)
        }
    }
}
