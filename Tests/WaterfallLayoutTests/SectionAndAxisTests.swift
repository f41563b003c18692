import Testing

@testable import WaterfallLayout

@Suite struct SectionTests {
    /// 3 columns of 83 px: 300 wide, insets 10, section insets 5 at the sides, gaps 10.
    static let configuration = WaterfallConfiguration(
        containerWidth: 300, columns: .fixed(3), insets: Insets(all: 10), columnGap: 10, rowGap: 10,
        sectionInsets: Insets(top: 5, left: 5, bottom: 7, right: 5), decorationOutset: 4)

    func engine() throws -> WaterfallEngine { try WaterfallEngine(configuration: Self.configuration) }

    /// A photo 83 wide and `height` tall gives a cell exactly that tall in an 83-px column.
    func item(_ height: Double) -> WaterfallItem {
        WaterfallItem(photoSize: Size(width: 83, height: height), annotationHeight: 0)
    }

    @Test func sectionInsetsNarrowTheColumns() throws {
        let grid = try engine().grid
        // (300 - 20 - 10 - 2·10) / 3 = 83.3 → 83; the first column starts after both left insets.
        #expect(grid.columnWidth == 83)
        #expect(grid.columnX == [15, 108, 201])
        #expect(grid.contentWidth == 83)
    }

    @Test func sectionsAreFullWidthBreaksWithHeadersFootersAndDecorations() throws {
        var layout = try engine()
        #expect(layout.state.columnHeights == [15, 15, 15])
        let first = [40.0, 60, 20].map { layout.place(item($0)) }
        #expect(first.map(\.frame.y) == [15, 15, 15])
        let implicit = layout.endSection(footer: 12)
        // Items end at 15 + 60 = 75; the section's bottom inset 7, then the footer.
        #expect(implicit.index == 0 && implicit.items == 0..<3 && implicit.header == nil)
        #expect(implicit.footer == DeviceRect(x: 10, y: 82, width: 280, height: 12))
        #expect(implicit.decoration == DeviceRect(x: 11, y: 11, width: 277, height: 68))
        #expect(implicit.start == 10 && implicit.end == 94)

        let header = layout.beginSection(header: 30)
        #expect(header == DeviceRect(x: 10, y: 94, width: 280, height: 30))
        #expect(layout.state.columnHeights == [129, 129, 129])
        let next = layout.place(item(50))
        #expect(next.frame == DeviceRect(x: 15, y: 129, width: 83, height: 50))
        let second = layout.endSection()
        #expect(second.index == 1 && second.items == 3..<4)
        #expect(second.header == header && second.footer == nil)
        #expect(second.start == 94 && second.end == 186)
        #expect(layout.contentSize.height == 196)
    }

    @Test func beginSectionEndsAnOpenSectionAndKeepsAnEmptyOne() throws {
        var layout = try engine()
        // Nothing placed yet: the first explicit section is section 0, at the top inset.
        #expect(layout.beginSection(header: 20) == DeviceRect(x: 10, y: 10, width: 280, height: 20))
        #expect(layout.state.section.index == 0)
        // An empty explicit section ends after its header and both section insets.
        #expect(layout.beginSection() == nil)
        #expect(layout.state.section.index == 1)
        #expect(layout.state.section.start == 10 + 20 + 5 + 7)
        _ = layout.place(item(10))
        let frames = layout.endSection()
        #expect(frames.items == 0..<1 && frames.index == 1)
    }

    @Test func withoutSectionsNothingChanges() throws {
        var plain = try WaterfallEngine(
            configuration: WaterfallConfiguration(containerWidth: 320, columns: .fixed(3), insets: Insets(all: 10)))
        let placed = plain.place(item(40))
        // A 100 × 48 cell (83:40 in a 100-px column) at the top inset, as before sections existed.
        #expect(placed.frame == DeviceRect(x: 10, y: 10, width: 100, height: 48))
        #expect(
            plain.state
                == WaterfallState(
                    nextIndex: 1, columnHeights: [58, 10, 10], contentBottom: 58,
                    section: SectionProgress(itemBounds: placed.frame)))
    }

    @Test func resumingMidSectionKeepsHeaderAndDecoration() throws {
        var whole = try engine()
        whole.beginSection(header: 16)
        for height in [30.0, 20, 50, 10] { _ = whole.place(item(height)) }
        var first = try engine()
        first.beginSection(header: 16)
        for height in [30.0, 20] { _ = first.place(item(height)) }
        var second = try WaterfallEngine(configuration: Self.configuration, resumingFrom: first.state)
        for height in [50.0, 10] { _ = second.place(item(height)) }
        #expect(second.endSection(footer: 8) == whole.endSection(footer: 8))
    }

    @Test func inconsistentSectionStatesAreRefused() throws {
        let configuration = Self.configuration
        var state = try engine().state
        state.section.firstIndex = 3
        #expect(throws: WaterfallConfigurationError.self) {
            try WaterfallEngine(configuration: configuration, resumingFrom: state)
        }
        state = try engine().state
        state.section.start = 50
        state.section.begun = true
        // Columns at 15 are above the items' top of a section starting at 50.
        #expect(throws: WaterfallConfigurationError.self) {
            try WaterfallEngine(configuration: configuration, resumingFrom: state)
        }
    }

    @Test func sectionBoundsGrowAsARectangleAndEmptyToNil() {
        var section = SectionProgress()
        #expect(section.itemBounds == nil)
        section.include(DeviceRect(x: 10, y: 20, width: 30, height: 40))
        section.include(DeviceRect(x: 5, y: 50, width: 10, height: 15))
        let bounds = DeviceRect(x: 5, y: 20, width: 35, height: 45)
        #expect(section.itemBounds == bounds)
        #expect(section == SectionProgress(itemBounds: bounds))
        section.itemBounds = nil
        #expect(section == SectionProgress())
    }

    /// Both engines check a resumed section with the same rule: bounds need items.
    @Test func bothEnginesRefuseSectionBoundsWithoutItems() throws {
        let flowConfiguration = FlowConfiguration(containerWidth: 300, insets: Insets(all: 10), photoHeight: 100)
        let bounds = DeviceRect(x: 15, y: 15, width: 83, height: 9)
        for section in [SectionProgress(), SectionProgress(itemBounds: bounds)] {
            let waterfallState = WaterfallState(
                nextIndex: 0, columnHeights: [15, 15, 15], contentBottom: 10, section: section)
            let flowState = FlowState(nextIndex: 0, rowTop: 10, contentBottom: 10, section: section)
            if section.itemBounds == nil {
                _ = try WaterfallEngine(configuration: Self.configuration, resumingFrom: waterfallState)
                _ = try FlowEngine(configuration: flowConfiguration, resumingFrom: flowState)
            } else {
                #expect(throws: WaterfallConfigurationError.self) {
                    try WaterfallEngine(configuration: Self.configuration, resumingFrom: waterfallState)
                }
                #expect(throws: WaterfallConfigurationError.self) {
                    try FlowEngine(configuration: flowConfiguration, resumingFrom: flowState)
                }
            }
        }
    }
}

