/// How many columns the layout has.
public enum ColumnRule: Sendable, Hashable {
    /// Exactly this many columns.
    case fixed(Int)
    /// As many columns of at least `minimumWidth` CSS pixels as fit, within `minimumColumns...maximumColumns`:
    /// `n = max(minimumColumns, floor((W - left - right + gap) / (minimumWidth + gap)))`, and never more than
    /// ``WaterfallLimits/maximumColumns`` (the columns are then wider than `minimumWidth`).
    case adaptive(minimumWidth: Double, minimumColumns: Int = 1, maximumColumns: Int? = nil)
}

/// The order in which columns are read, and so where column 0 sits.
public enum HorizontalDirection: String, Sendable, Hashable {
    case leftToRight
    /// Column 0 is the rightmost one; every frame is mirrored.
    case rightToLeft
}

/// The direction the layout scrolls and grows in.
public enum LayoutAxis: String, Sendable, Hashable, CaseIterable {
    /// Lanes are columns of a container of fixed width; the layout grows downwards.
    case vertical
    /// Lanes are rows of a container of fixed height (`containerHeight`); the layout grows to the right.
    case horizontal
}

/// Which column an item goes to.
///
/// `shortestFirst` and the round robins follow CHTCollectionViewWaterfallLayout (`itemRenderDirection`) and
/// masonry.js; `gridLanes` follows CSS Grid Lanes (`display: grid-lanes`, css-grid-3) as Chromium places it.
public enum PlacementOrder: String, Sendable, Hashable, CaseIterable {
    /// The currently shortest column, ties (and columns within the order tolerance) to the first in reading order:
    /// the waterfall of CHTCollectionViewWaterfallLayout and masonry.js. A wider item takes the window whose tallest
    /// column is lowest, the first on ties.
    case shortestFirst
    /// Columns in turn, 0, 1, 2, … (a round robin in reading order).
    case leftToRight
    /// Columns in turn from the last, n-1, n-2, … .
    case rightToLeft
    /// CSS Grid Lanes: of the windows (one column, or as many adjacent columns as the item spans) whose tallest
    /// column is within the order tolerance (`flow-tolerance`) of the lowest such window, the first one at or after
    /// the column that follows the previous item's window, wrapping to column 0 when none is (the spec's
    /// auto-placement cursor). Exact ties go the same way, so items of equal height fill the columns in turn.
    case gridLanes
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
    /// How far above the lowest possible top, in CSS pixels, a column may be and still be taken for the sake of
    /// reading order. `shortestFirst` takes the first column in reading order within it (masonry.js); `gridLanes`
    /// uses it as CSS `flow-tolerance` (see ``PlacementOrder/gridLanes``). Keeps reading order closer to feed order
    /// at the cost of a little balance; 0 is the strict waterfall. The round robins ignore it.
    public var orderTolerance: Double
    /// `.vertical` (columns, growing downwards) or `.horizontal` (rows, growing to the right).
    ///
    /// Horizontally every lane rule is mirrored onto rows: `columns` counts rows (row 0 at the top, ties to the
    /// topmost), `columnGap` is the gap between rows, `rowGap` the gap between two consecutive cells of a row,
    /// and `containerHeight` is the extent the rows share. A cell is its row's height; its photo takes the row's
    /// content height minus the annotation band and its width follows the photo's aspect ratio, fitted into
    /// `maximumPhotoWidth × slot height` (`maximumPhotoHeight`/`minimumPhotoHeight` do not apply).
    /// `direction` must stay `.leftToRight`.
    public var axis: LayoutAxis
    /// The height of the whole container, insets included; required by the horizontal axis, unused vertically.
    public var containerHeight: Double?
    /// Horizontal axis: the photo is fitted into `maximumPhotoWidth × slot height`; `nil` means no limit.
    public var maximumPhotoWidth: Double?
    /// Horizontal axis: the photo slot is at least this wide; a narrower photo is centred in it.
    public var minimumPhotoWidth: Double
    /// Insets around every section's items (CHTCollectionViewWaterfallLayout's `sectionInset`). The cross-axis
    /// sides (left/right vertically, top/bottom horizontally) are the same for every section, so they narrow the
    /// lanes themselves: ``WaterfallGrid/columnX`` and ``WaterfallGrid/columnWidth`` include them and content
    /// widths never change between sections. The scroll-axis sides are added after a section's header and
    /// before its footer.
    public var sectionInsets: Insets
    /// How far a section's decoration frame extends beyond its items' bounding box on every side.
    public var decorationOutset: Double

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
        orderTolerance: Double = 0,
        axis: LayoutAxis = .vertical,
        containerHeight: Double? = nil,
        maximumPhotoWidth: Double? = nil,
        minimumPhotoWidth: Double = 0,
        sectionInsets: Insets = Insets(),
        decorationOutset: Double = 0
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
        self.axis = axis
        self.containerHeight = containerHeight
        self.maximumPhotoWidth = maximumPhotoWidth
        self.minimumPhotoWidth = minimumPhotoWidth
        self.sectionInsets = sectionInsets
        self.decorationOutset = decorationOutset
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
///
/// On the horizontal axis the lanes are rows: `columnX` holds each row's top edge, `columnWidth` the row height
/// and `columnCount` the number of rows (the lane vocabulary is shared so that both axes run the same rules).
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
    /// The left edge of each column, indexed in reading order (horizontally: the top edge of each row).
    public let columnX: [Int]
    public let axis: LayoutAxis
    /// The container height in device pixels on the horizontal axis; `nil` vertically.
    public let containerHeight: Int?
    public let sectionInsets: DeviceInsets
    public let decorationOutset: Int
    public let maximumPhotoWidth: Int?
    public let minimumPhotoWidth: Int

