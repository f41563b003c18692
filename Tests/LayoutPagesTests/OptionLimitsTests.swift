import FeedIngest
import FeedLayoutTestSupport
import PropertyBased
import Testing
import TextMeasure
import WaterfallLayout

@testable import LayoutPages

/// One numeric option: how to set it, its largest allowed value, the next value above, and its smallest allowed
/// value with the next below (nil when the lower bound is the type's).
struct BoundCase: CustomStringConvertible, Sendable {
    var option: String
    var largest: Double
    var aboveLargest: Double
    var smallest: Double
    var belowSmallest: Double?
    /// Integer options cannot hold a non-finite value, so only finite ones are tried.
    var isInteger = false
    var set: @Sendable (inout LayoutOptions, Double) -> Void

    var description: String { option }

    /// Options with a fixed column count (so huge widths and gaps are not refused for their column count) and the
    /// value set.
    func options(_ value: Double) -> LayoutOptions {
        var options = LayoutOptions()
        options.waterfall.columns = .fixed(1)
        options.waterfall.containerWidth = WaterfallLimits.maximumLength
        set(&options, value)
        return options
    }
}

let maximumLength = WaterfallLimits.maximumLength
/// The next double above the largest length.
let aboveMaximumLength = maximumLength.nextUp

func lengthCase(_ option: String, _ set: @escaping @Sendable (inout LayoutOptions, Double) -> Void) -> BoundCase {
    BoundCase(
        option: option, largest: maximumLength, aboveLargest: aboveMaximumLength, smallest: 0,
        belowSmallest: -Double.leastNonzeroMagnitude, set: set)
}

let boundCases: [BoundCase] = [
    // A width of 0 is a length, but leaves no room for a column.
    BoundCase(
        option: "width", largest: maximumLength, aboveLargest: aboveMaximumLength, smallest: 100,
        belowSmallest: -Double.leastNonzeroMagnitude, set: { $0.waterfall.containerWidth = $1 }),
    // Insets, gaps and padding up to the largest length need a container that still has room: a taller
    // horizontal one for the top inset and row gap, which do not narrow the columns.
    lengthCase("inset") { $0.waterfall.insets.top = $1 },
    lengthCase("row-gap") { $0.waterfall.rowGap = $1 },
    lengthCase("gutter") {
        $0.waterfall.columns = .fixed(1)
        $0.waterfall.columnGap = $1
    },
    lengthCase("annotation-spacing") { $0.waterfall.annotationSpacing = $1 },
    lengthCase("max-photo-height") { $0.waterfall.maximumPhotoHeight = $1 },
    lengthCase("min-photo-height") {
        $0.waterfall.minimumPhotoHeight = $1
        $0.waterfall.maximumPhotoHeight = nil
    },
    lengthCase("order-tolerance") { $0.waterfall.orderTolerance = $1 },
    lengthCase("decoration-outset") { $0.waterfall.decorationOutset = $1 },
    lengthCase("section-header-height") { $0.sections.headerHeight = $1 },
    lengthCase("section-footer-height") { $0.sections.footerHeight = $1 },
    lengthCase("title-text-gap") { $0.annotation.titleTextGap = $1 },
    BoundCase(
        option: "page-height", largest: maximumLength, aboveLargest: aboveMaximumLength, smallest: 1e-9,
        belowSmallest: 0, set: { $0.pagination.pageHeight = $1 }),
    BoundCase(
        option: "columns", largest: 1000, aboveLargest: 1001, smallest: 1, belowSmallest: 0, isInteger: true,
        set: { $0.waterfall.columns = .fixed(Int($1)) }),
    BoundCase(
        option: "min-columns", largest: 1000, aboveLargest: 1001, smallest: 1, belowSmallest: 0, isInteger: true,
        set: { $0.waterfall.columns = .adaptive(minimumWidth: 236, minimumColumns: Int($1)) }),
    BoundCase(
        option: "max-columns", largest: 1000, aboveLargest: 1001, smallest: 1, belowSmallest: 0, isInteger: true,
        set: { $0.waterfall.columns = .adaptive(minimumWidth: 236, maximumColumns: Int($1)) }),
    BoundCase(
        option: "min-column-width", largest: maximumLength, aboveLargest: aboveMaximumLength, smallest: 1,
        belowSmallest: -1, set: { $0.waterfall.columns = .adaptive(minimumWidth: $1) }),
    BoundCase(
        option: "scale", largest: 16, aboveLargest: 16.0.nextUp, smallest: 0.1, belowSmallest: 0.1.nextDown,
        set: {
            $0.waterfall.scale = $1
            $0.waterfall.containerWidth = 1024
        }),
    BoundCase(
        option: "font-size", largest: 1000, aboveLargest: 1000.0.nextUp, smallest: 1e-9, belowSmallest: 0,
        set: { $0.annotation.text.size = $1 }),
    BoundCase(
        option: "title-font-size", largest: 1000, aboveLargest: 1000.0.nextUp, smallest: 1e-9, belowSmallest: 0,
        set: { $0.annotation.title.size = $1 }),
    BoundCase(
        option: "title-weight", largest: 1000, aboveLargest: 1001, smallest: 1, belowSmallest: 0, isInteger: true,
        set: { $0.annotation.title.weight = Int($1) }),
    BoundCase(
        option: "line-height", largest: 10_000, aboveLargest: 10_000.0.nextUp, smallest: 1e-9, belowSmallest: 0,
        set: { $0.annotation.text.lineHeight = .pixels($1) }),
    BoundCase(
        option: "line-height", largest: 100, aboveLargest: 100.0.nextUp, smallest: 1e-9, belowSmallest: 0,
        set: { $0.annotation.title.lineHeight = .multiple($1) }),
    BoundCase(
        option: "title-lines", largest: 1000, aboveLargest: 1001, smallest: 0, belowSmallest: -1, isInteger: true,
        set: { $0.annotation.titleLines = Int($1) }),
    BoundCase(
        option: "text-lines", largest: 1000, aboveLargest: 1001, smallest: 0, belowSmallest: -1, isInteger: true,
        set: { $0.annotation.textLines = Int($1) }),
    BoundCase(
        option: "page-size", largest: 100_000, aboveLargest: 100_001, smallest: 1, belowSmallest: 0, isInteger: true,
        set: { $0.pagination.pageSize = Int($1) }),
    BoundCase(
        option: "max-pages", largest: 1_000_000_000, aboveLargest: 1_000_000_001, smallest: 1, belowSmallest: 0,
        isInteger: true,
        set: { $0.maximumPages = Int($1) }),
    BoundCase(
        option: "fallback-aspect-ratio", largest: 100, aboveLargest: 100.0.nextUp, smallest: 0.01,
        belowSmallest: 0.01.nextDown, set: { $0.fallbackAspectRatio = $1 }),
    BoundCase(
        option: "probe-concurrency", largest: 1024, aboveLargest: 1025, smallest: 1, belowSmallest: 0, isInteger: true,
        set: { $0.probeConcurrency = Int($1) }),
    BoundCase(
        option: "height", largest: maximumLength, aboveLargest: aboveMaximumLength, smallest: 100,
        belowSmallest: -Double.leastNonzeroMagnitude,
        set: {
            $0.waterfall.axis = .horizontal
            $0.waterfall.containerHeight = $1
        }),
    lengthCase("max-photo-width") {
        $0.waterfall.axis = .horizontal
        $0.waterfall.containerHeight = 1000
        $0.waterfall.maximumPhotoWidth = $1
    },
    lengthCase("section-inset") { $0.waterfall.sectionInsets.bottom = $1 },
    BoundCase(
        option: "row-photo-height", largest: maximumLength, aboveLargest: aboveMaximumLength, smallest: 1,
        belowSmallest: 0, set: { $0.flow = FlowSettings(photoHeight: $1) }),
]

