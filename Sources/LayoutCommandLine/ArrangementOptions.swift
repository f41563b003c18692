import ArgumentParser
import FeedLayout
import WaterfallLayout

/// Beyond the plain waterfall: flow rows, the horizontal axis, and the bands around the feed's sections.
struct ArrangementOptions: ParsableArguments {
    @Option(help: "waterfall (columns, each pin into the shortest) or flow (rows of pins as wide as their photos).")
    var mode: LayoutMode = .waterfall

    @Option(help: bounded("Flow: every photo is this tall; a pin is as wide as its photo", OptionLimits.positiveLength))
    var rowPhotoHeight: Double = 160

    @Option(help: "Flow: where a row's pins sit: start, end, data-end (filled from the right), center or justified.")
    var align: FlowAlignment = .start

    @Flag(help: "Flow: after a section's first row, each pin tucks under the lane whose bottom is highest.")
    var follow = false

    @Option(help: "Waterfall: vertical (columns grow down) or horizontal (rows grow right; --columns counts rows).")
    var axis: LayoutAxis = .vertical

    @Option(help: bounded("Horizontal axis: the container's height, insets included", OptionLimits.length))
    var height: Double?

    @Option(
        help: bounded(
            "Horizontal axis: fit photos into this width × the slot height (default: no limit)", OptionLimits.length))
    var maxPhotoWidth: Double?

    @Option(help: bounded("Horizontal axis: photo slots are at least this wide", OptionLimits.length))
    var minPhotoWidth: Double = 0

    @Option(help: bounded("Sections (<fl:section> in the feed): the header band above each one", OptionLimits.length))
    var sectionHeaderHeight: Double = 0

    @Option(help: bounded("Sections: the footer band below each one", OptionLimits.length))
    var sectionFooterHeight: Double = 0

    @Option(
        help: bounded(
            "Sections: insets around each section's pins: one value, or top,left,bottom,right; each",
            OptionLimits.length))
    var sectionInset: String = "0"

    @Option(
        help: bounded("Sections: how far each section's decoration frame reaches beyond its pins", OptionLimits.length))
    var decorationOutset: Double = 0

    /// Sets the mode, axis and section fields of the library's named options.
    func apply(to values: inout LayoutOptionValues) {
        values.mode = mode
        values.rowPhotoHeight = rowPhotoHeight
        values.align = align
        values.follow = follow
        values.axis = axis
        values.height = height
        values.maxPhotoWidth = maxPhotoWidth
        values.minPhotoWidth = minPhotoWidth
        values.sectionHeaderHeight = sectionHeaderHeight
        values.sectionFooterHeight = sectionFooterHeight
        values.sectionInset = sectionInset
        values.decorationOutset = decorationOutset
    }
}

extension LayoutMode: ExpressibleByArgument {}

extension LayoutAxis: ExpressibleByArgument {}

extension FlowAlignment: ExpressibleByArgument {
    /// The CLI spells the alignments in kebab case: `data-end`.
    public init?(argument: String) {
        guard let alignment = Self.allCases.first(where: { $0.optionName == argument }) else { return nil }
        self = alignment
    }

    public static var allValueStrings: [String] { allCases.map(\.optionName) }
    public var defaultValueDescription: String { optionName }
}
