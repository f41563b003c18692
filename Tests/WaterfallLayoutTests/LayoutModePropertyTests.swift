import PropertyBased
import Testing

@testable import WaterfallLayout

/// What a layout run produced, in the order the engine produced it.
enum LayoutEvent: Hashable {
    case item(PlacedItem)
    case header(DeviceRect?)
    case section(SectionFrames)

    /// The rectangles that must not overlap one another: cells, headers and footers.
    var solidRects: [DeviceRect] {
        switch self {
        case .item(let item): [item.frame]
        case .header(let header): header.map { [$0] } ?? []
        case .section(let frames): frames.footer.map { [$0] } ?? []
        }
    }
}

/// One step of a generated script: an item, or a section or row boundary.
enum LayoutStep {
    case item(WaterfallItem)
    case begin(header: Double)
    case end(footer: Double)
    /// Flow only: end the row (waterfall scripts have none).
    case breakRow

    /// Turns generated codes into steps: about one in sixteen starts a section, one ends one, and in flow scripts
    /// one breaks the row.
    static func script(codes: [Int], items: [WaterfallItem], withRowBreaks: Bool) -> [LayoutStep] {
        zip(codes, items).map { code, item in
            switch code % 16 {
            case 0: .begin(header: Double(code / 16 % 50))
            case 1: .end(footer: Double(code / 16 % 30))
            case 2 where withRowBreaks: .breakRow
            default: .item(item)
            }
        }
    }
}

func rectsOverlap(_ a: DeviceRect, _ b: DeviceRect) -> Bool {
    a.x < b.maxX && b.x < a.maxX && a.y < b.maxY && b.y < a.maxY
}

/// Checks that no two solid rectangles of a run share area.
func expectNoOverlap(_ events: [LayoutEvent], _ label: String) {
    let rects = events.flatMap(\.solidRects).filter { $0.width > 0 && $0.height > 0 }
    for (i, a) in rects.enumerated() {
        for b in rects[(i + 1)...] where rectsOverlap(a, b) {
            Issue.record("\(label): \(a) and \(b) overlap")
            return
        }
    }
}

func placedItems(_ events: [LayoutEvent]) -> [PlacedItem] {
    events.compactMap { if case .item(let item) = $0 { item } else { nil } }
}

// MARK: Waterfall with sections, on both axes

/// A waterfall case with sections: the generated configuration of ``LayoutCase`` plus section insets and a
/// decoration outset, on the given axis.
struct SectionedCase: CustomStringConvertible {
    var configuration: WaterfallConfiguration
    var steps: [LayoutStep]

    init(settings: Int, codes: [Int], axis: LayoutAxis = .vertical) {
        let base = LayoutCase(settings: settings, itemCodes: codes)
        var configuration = base.configuration
        var bits = UInt64(truncatingIfNeeded: settings).multipliedFullWidth(by: 0x9E37_79B9_7F4A_7C15).low
        func take(_ count: UInt64) -> Int {
            defer { bits /= count }
            return Int(bits % count)
        }
        configuration.sectionInsets = Insets(
            top: Double(take(9)), left: Double(take(9)), bottom: Double(take(9)), right: Double(take(9)))
        configuration.decorationOutset = Double(take(7))
        if axis == .horizontal {
            configuration.axis = .horizontal
            configuration.direction = .leftToRight
            configuration.containerHeight = configuration.containerWidth
            configuration.maximumPhotoWidth = configuration.maximumPhotoHeight
            configuration.minimumPhotoWidth = configuration.minimumPhotoHeight
        }
        self.configuration = configuration
        steps = LayoutStep.script(codes: codes, items: base.items, withRowBreaks: false)
    }

    var description: String {
        "\(configuration.axis) \(configuration.columns) \(configuration.placement), \(steps.count) steps"
    }