@Suite struct OptionLimitsTests {
    @Test(arguments: boundCases)
    func theLargestValueIsTakenAndTheNextRefused(_ bound: BoundCase) throws {
        try bound.options(bound.largest).validate()
        try bound.options(bound.smallest).validate()
        for refused in [bound.aboveLargest, bound.belowSmallest, .infinity, -.infinity, .nan].compactMap({ $0 }) {
            if bound.isInteger, !refused.isFinite { continue }
            let error = #expect(throws: LayoutError.self, "\(bound.option) \(refused)") {
                try bound.options(refused).validate()
            }
            #expect(error?.code == .invalidOptions)
            #expect(error?.option == bound.option, "\(error?.message ?? "")")
            #expect(error?.message.contains("--\(bound.option)") == true, "\(error?.message ?? "")")
        }
    }

    @Test func theMessageNamesTheValueAndTheRange() {
        var options = LayoutOptions()
        options.waterfall.containerWidth = 1e300
        let error = #expect(throws: LayoutError.self) { try options.validate() }
        #expect(error?.message == "invalid --width: must be a length from 0 to 1,000,000 px, got 1e+300")
        options = LayoutOptions(pagination: PaginationRule(pageSize: 100_001))
        let pageSize = #expect(throws: LayoutError.self) { try options.validate() }
        #expect(pageSize?.message == "invalid --page-size: must be from 1 to 100,000, got 100001")
        options = LayoutOptions()
        options.waterfall.cellPadding = maximumLength.nextUp
        let padding = #expect(throws: LayoutError.self) { try options.validate() }
        #expect(padding?.option == "cell-padding")
        #expect(padding?.message.contains("must be a length from 0 to 1,000,000 px") == true)
    }

    @Test func aBreakpointNamesItselfAndTheirNumberIsBounded() {
        var options = LayoutOptions(breakpoints: [
            Breakpoint(width: 375, columns: 2), Breakpoint(width: 768, columns: 1001),
        ])
        let error = #expect(throws: LayoutError.self) { try options.validate() }
        #expect(
            error?.message.hasPrefix("--breakpoints 768:1001: invalid --columns") == true, "\(error?.message ?? "")")
        #expect(error?.option == "breakpoints")
        options.breakpoints = (1...33).map { Breakpoint(width: Double(300 + $0), columns: 2) }
        #expect(throws: LayoutError.self) { try options.validate() }
        options.breakpoints.removeLast()
        #expect(throws: Never.self) { try options.validate() }
    }

    /// Adaptive columns stop at the most columns allowed: a wide container with narrow columns gets wider ones.
    @Test func adaptiveColumnsAreCappedNotRefused() throws {
        let grid = try WaterfallGrid(
            WaterfallConfiguration(containerWidth: maximumLength, columns: .adaptive(minimumWidth: 1), scale: 16))
        #expect(grid.columnCount == WaterfallLimits.maximumColumns)
        #expect(grid.columnWidth >= 16)
    }

    /// Any option values within their bounds, with photos of any aspect ratio, end in pages or a clear error:
    /// never a trap.
    @Test func anyOptionsWithinBoundsEndInPagesOrAClearError() async {
        await propertyCheck(count: 250, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix64(seed: UInt64(seed))
            func length() -> Double {
                // Mostly ordinary lengths, sometimes the extremes.
                switch random.next() % 4 {
                case 0: return [0, 0.5, maximumLength, maximumLength / 3][Int(random.next() % 4)]
                default: return Double(random.next() % 2_000) / 4
                }
            }
            var options = LayoutOptions()
            options.waterfall = WaterfallConfiguration(
                containerWidth: length(),
                columns: random.next() % 2 == 0
                    ? .fixed(1 + Int(random.next() % 1000))
                    : .adaptive(minimumWidth: length(), minimumColumns: 1 + Int(random.next() % 4)),
                insets: Insets(top: length(), left: length(), bottom: length(), right: length()),
                columnGap: length(), rowGap: length(), cellPadding: length(), annotationSpacing: length(),
                maximumPhotoHeight: random.next() % 2 == 0 ? nil : length(), minimumPhotoHeight: 0,
                scale: [0.1, 1, 2, 3, 16][Int(random.next() % 5)],
                direction: random.next() % 2 == 0 ? .leftToRight : .rightToLeft,
                placement: PlacementOrder.allCases[Int(random.next() % 4)], orderTolerance: length(),
                axis: random.next() % 4 == 0 ? .horizontal : .vertical, containerHeight: length())
            if options.waterfall.axis == .horizontal { options.waterfall.direction = .leftToRight }
            if random.next() % 4 == 0 { options.flow = FlowSettings(photoHeight: max(1, length())) }
            options.pagination = PaginationRule(
                pageSize: 1 + Int(random.next() % 100_000), pageHeight: random.next() % 2 == 0 ? nil : max(1, length()))
            options.fallbackAspectRatio = [0.01, 1, 100][Int(random.next() % 3)]
            var run = CursorRun(options: options, count: 12, seed: random.next())
            // Photos of any shape, from a hair's width to a hair's height.
            for index in run.items.indices where random.next() % 3 == 0 {
                run.items[index].photo.size =
                    [
                        Size(width: 1, height: 1e18), Size(width: 1e18, height: 1), Size(width: 1, height: 9e15),
                    ][Int(random.next() % 3)]
            }
            do {
                try options.validate()
                _ = try run.pages(resume: nil)
            } catch let error as LayoutError {
                // Options the engine cannot lay out, or a layout that grows past the largest coordinate.
                #expect([.invalidOptions, .feedInvalid].contains(error.code), "\(error)")
            } catch {
                Issue.record("not a LayoutError: \(error)")
            }
        }
    }

    /// Declared sizes that would grow the layout past 2^53 − 1 device pixels (a photo 1 px wide and 10^18 px tall)
    /// stop it with an error naming the item, instead of positions a JSON number cannot hold.
    @Test func aLayoutPastTheLargestPositionNamesTheItem() {
        var run = CursorRun(count: 3)
        for index in run.items.indices { run.items[index].photo.size = Size(width: 1, height: 1e18) }
        do {
            _ = try run.pages(resume: nil)
            Issue.record("a layout past the largest position was made")
        } catch let error as LayoutError {
            #expect(error.code == .feedInvalid)
            #expect(error.message.hasPrefix("item 0 (item-0) ends past device pixel \(WaterfallLimits.maximumCoordinate)"))
        } catch {
            Issue.record("not a LayoutError: \(error)")
        }
    }
}