@Suite struct HorizontalAxisTests {
    /// Two rows of 85 px in a 200-px-high container; 6 px between the cells of a row.
    func configuration(maximumPhotoWidth: Double? = nil) -> WaterfallConfiguration {
        WaterfallConfiguration(
            containerWidth: 999, columns: .fixed(2), insets: Insets(all: 10), columnGap: 10, rowGap: 6,
            cellPadding: 4, annotationSpacing: 2, axis: .horizontal, containerHeight: 200,
            maximumPhotoWidth: maximumPhotoWidth)
    }

    @Test func rowsShareTheHeightAndCellsGrowToTheRight() throws {
        var layout = try WaterfallEngine(configuration: configuration())
        #expect(layout.grid.columnX == [10, 105] && layout.grid.columnWidth == 85)
        // Content 77 px high; a 20-px annotation and 2 px of spacing leave a 55-px photo slot: 400×300 → 73 × 55.
        let photo = Size(width: 400, height: 300)
        #expect(layout.contentWidth(forPhoto: photo, annotationHeight: 20) == 73)
        let first = layout.place(WaterfallItem(photoSize: photo, annotationHeight: 20))
        #expect(first.column == 0)
        #expect(first.frame == DeviceRect(x: 10, y: 10, width: 81, height: 85))
        #expect(first.photoFrame == DeviceRect(x: 14, y: 14, width: 73, height: 55))
        #expect(first.annotationFrame == DeviceRect(x: 14, y: 71, width: 73, height: 20))
        let second = layout.place(WaterfallItem(photoSize: Size(width: 100, height: 100), annotationHeight: 0))
        #expect(second.frame == DeviceRect(x: 10, y: 105, width: 85, height: 85))
        // Row 0 ends at 10 + 81 + 6 = 97, row 1 at 101: the next item goes to row 0.
        let third = layout.place(WaterfallItem(photoSize: Size(width: 200, height: 100), annotationHeight: 0))
        #expect(third.frame == DeviceRect(x: 97, y: 10, width: 162, height: 85))
        #expect(layout.contentSize.width == 97 + 162 + 10 && layout.contentSize.height == 200)
    }

    @Test func maximumPhotoWidthCentresAFlatPhotoInItsSlot() throws {
        var layout = try WaterfallEngine(configuration: configuration(maximumPhotoWidth: 100))
        let panorama = layout.place(WaterfallItem(photoSize: Size(width: 400, height: 100), annotationHeight: 0))
        #expect(panorama.photoSlot == DeviceRect(x: 14, y: 14, width: 100, height: 77))
        #expect(panorama.photoFrame == DeviceRect(x: 14, y: 14 + 26, width: 100, height: 25))
        #expect(panorama.frame.width == 108)
    }

    @Test func horizontalNeedsAHeightAndLeftToRight() {
        #expect(throws: WaterfallConfigurationError.self) {
            try WaterfallGrid(WaterfallConfiguration(containerWidth: 100, axis: .horizontal))
        }
        do {
            _ = try WaterfallGrid(
                WaterfallConfiguration(
                    containerWidth: 100, direction: .rightToLeft, axis: .horizontal, containerHeight: 100))
            Issue.record("right-to-left horizontal layout accepted")
        } catch {
            #expect(error.option == "direction")
        }
    }

    @Test func queriesWorkOnHorizontalFrames() throws {
        var layout = try WaterfallEngine(configuration: configuration())
        var index = WaterfallIndex(grid: layout.grid)
        var placed: [PlacedItem] = []
        for width in [100.0, 300, 50, 80, 220, 40, 130] {
            let item = layout.place(WaterfallItem(photoSize: Size(width: width, height: 77), annotationHeight: 0))
            index.insert(item)
            placed.append(item)
        }
        for x in stride(from: 0, to: 600, by: 37) {
            let rect = DeviceRect(x: x, y: 50, width: 60, height: 100)
            let expected = placed.filter {
                $0.frame.x < rect.maxX && rect.x < $0.frame.maxX && $0.frame.y < rect.maxY && rect.y < $0.frame.maxY
            }
            #expect(index.items(intersecting: rect) == expected.map(\.index))
        }
    }
}