    static func run(_ engine: inout WaterfallEngine, _ steps: ArraySlice<LayoutStep>) -> [LayoutEvent] {
        steps.map { step in
            switch step {
            case .item(let item): .item(engine.place(item))
            case .begin(let header): .header(engine.beginSection(header: header))
            case .end(let footer): .section(engine.endSection(footer: footer))
            case .breakRow: fatalError("waterfall scripts have no row breaks")
            }
        }
    }

    func layOut() throws -> (WaterfallEngine, [LayoutEvent]) {
        var engine = try WaterfallEngine(configuration: configuration)
        let events = Self.run(&engine, steps[...])
        return (engine, events)
    }
}

/// The vertical configuration with x and y exchanged: a horizontal layout that must give the transposed frames.
func transposed(_ vertical: WaterfallConfiguration) -> WaterfallConfiguration {
    var horizontal = vertical
    func swap(_ insets: Insets) -> Insets {
        Insets(top: insets.left, left: insets.top, bottom: insets.right, right: insets.bottom)
    }
    horizontal.axis = .horizontal
    horizontal.containerHeight = vertical.containerWidth
    horizontal.containerWidth = 1
    horizontal.insets = swap(vertical.insets)
    horizontal.sectionInsets = swap(vertical.sectionInsets)
    horizontal.maximumPhotoWidth = vertical.maximumPhotoHeight
    horizontal.minimumPhotoWidth = vertical.minimumPhotoHeight
    horizontal.maximumPhotoHeight = nil
    horizontal.minimumPhotoHeight = 0
    return horizontal
}

