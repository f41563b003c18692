/// One pin as the engine sees it: how big its photo is and how tall its annotation is.
public struct WaterfallItem: Sendable, Hashable {
    /// The photo's display size (after EXIF orientation) or any size with its aspect ratio.
    public var photoSize: Size
    /// The annotation's height in CSS pixels at the grid's content width; 0 when the pin has no annotation.
    public var annotationHeight: Double

    public init(photoSize: Size, annotationHeight: Double) {
        self.photoSize = photoSize
        self.annotationHeight = annotationHeight
    }
}

/// Where one pin went, in device pixels.
public struct PlacedItem: Sendable, Hashable {
    /// The item's position in feed order.
    public var index: Int
    /// The column in reading order (column 0 is the rightmost one right-to-left).
    public var column: Int
    /// The whole cell.
    public var frame: DeviceRect
    /// The slot reserved for the photo: the content width, and the photo's height clamped to the
    /// minimum and maximum photo heights.
    public var photoSlot: DeviceRect
    /// The photo itself: the aspect fit of the image into the slot, centred.
    public var photoFrame: DeviceRect
    /// The annotation below the photo; zero height when there is none.
    public var annotationFrame: DeviceRect
}

/// Everything the engine needs to go on placing items after a given one: what a resume cursor carries.
public struct WaterfallState: Sendable, Hashable {
    /// The index the next placed item gets.
    public var nextIndex: Int
    /// Each column's height in device pixels: the top of the next item placed in it.
    public var columnHeights: [Int]
    /// The lowest cell bottom so far, in device pixels (the insets' top when nothing is placed).
    public var contentBottom: Int

    public init(nextIndex: Int, columnHeights: [Int], contentBottom: Int) {
        self.nextIndex = nextIndex
        self.columnHeights = columnHeights
        self.contentBottom = contentBottom
    }
}

/// The waterfall engine: each item goes into the currently shortest column, ties to the first column in
/// reading order.
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
            contentBottom: grid.insets.top)
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
            state.columnHeights.allSatisfy({ $0 >= grid.insets.top }), state.contentBottom >= grid.insets.top
        else {
            throw WaterfallConfigurationError(
                option: "resume", message: "the saved state does not fit a \(grid.columnCount)-column layout")
        }
        self.grid = grid
        self.state = state
    }

    /// The column the next item will go to: the shortest, the first in reading order on ties.
    public var nextColumn: Int {
        var best = 0
        for column in 1..<state.columnHeights.count where state.columnHeights[column] < state.columnHeights[best] {
            best = column
        }
        return best
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
    public func photoGeometry(for photoSize: Size) -> (slot: DeviceRect, photo: DeviceRect) {
        let contentWidth = grid.contentWidth
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

    /// Places the next item in the shortest column.
    ///
    /// - Parameter item: The item's photo size and annotation height.
    /// - Returns: Its frames in device pixels.
    public mutating func place(_ item: WaterfallItem) -> PlacedItem {
        let column = nextColumn
        let top = state.columnHeights[column]
        let x = grid.columnX[column]
        let padding = grid.cellPadding
        let (slot, photo) = photoGeometry(for: item.photoSize)
        let annotationHeight = grid.deviceLengthRoundingUp(item.annotationHeight)
        let annotationTop = top + padding + slot.height + (annotationHeight > 0 ? grid.annotationSpacing : 0)
        let cellHeight = annotationTop + annotationHeight + padding - top

        let placed = PlacedItem(
            index: state.nextIndex,
            column: column,
            frame: DeviceRect(x: x, y: top, width: grid.columnWidth, height: cellHeight),
            photoSlot: DeviceRect(x: x + padding, y: top + padding, width: slot.width, height: slot.height),
            photoFrame: DeviceRect(
                x: x + padding + photo.x, y: top + padding + photo.y, width: photo.width, height: photo.height),
            annotationFrame: DeviceRect(
                x: x + padding, y: annotationTop, width: grid.contentWidth, height: annotationHeight))
        state.columnHeights[column] = top + cellHeight + grid.rowGap
        state.contentBottom = max(state.contentBottom, top + cellHeight)
        state.nextIndex += 1
        return placed
    }
}
