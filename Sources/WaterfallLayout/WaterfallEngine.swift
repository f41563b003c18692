/// How many columns an item takes.
public enum ColumnSpan: Sendable, Hashable {
    /// This many adjacent columns (clamped to the grid's column count).
    case columns(Int)
    /// The whole row: every column.
    case fullWidth

    public static let single = ColumnSpan.columns(1)
}

/// One pin as the engine sees it: how big its photo is, how tall its annotation is, how wide it is.
public struct WaterfallItem: Sendable, Hashable {
    /// The photo's display size (after EXIF orientation) or any size with its aspect ratio.
    public var photoSize: Size
    /// The annotation's height in CSS pixels at the item's content width (``WaterfallGrid/contentWidth(for:)``);
    /// 0 when the pin has no annotation.
    public var annotationHeight: Double
    public var span: ColumnSpan

    public init(photoSize: Size, annotationHeight: Double, span: ColumnSpan = .single) {
        self.photoSize = photoSize
        self.annotationHeight = annotationHeight
        self.span = span
    }
}

/// Where one pin went, in device pixels.
public struct PlacedItem: Sendable, Hashable {
    /// The item's position in feed order.
    public var index: Int
    /// The first column the item takes, in reading order (column 0 is the rightmost one right-to-left).
    public var column: Int
    /// How many columns it takes.
    public var columnSpan: Int
    /// The whole cell.
    public var frame: DeviceRect
    /// The slot reserved for the photo: the content width, and the photo's height clamped to the
    /// minimum and maximum photo heights.
    public var photoSlot: DeviceRect
    /// The photo itself: the aspect fit of the image into the slot, centred.
    public var photoFrame: DeviceRect
    /// The annotation below the photo; zero height when there is none.
    public var annotationFrame: DeviceRect

    public init(
        index: Int, column: Int, columnSpan: Int, frame: DeviceRect, photoSlot: DeviceRect, photoFrame: DeviceRect,
        annotationFrame: DeviceRect
    ) {
        self.index = index
        self.column = column
        self.columnSpan = columnSpan
        self.frame = frame
        self.photoSlot = photoSlot
        self.photoFrame = photoFrame
        self.annotationFrame = annotationFrame
    }
}

/// Everything the engine needs to go on placing items after a given one: what a resume cursor carries.
public struct WaterfallState: Sendable, Hashable {
    /// The index the next placed item gets.
    public var nextIndex: Int
    /// Each column's height in device pixels: the top of the next item placed in it.
    public var columnHeights: [Int]
    /// The next column of the `leftToRight` / `rightToLeft` round robin (0 for `shortestFirst`).
    public var nextRoundRobinColumn: Int
    /// The lowest cell bottom so far, in device pixels (the insets' top when nothing is placed).
    public var contentBottom: Int

    public init(nextIndex: Int, columnHeights: [Int], contentBottom: Int, nextRoundRobinColumn: Int = 0) {
        self.nextIndex = nextIndex
        self.columnHeights = columnHeights
        self.contentBottom = contentBottom
        self.nextRoundRobinColumn = nextRoundRobinColumn
    }
}

/// The waterfall engine: each item goes into the currently shortest column, ties to the first column in
/// reading order (or the column the configured placement order and tolerance pick). An item spanning several
/// columns goes into the window of adjacent columns whose tallest column is lowest (the masonry.js rule), ties to
/// the first window in reading order, and every column of the window grows to its bottom.
///
/// The engine is a value: copy it to branch a layout, or save its ``state`` and resume later with exactly the
/// same results. It knows nothing about feeds, images or fonts.
public struct WaterfallEngine: Sendable {
    public let grid: WaterfallGrid
    public private(set) var state: WaterfallState

    /// Starts an empty layout.
    ///
    /// - Throws: `WaterfallConfigurationError` when the configuration cannot be laid out.
    public init(configuration: WaterfallConfiguration) throws(WaterfallConfigurationError) {
        let grid = try WaterfallGrid(configuration)
        self.grid = grid
        state = WaterfallState(
            nextIndex: 0, columnHeights: Array(repeating: grid.insets.top, count: grid.columnCount),
            contentBottom: grid.insets.top,
            nextRoundRobinColumn: grid.placement == .rightToLeft ? grid.columnCount - 1 : 0)
    }

    /// Continues a layout from a saved state.
    ///
    /// - Throws: `WaterfallConfigurationError` when the configuration cannot be laid out or the state does not
    ///   belong to it (another column count, or heights above the top inset's).
    public init(configuration: WaterfallConfiguration, resumingFrom state: WaterfallState)
        throws(WaterfallConfigurationError)
    {
        let grid = try WaterfallGrid(configuration)
        guard state.columnHeights.count == grid.columnCount, state.nextIndex >= 0,
            state.columnHeights.allSatisfy({ $0 >= grid.insets.top }), state.contentBottom >= grid.insets.top,
            (0..<grid.columnCount).contains(state.nextRoundRobinColumn)
        else {
            throw WaterfallConfigurationError(
                option: "resume", message: "the saved state does not fit a \(grid.columnCount)-column layout")
        }
        self.grid = grid
        self.state = state
    }