@Suite struct SectionedWaterfallPropertyTests {
    @Test(arguments: LayoutAxis.allCases)
    func everyItemOnceAndNothingOverlaps(axis: LayoutAxis) async {
        await propertyCheck(count: 120, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            let layout = SectionedCase(settings: settings, codes: codes, axis: axis)
            let (engine, events) = try layout.layOut()
            let items = placedItems(events)
            #expect(items.map(\.index) == Array(0..<items.count))
            expectNoOverlap(events, layout.description)
            let size = engine.contentSize
            for item in items {
                #expect(item.frame.x >= 0 && item.frame.y >= 0, "\(layout)")
                #expect(item.frame.maxX <= size.width && item.frame.maxY <= size.height, "\(layout)")
            }
            // Every section's items lie inside it, between its header and its footer.
            var sectionStart = 0
            for event in events {
                guard case .section(let frames) = event else { continue }
                for item in items[frames.items] {
                    let start = axis == .vertical ? item.frame.y : item.frame.x
                    let end = axis == .vertical ? item.frame.maxY : item.frame.maxX
                    #expect(
                        start >= frames.start + (frames.header.map { axis == .vertical ? $0.height : $0.width } ?? 0))
                    #expect(end <= frames.end - (frames.footer.map { axis == .vertical ? $0.height : $0.width } ?? 0))
                }
                #expect(frames.start >= sectionStart)
                sectionStart = frames.end
            }
        }
    }

    @Test(arguments: LayoutAxis.allCases)
    func resumingAtAnyStepGivesTheSameRun(axis: LayoutAxis) async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max), layoutCases, Gen.int(in: 0...160)) {
            settings, codes, cut in
            let layout = SectionedCase(settings: settings, codes: codes, axis: axis)
            let (whole, expected) = try layout.layOut()
            let cut = min(cut, layout.steps.count)
            var first = try WaterfallEngine(configuration: layout.configuration)
            var events = SectionedCase.run(&first, layout.steps[..<cut])
            var second = try WaterfallEngine(configuration: layout.configuration, resumingFrom: first.state)
            events += SectionedCase.run(&second, layout.steps[cut...])
            #expect(events == expected, "\(layout) cut at \(cut)")
            #expect(second.state == whole.state)
            #expect(try layout.layOut().1 == expected, "not deterministic")
        }
    }

    /// The oracle for the horizontal axis: lay out the transposed photos horizontally, transpose the frames back,
    /// and they are the vertical layout's.
    @Test func horizontalIsVerticalWithTheAxesSwapped() async {
        await propertyCheck(count: 120, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            var vertical = SectionedCase(settings: settings, codes: codes)
            vertical.configuration.direction = .leftToRight
            // Annotations sit below the photo on both axes, so only bare photos transpose exactly.
            for index in vertical.steps.indices {
                if case .item(var item) = vertical.steps[index] {
                    item.annotationHeight = 0
                    vertical.steps[index] = .item(item)
                }
            }
            var horizontal = vertical
            horizontal.configuration = transposed(vertical.configuration)
            horizontal.steps = vertical.steps.map { step in
                guard case .item(var item) = step else { return step }
                item.photoSize = Size(width: item.photoSize.height, height: item.photoSize.width)
                return .item(item)
            }
            let (verticalEngine, expected) = try vertical.layOut()
            let (horizontalEngine, events) = try horizontal.layOut()
            #expect(events.count == expected.count)
            for (event, original) in zip(events, expected) {
                switch (event, original) {
                case (.item(let item), .item(let reference)):
                    #expect(item.frame.transposed == reference.frame, "\(vertical) item \(reference.index)")
                    #expect(item.photoSlot.transposed == reference.photoSlot)
                    #expect(item.photoFrame.transposed == reference.photoFrame)
                    #expect(item.column == reference.column && item.columnSpan == reference.columnSpan)
                case (.header(let header), .header(let reference)):
                    #expect(header?.transposed == reference)
                case (.section(let frames), .section(let reference)):
                    #expect(
                        frames.header?.transposed == reference.header && frames.footer?.transposed == reference.footer)
                    #expect(frames.decoration?.transposed == reference.decoration)
                    #expect(
                        frames.start == reference.start && frames.end == reference.end
                            && frames.items == reference.items)
                default:
                    Issue.record("\(vertical): events differ: \(event) and \(original)")
                }
            }
            #expect(horizontalEngine.contentSize.width == verticalEngine.contentSize.height)
            #expect(horizontalEngine.contentSize.height == verticalEngine.contentSize.width)
        }
    }

    @Test(arguments: LayoutAxis.allCases)
    func elementsInRectEqualABruteForceScan(axis: LayoutAxis) async {
        await propertyCheck(count: 80, input: Gen.int(in: 0...Int.max), layoutCases, Gen.int(in: 0...Int.max)) {
            settings, codes, rectCode in
            let layout = SectionedCase(settings: settings, codes: codes, axis: axis)
            let (engine, events) = try layout.layOut()
            let items = placedItems(events)
            var index = WaterfallIndex(grid: engine.grid)
            for item in items { index.insert(item) }
            expectQueriesMatch(index, items, size: engine.contentSize, rectCode: rectCode, label: layout.description)
        }
    }
}

