/// How many columns the layout has.
public enum ColumnRule: Sendable, Hashable {
    /// Exactly this many columns.
    case fixed(Int)
    /// As many columns of at least `minimumWidth` CSS pixels as fit, within `minimumColumns...maximumColumns`:
    /// `n = max(minimumColumns, floor((W - left - right + gap) / (minimumWidth + gap)))`.
    case adaptive(minimumWidth: Double, minimumColumns: Int = 1, maximumColumns: Int? = nil)
}

/// The order in which columns are read, and so where column 0 sits.
public enum HorizontalDirection: String, Sendable, Hashable {
    case leftToRight
    /// Column 0 is the rightmost one; every frame is mirrored.
    case rightToLeft
}

/// Which column a one-column item goes to (CHTCollectionViewWaterfallLayout's `itemRenderDirection`).
public enum PlacementOrder: String, Sendable, Hashable, CaseIterable {
    /// The currently shortest column, ties to the first in reading order: the waterfall.
    case shortestFirst
    /// Columns in turn, 0, 1, 2, … (a round robin in reading order).
    case leftToRight
    /// Columns in turn from the last, n-1, n-2, … .
    case rightToLeft
}

/// Everything that decides where pins go. Lengths are CSS pixels.
///
/// The engine converts every length to whole device pixels (`scale` device pixels per CSS pixel, rounding half
/// away from zero) before it computes anything, and all its arithmetic is then on integers. That makes
/// positions deterministic on every machine and keeps rounding from accumulating down a long column.
public struct WaterfallConfiguration: Sendable, Hashable {
    /// The width of the whole container, insets included.
    public var containerWidth: Double
    public var columns: ColumnRule
    public var insets: Insets
    /// The horizontal gap between columns.
    public var columnGap: Double
    /// The vertical gap between two pins of one column.
    public var rowGap: Double
    /// Padding inside a cell, around the photo and the annotation.
    public var cellPadding: Double
    /// The gap between the photo and the annotation below it; only used when the annotation has a height.
    public var annotationSpacing: Double
    /// The photo is fitted into `contentWidth × maximumPhotoHeight`; `nil` means no limit.
    public var maximumPhotoHeight: Double?
    /// The photo slot is at least this tall; a flatter photo is centred in it.
    public var minimumPhotoHeight: Double
    /// Device pixels per CSS pixel. Every output value is a whole number of device pixels.
    public var scale: Double
    public var direction: HorizontalDirection
    public var placement: PlacementOrder
    /// With `shortestFirst`: take the first column in reading order whose height is within this many CSS pixels
    /// of the shortest (CSS grid-lanes `flow-tolerance`). Keeps reading order closer to feed order at the cost of
    /// a little balance; 0 is the strict waterfall.
    public var orderTolerance: Double

    public init(
        containerWidth: Double,
        columns: ColumnRule = .fixed(2),
        insets: Insets = Insets(),
        columnGap: Double = 0,
        rowGap: Double = 0,
        cellPadding: Double = 0,
        annotationSpacing: Double = 0,
        maximumPhotoHeight: Double? = nil,
        minimumPhotoHeight: Double = 0,
        scale: Double = 1,
        direction: HorizontalDirection = .leftToRight,
        placement: PlacementOrder = .shortestFirst,
        orderTolerance: Double = 0
    ) {
        self.containerWidth = containerWidth
        self.columns = columns
        self.insets = insets
        self.columnGap = columnGap
        self.rowGap = rowGap
        self.cellPadding = cellPadding
        self.annotationSpacing = annotationSpacing
        self.maximumPhotoHeight = maximumPhotoHeight
        self.minimumPhotoHeight = minimumPhotoHeight
        self.scale = scale
        self.direction = direction
        self.placement = placement
        self.orderTolerance = orderTolerance
    }
}

/// A configuration the engine cannot lay out, with the option at fault.
public struct WaterfallConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The option at fault, named as the CLI names it (`width`, `columns`, `cell-padding`, …).
    public var option: String
    public var message: String

    public init(option: String, message: String) {
        self.option = option
        self.message = message
    }

    public var description: String { "invalid --\(option): \(message)" }
}

/// The resolved geometry of a configuration, in whole device pixels.
///
/// Column width follows CHTCollectionViewWaterfallLayout: the share of each column is floored to a device pixel,
/// so every column has the same width and any leftover pixels stay at the trailing edge.
public struct WaterfallGrid: Sendable, Hashable {
    public let scale: Double
    public let direction: HorizontalDirection
    public let containerWidth: Int
    public let insets: DeviceInsets
    public let columnCount: Int
    public let columnWidth: Int
    public let columnGap: Int
    public let rowGap: Int
    public let cellPadding: Int
    public let annotationSpacing: Int
    public let maximumPhotoHeight: Int?
    public let minimumPhotoHeight: Int
    public let placement: PlacementOrder
    public let orderTolerance: Int
    /// The left edge of each column, indexed in reading order.
    public let columnX: [Int]

    /// The width available to the photo and the annotation inside a one-column cell.
    public var contentWidth: Int { columnWidth - 2 * cellPadding }