    /// The first column of the window an item of `span` columns goes to next.
    ///
    /// One-column items follow the placement order: the shortest column (or the first in reading order within the
    /// order tolerance of it), or the round robin. Wider items take the window whose tallest column is lowest.
    public func nextColumn(span: Int = 1) -> Int {
        let heights = state.columnHeights
        if span == 1 {
            switch grid.placement {
            case .leftToRight, .rightToLeft: return state.nextRoundRobinColumn
            case .shortestFirst where grid.orderTolerance == 0:
                // The common case, in one pass: the first column of the smallest height.
                var best = 0
                for column in 1..<heights.count where heights[column] < heights[best] { best = column }
                return best
            case .shortestFirst:
                let limit = heights.min()! + grid.orderTolerance
                return heights.firstIndex { $0 <= limit }!
            }
        }
        var best = 0
        var bestTop = Int.max
        for start in 0...(heights.count - span) {
            let top = heights[start..<(start + span)].max()!
            if top < bestTop {
                best = start
                bestTop = top
            }
        }
        return best
    }

    /// Where an item of this span would go if it were placed now: its first column and its top.
    ///
    /// Lets a caller act on the next item's position (cut a page before it, say) without placing it.
    public func nextPosition(for span: ColumnSpan = .single) -> (column: Int, top: Int) {
        let count = grid.columnCount(for: span)
        let column = nextColumn(span: count)
        return (column, state.columnHeights[column..<(column + count)].max()!)
    }

    /// The container's size so far in device pixels: the full width, and the lowest cell plus the bottom inset.
    public var contentSize: (width: Int, height: Int) {
        (grid.containerWidth, state.contentBottom + grid.insets.bottom)
    }

    /// The photo slot and photo frame for an image in a column, relative to the cell's content origin.
    ///
    /// The slot is the content width wide and as tall as the aspect fit of the image into
    /// `contentWidth × maximumPhotoHeight`, but no lower than the minimum photo height. The photo is that aspect
    /// fit, centred in the slot (AVMakeRectWithAspectRatioInsideRect); heights round to the nearest device pixel,
    /// centring offsets round down.
    public func photoGeometry(for photoSize: Size, contentWidth: Int) -> (slot: DeviceRect, photo: DeviceRect) {
        let bounds = Rect(
            x: 0, y: 0, width: Double(contentWidth),
            height: grid.maximumPhotoHeight.map(Double.init) ?? .infinity)
        let fitted = aspectFit(photoSize, inside: bounds)
        let photoWidth = min(contentWidth, Int(fitted.width.rounded(.toNearestOrAwayFromZero)))
        var photoHeight = Int(fitted.height.rounded(.toNearestOrAwayFromZero))
        if let maximum = grid.maximumPhotoHeight { photoHeight = min(photoHeight, maximum) }
        let slotHeight = max(photoHeight, grid.minimumPhotoHeight)
        let slot = DeviceRect(x: 0, y: 0, width: contentWidth, height: slotHeight)
        let photo = DeviceRect(
            x: (contentWidth - photoWidth) / 2, y: (slotHeight - photoHeight) / 2, width: photoWidth,
            height: photoHeight)
        return (slot, photo)
    }

    /// Places the next item.
    ///
    /// - Parameter item: The item's photo size, annotation height and span.
    /// - Returns: Its frames in device pixels.
    public mutating func place(_ item: WaterfallItem) -> PlacedItem {
        let span = grid.columnCount(for: item.span)
        let (column, top) = nextPosition(for: item.span)
        let columns = column..<(column + span)
        // Right-to-left, the window's last column in reading order is its leftmost on screen.
        let x = grid.columnX[grid.direction == .leftToRight ? column : column + span - 1]
        let width = grid.cellWidth(spanning: span)
        let contentWidth = width - 2 * grid.cellPadding
        let padding = grid.cellPadding
        let (slot, photo) = photoGeometry(for: item.photoSize, contentWidth: contentWidth)
        let annotationHeight = grid.deviceLengthRoundingUp(item.annotationHeight)
        let annotationTop = top + padding + slot.height + (annotationHeight > 0 ? grid.annotationSpacing : 0)
        let cellHeight = annotationTop + annotationHeight + padding - top

        let placed = PlacedItem(
            index: state.nextIndex,
            column: column,
            columnSpan: span,
            frame: DeviceRect(x: x, y: top, width: width, height: cellHeight),
            photoSlot: DeviceRect(x: x + padding, y: top + padding, width: slot.width, height: slot.height),
            photoFrame: DeviceRect(
                x: x + padding + photo.x, y: top + padding + photo.y, width: photo.width, height: photo.height),
            annotationFrame: DeviceRect(x: x + padding, y: annotationTop, width: contentWidth, height: annotationHeight))
        for index in columns { state.columnHeights[index] = top + cellHeight + grid.rowGap }
        state.contentBottom = max(state.contentBottom, top + cellHeight)
        state.nextIndex += 1
        state.nextRoundRobinColumn = nextRoundRobinColumn(after: columns)
        return placed
    }

    /// The round robin continues after the window just filled (0 when the order is not a round robin).
    private func nextRoundRobinColumn(after columns: Range<Int>) -> Int {
        let count = grid.columnCount
        switch grid.placement {
        case .shortestFirst: return 0
        case .leftToRight: return columns.upperBound % count
        case .rightToLeft: return (columns.lowerBound - 1 + count) % count
        }
    }
}