    /// The width available to the photo and the annotation inside a one-column cell (horizontally: the height
    /// inside a one-row cell; the content width there depends on the photo, see
    /// ``WaterfallEngine/contentWidth(forPhoto:annotationHeight:span:)``).
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

    /// The content width of a cell of this span: what its photo is fitted to and its text measured at (vertical
    /// axis only).
    public func contentWidth(for span: ColumnSpan) -> Int {
        cellWidth(spanning: columnCount(for: span)) - 2 * cellPadding
    }

    /// Resolves and checks a configuration.
    ///
    /// - Throws: `WaterfallConfigurationError` naming the option when a length or the scale is outside its bounds
    ///   (``WaterfallLimits``), when no column fits, or when the cell padding leaves no room for content.
    public init(_ configuration: WaterfallConfiguration) throws(WaterfallConfigurationError) {
        try WaterfallLimits.checkScale(configuration.scale)
        let scale = configuration.scale
        func device(_ value: Double, _ option: String) throws(WaterfallConfigurationError) -> Int {
            try WaterfallLimits.deviceLength(value, scale: scale, option: option)
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
        let tolerance = try device(configuration.orderTolerance, "order-tolerance")
        orderTolerance =
            placement == .gridLanes ? Self.browserTolerance(configuration.orderTolerance, scale: scale) : tolerance
        if let maximum = maximumPhotoHeight, maximum < minimumPhotoHeight {
            throw WaterfallConfigurationError(
                option: "max-photo-height", message: "is below --min-photo-height (\(configuration.minimumPhotoHeight))"
            )
        }

        axis = configuration.axis
        let sections = configuration.sectionInsets
        sectionInsets = DeviceInsets(
            top: try device(sections.top, "section-inset"), left: try device(sections.left, "section-inset"),
            bottom: try device(sections.bottom, "section-inset"), right: try device(sections.right, "section-inset"))
        decorationOutset = try device(configuration.decorationOutset, "decoration-outset")
        maximumPhotoWidth = try configuration.maximumPhotoWidth.map { (value) throws(WaterfallConfigurationError) in
            try device(value, "max-photo-width")
        }
        minimumPhotoWidth = try device(configuration.minimumPhotoWidth, "min-photo-width")
        if let maximum = maximumPhotoWidth, maximum < minimumPhotoWidth {
            throw WaterfallConfigurationError(
                option: "max-photo-width", message: "is below --min-photo-width (\(configuration.minimumPhotoWidth))")
        }
        // The lanes' cross-axis extent: the width vertically, the height horizontally.
        let extentOption: String
        let extentValue: Double
        let laneStart: Int
        let laneEnd: Int
        switch configuration.axis {
        case .vertical:
            containerHeight = nil
            extentOption = "width"
            extentValue = configuration.containerWidth
            laneStart = self.insets.left + sectionInsets.left
            laneEnd = containerWidth - self.insets.right - sectionInsets.right
        case .horizontal:
            guard let height = configuration.containerHeight else {
                throw WaterfallConfigurationError(option: "height", message: "is required by the horizontal axis")
            }
            guard configuration.direction == .leftToRight else {
                throw WaterfallConfigurationError(
                    option: "direction", message: "right-to-left is not supported on the horizontal axis")
            }
            let deviceHeight = try device(height, "height")
            containerHeight = deviceHeight
            extentOption = "height"
            extentValue = height
            laneStart = self.insets.top + sectionInsets.top
            laneEnd = deviceHeight - self.insets.bottom - sectionInsets.bottom
        }
        let available = laneEnd - laneStart
        guard available > 0 else {
            throw WaterfallConfigurationError(
                option: extentOption, message: "\(extentValue) leaves no room once the insets are taken off")
        }
        switch configuration.columns {
        case .fixed(let count):
            try WaterfallLimits.checkColumns(count, option: "columns")
            columnCount = count
        case .adaptive(let minimumWidth, let minimumColumns, let maximumColumns):
            let minimum = try device(minimumWidth, "min-column-width")
            guard minimum > 0 else {
                throw WaterfallConfigurationError(option: "min-column-width", message: "must be above 0")
            }
            try WaterfallLimits.checkColumns(minimumColumns, option: "min-columns")
            var count = max(minimumColumns, (available + columnGap) / (minimum + columnGap))
            if let maximumColumns {
                try WaterfallLimits.checkColumns(maximumColumns, option: "max-columns")
                guard maximumColumns >= minimumColumns else {
                    throw WaterfallConfigurationError(option: "max-columns", message: "is below --min-columns")
                }
                count = min(count, maximumColumns)
            }
            // Columns stay at least `minimumWidth` wide when there are fewer of them: the adaptive rule holds.
            columnCount = min(count, WaterfallLimits.maximumColumns)
        }
        columnWidth = (available - (columnCount - 1) * columnGap) / columnCount
        guard columnWidth > 2 * cellPadding else {
            throw WaterfallConfigurationError(
                option: columnWidth > 0 ? "cell-padding" : "columns",
                message: "\(columnCount) columns in \(extentValue) px leave "
                    + "\(Double(columnWidth) / scale) px per column, not enough for content")
        }
        let stride = columnWidth + columnGap
        let columnWidth = columnWidth
        columnX = (0..<columnCount).map { column in
            switch configuration.direction {
            case .leftToRight: laneStart + column * stride
            case .rightToLeft: laneEnd - columnWidth - column * stride
            }
        }
    }

    /// CSS `flow-tolerance` in device pixels, admitting exactly the tops Chromium admits.
    ///
    /// Chromium holds the length in LayoutUnits (1/64 CSS px, truncated) and takes a position when it is at most the
    /// lowest plus the tolerance. Positions here are whole device pixels, so the largest whole number of device
    /// pixels within the truncated length admits the same ones (rounding to the nearest, as other lengths do, would
    /// admit a top 0.4 px too far).
    private static func browserTolerance(_ cssPixels: Double, scale: Double) -> Int {
        // LayoutUnit's largest value: a larger tolerance admits every top anyway.
        let layoutUnits = (min(cssPixels, 33_554_431) * 64).rounded(.towardZero)
        return Int((layoutUnits / 64 * scale).rounded(.down))
    }

    /// Where the scroll axis starts: the top inset vertically, the left inset horizontally.
    public var scrollStartInset: Int { axis == .vertical ? insets.top : insets.left }
    /// Where the scroll axis ends after the content: the bottom inset vertically, the right inset horizontally.
    public var scrollEndInset: Int { axis == .vertical ? insets.bottom : insets.right }
    /// The section inset before a section's items on the scroll axis (after its header).
    public var sectionScrollStartInset: Int { axis == .vertical ? sectionInsets.top : sectionInsets.left }
    /// The section inset after a section's items on the scroll axis (before its footer).
    public var sectionScrollEndInset: Int { axis == .vertical ? sectionInsets.bottom : sectionInsets.right }

    /// A full-width band (full-height horizontally) between the container insets, at `start` along the scroll
    /// axis and `length` long: where section headers and footers go.
    public func band(at start: Int, length: Int) -> DeviceRect {
        switch axis {
        case .vertical:
            DeviceRect(x: insets.left, y: start, width: containerWidth - insets.left - insets.right, height: length)
        case .horizontal:
            DeviceRect(x: start, y: insets.top, width: length, height: containerHeight! - insets.top - insets.bottom)
        }
    }

    /// Converts a length in CSS pixels to device pixels, rounding up: text must fit in the height it is given.
    public func deviceLengthRoundingUp(_ cssPixels: Double) -> Int {
        WaterfallLimits.deviceLengthRoundingUp(cssPixels, scale: scale)
    }
}

/// Insets in whole device pixels.
public struct DeviceInsets: Sendable, Hashable {
    public var top: Int
    public var left: Int
    public var bottom: Int
    public var right: Int
}