    /// The number of columns an item of this span really takes in this grid.
    public func columnCount(for span: ColumnSpan) -> Int {
        switch span {
        case .columns(let count): min(max(count, 1), columnCount)
        case .fullWidth: columnCount
        }
    }

    /// The width of a cell spanning `columns` columns, gaps between them included.
    public func cellWidth(spanning columns: Int) -> Int { columns * columnWidth + (columns - 1) * columnGap }

    /// The content width of a cell of this span: what its photo is fitted to and its text measured at.
    public func contentWidth(for span: ColumnSpan) -> Int { cellWidth(spanning: columnCount(for: span)) - 2 * cellPadding }

    /// Resolves and checks a configuration.
    ///
    /// - Throws: `WaterfallConfigurationError` naming the option when a length is negative or not finite, when
    ///   no column fits, or when the cell padding leaves no room for content.
    public init(_ configuration: WaterfallConfiguration) throws(WaterfallConfigurationError) {
        guard configuration.scale.isFinite, configuration.scale > 0 else {
            throw WaterfallConfigurationError(option: "scale", message: "must be a positive number, got \(configuration.scale)")
        }
        let scale = configuration.scale
        func device(_ value: Double, _ option: String) throws(WaterfallConfigurationError) -> Int {
            guard value.isFinite, value >= 0 else {
                throw WaterfallConfigurationError(option: option, message: "must be a finite length of 0 or more, got \(value)")
            }
            return Int((value * scale).rounded(.toNearestOrAwayFromZero))
        }
        self.scale = scale
        direction = configuration.direction
        containerWidth = try device(configuration.containerWidth, "width")
        let insets = configuration.insets
        self.insets = DeviceInsets(
            top: try device(insets.top, "inset"), left: try device(insets.left, "inset"),
            bottom: try device(insets.bottom, "inset"), right: try device(insets.right, "inset"))
        columnGap = try device(configuration.columnGap, "gutter")
        rowGap = try device(configuration.rowGap, "row-gap")
        cellPadding = try device(configuration.cellPadding, "cell-padding")
        annotationSpacing = try device(configuration.annotationSpacing, "annotation-spacing")
        maximumPhotoHeight = try configuration.maximumPhotoHeight.map { (value) throws(WaterfallConfigurationError) in
            try device(value, "max-photo-height")
        }
        minimumPhotoHeight = try device(configuration.minimumPhotoHeight, "min-photo-height")
        placement = configuration.placement
        orderTolerance = try device(configuration.orderTolerance, "order-tolerance")
        if let maximum = maximumPhotoHeight, maximum < minimumPhotoHeight {
            throw WaterfallConfigurationError(
                option: "max-photo-height", message: "is below --min-photo-height (\(configuration.minimumPhotoHeight))")
        }

        let available = containerWidth - self.insets.left - self.insets.right
        guard available > 0 else {
            throw WaterfallConfigurationError(
                option: "width", message: "\(configuration.containerWidth) leaves no room once the insets are taken off")
        }
        switch configuration.columns {
        case .fixed(let count):
            guard count >= 1 else {
                throw WaterfallConfigurationError(option: "columns", message: "must be at least 1, got \(count)")
            }
            columnCount = count
        case .adaptive(let minimumWidth, let minimumColumns, let maximumColumns):
            let minimum = try device(minimumWidth, "min-column-width")
            guard minimum > 0 else {
                throw WaterfallConfigurationError(option: "min-column-width", message: "must be above 0")
            }
            guard minimumColumns >= 1 else {
                throw WaterfallConfigurationError(option: "min-columns", message: "must be at least 1, got \(minimumColumns)")
            }
            var count = max(minimumColumns, (available + columnGap) / (minimum + columnGap))
            if let maximumColumns {
                guard maximumColumns >= minimumColumns else {
                    throw WaterfallConfigurationError(option: "max-columns", message: "is below --min-columns")
                }
                count = min(count, maximumColumns)
            }
            columnCount = count
        }
        columnWidth = (available - (columnCount - 1) * columnGap) / columnCount
        guard columnWidth > 2 * cellPadding else {
            throw WaterfallConfigurationError(
                option: columnWidth > 0 ? "cell-padding" : "columns",
                message: "\(columnCount) columns in \(configuration.containerWidth) px leave "
                    + "\(Double(columnWidth) / scale) px per column, not enough for content")
        }
        let stride = columnWidth + columnGap
        let leftInset = self.insets.left
        let rightEdge = containerWidth - self.insets.right
        let columnWidth = columnWidth
        columnX = (0..<columnCount).map { column in
            switch configuration.direction {
            case .leftToRight: leftInset + column * stride
            case .rightToLeft: rightEdge - columnWidth - column * stride
            }
        }
    }

    /// Converts a length in CSS pixels to device pixels, rounding up: text must fit in the height it is given.
    public func deviceLengthRoundingUp(_ cssPixels: Double) -> Int {
        guard cssPixels.isFinite, cssPixels > 0 else { return 0 }
        // The small allowance keeps 17.000000000000004 from becoming 18.
        return Int((cssPixels * scale - 1e-7).rounded(.up))
    }
}

/// Insets in whole device pixels.
public struct DeviceInsets: Sendable, Hashable {
    public var top: Int
    public var left: Int
    public var bottom: Int
    public var right: Int
}