/// Four random rectangles inside the content: the index finds exactly what a scan of every frame finds.
func expectQueriesMatch(
    _ index: WaterfallIndex, _ items: [PlacedItem], size: (width: Int, height: Int), rectCode: Int, label: String
) {
    var bits = UInt64(truncatingIfNeeded: rectCode)
    func take(_ count: Int) -> Int {
        defer { bits /= UInt64(count) }
        return Int(bits % UInt64(count))
    }
    let width = max(1, size.width)
    let height = max(1, size.height)
    for _ in 0..<4 {
        let rect = DeviceRect(x: take(width), y: take(height), width: 1 + take(width), height: 1 + take(height))
        let expected = items.filter { rectsOverlap($0.frame, rect) }.map(\.index)
        #expect(index.items(intersecting: rect) == expected, "\(label): \(rect)")
    }
    for item in items { #expect(index.frame(ofItem: item.index) == item.frame) }
}

// MARK: Flow

/// A generated flow layout problem.
struct FlowCase: CustomStringConvertible {
    var configuration: FlowConfiguration
    var steps: [LayoutStep]

    init(settings: Int, codes: [Int]) {
        var bits = UInt64(truncatingIfNeeded: settings)
        func take(_ count: UInt64) -> Int {
            defer { bits /= count }
            return Int(bits % count)
        }
        configuration = FlowConfiguration(
            containerWidth: Double(200 + take(1200)),
            insets: Insets(
                top: Double(take(17)), left: Double(take(17)), bottom: Double(take(17)), right: Double(take(17))),
            itemGap: Double(take(21)),
            rowGap: Double(take(21)),
            cellPadding: Double(take(9)),
            annotationSpacing: Double(take(9)),
            photoHeight: Double(20 + take(200)),
            alignment: FlowAlignment.allCases[take(5)],
            follow: take(2) == 0,
            sectionInsets: Insets(
                top: Double(take(9)), left: Double(take(9)), bottom: Double(take(9)), right: Double(take(9))),
            decorationOutset: Double(take(7)),
            scale: [1, 2, 3, 1.5][take(4)])
        let items = LayoutCase(settings: 0, itemCodes: codes).items
        steps = LayoutStep.script(codes: codes, items: items, withRowBreaks: true)
    }

    var description: String {
        "flow \(configuration.alignment) follow \(configuration.follow) width \(configuration.containerWidth), "
            + "\(steps.count) steps"
    }

    static func run(_ engine: inout FlowEngine, _ steps: ArraySlice<LayoutStep>) -> [LayoutEvent] {
        var events: [LayoutEvent] = []
        for step in steps {
            switch step {
            case .item(let item): events += engine.place(item).map(LayoutEvent.item)
            case .begin(let header):
                let begun = engine.beginSection(header: header)
                events += begun.items.map(LayoutEvent.item) + [.header(begun.header)]
            case .end(let footer):
                let ended = engine.endSection(footer: footer)
                events += ended.items.map(LayoutEvent.item) + [.section(ended.section)]
            case .breakRow: events += engine.breakRow().map(LayoutEvent.item)
            }
        }
        return events
    }

    /// The whole run, the open row placed at the end.
    func layOut() throws -> (FlowEngine, [LayoutEvent]) {
        var engine = try FlowEngine(configuration: configuration)
        var events = Self.run(&engine, steps[...])
        events += engine.finish().map(LayoutEvent.item)
        return (engine, events)
    }

    /// For each item index, the step that gives it.
    var stepOfItem: [Int] { steps.indices.filter { if case .item = steps[$0] { true } else { false } } }
}

@Suite struct FlowPropertyTests {
    @Test func everyItemOnceInOrderAndNothingOverlaps() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            let layout = FlowCase(settings: settings, codes: codes)
            let (engine, events) = try layout.layOut()
            let items = placedItems(events)
            #expect(items.map(\.index) == Array(0..<layout.stepOfItem.count), "\(layout)")
            expectNoOverlap(events, layout.description)
            for item in items {
                #expect(item.frame.x >= engine.grid.rowStart && item.frame.maxX <= engine.grid.rowEnd, "\(layout)")
                #expect(item.frame.maxY <= engine.contentSize.height)
                #expect(item.photoFrame.maxY <= item.annotationFrame.y && item.annotationFrame.maxY <= item.frame.maxY)
                #expect(item.annotationFrame.width == engine.contentWidth(for: Self.photo(of: item, in: layout)))
            }
        }
    }

    static func photo(of item: PlacedItem, in layout: FlowCase) -> Size {
        let step = layout.steps[layout.stepOfItem[item.index]]
        guard case .item(let source) = step else { fatalError("not an item step") }
        return source.photoSize
    }

    /// Rows without follow mode: greedy (the next item did not fit, unless a break ended the row), item gaps as
    /// configured (at least that when justified), and each alignment's edges.
    @Test func rowsAreGreedyAndAligned() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max), layoutCases) { settings, codes in
            var layout = FlowCase(settings: settings, codes: codes)
            layout.configuration.follow = false
            let (engine, events) = try layout.layOut()
            let grid = engine.grid
            let items = placedItems(events)
            // A row ends at a break when a boundary step comes between its last item and the next one.
            let stepOfItem = layout.stepOfItem
            func breaksAfter(_ index: Int) -> Bool {
                guard index + 1 < stepOfItem.count else { return true }
                return stepOfItem[index + 1] != stepOfItem[index] + 1
            }
            var start = 0
            while start < items.count {
                var end = start + 1
                while end < items.count, items[end].frame.y == items[start].frame.y { end += 1 }
                let row = Array(items[start..<end])
                let onScreen = row.sorted { $0.frame.x < $1.frame.x }
                let gaps = zip(onScreen, onScreen.dropFirst()).map { $1.frame.x - $0.frame.maxX }
                let used = row.map(\.frame.width).reduce(0, +) + grid.itemGap * (row.count - 1)
                let isLast = breaksAfter(row.last!.index)
                if !isLast {
                    #expect(used + grid.itemGap + items[end].frame.width > grid.rowWidth, "\(layout): row not full")
                }
                #expect(row.map(\.column) == Array(0..<row.count))
                let left = onScreen.first!.frame.x - grid.rowStart
                let right = grid.rowEnd - onScreen.last!.frame.maxX
                switch grid.alignment {
                case .start:
                    #expect(left == 0)
                case .end:
                    #expect(right == 0)
                case .dataEnd:
                    #expect(row.first!.frame.maxX == grid.rowEnd)
                    #expect(onScreen.map(\.index) == row.map(\.index).reversed())
                case .center:
                    #expect(right - left == 0 || right - left == 1, "\(layout): margins \(left) and \(right)")
                case .justified:
                    #expect(left == 0)
                    if !isLast && row.count > 1 {
                        #expect(right == 0, "\(layout): justified row ends \(right) px short")
                    } else {
                        #expect(gaps.allSatisfy { $0 == grid.itemGap })
                    }
                }
                if grid.alignment != .justified { #expect(gaps.allSatisfy { $0 == grid.itemGap }) }
                #expect(gaps.allSatisfy { $0 >= grid.itemGap })
                start = end
            }
        }
    }

    @Test func resumingAtARowBoundaryGivesTheSameRun() async {
        await propertyCheck(count: 150, input: Gen.int(in: 0...Int.max), layoutCases, Gen.int(in: 0...160)) {
            settings, codes, cut in
            let layout = FlowCase(settings: settings, codes: codes)
            let (whole, expected) = try layout.layOut()
            let cut = min(cut, layout.steps.count)
            var first = try FlowEngine(configuration: layout.configuration)
            var events = FlowCase.run(&first, layout.steps[..<cut])
            // The state is the one before the open row: its items are given again.
            let state = first.state
            let resumeStep = first.pendingCount == 0 ? cut : layout.stepOfItem[state.nextIndex]
            var second = try FlowEngine(configuration: layout.configuration, resumingFrom: state)
            events += FlowCase.run(&second, layout.steps[resumeStep...])
            events += second.finish().map(LayoutEvent.item)
            #expect(events == expected, "\(layout) cut at \(cut)")
            #expect(second.state == whole.state)
            #expect(try layout.layOut().1 == expected, "not deterministic")
        }
    }

    @Test func elementsInRectEqualABruteForceScan() async {
        await propertyCheck(count: 100, input: Gen.int(in: 0...Int.max), layoutCases, Gen.int(in: 0...Int.max)) {
            settings, codes, rectCode in
            let layout = FlowCase(settings: settings, codes: codes)
            let (engine, events) = try layout.layOut()
            let items = placedItems(events)
            var index = WaterfallIndex(axis: .vertical)
            for item in items { index.insert(item) }
            expectQueriesMatch(index, items, size: engine.contentSize, rectCode: rectCode, label: layout.description)
        }
    }
}
