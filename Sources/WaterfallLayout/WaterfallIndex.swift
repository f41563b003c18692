/// The placed items of a layout, indexed for the queries a scrolling client makes: which items intersect the
/// visible rectangle, and where item N is.
///
/// Within one column, items stack: each starts at or below the bottom of the one before it. So each column's
/// list is sorted by top and by bottom at once, and a binary search finds where a rectangle starts: a query
/// costs O(c · log n + k) for c columns, n items and k results.
public struct WaterfallIndex: Sendable {
    public let grid: WaterfallGrid
    /// Frames by item index, starting at `firstIndex`.
    private var frames: [DeviceRect] = []
    private var firstIndex: Int?
    /// Per column, the positions in `frames` of the items that take it, in placement order.
    private var columns: [[Int]]

    public init(grid: WaterfallGrid) {
        self.grid = grid
        columns = Array(repeating: [], count: grid.columnCount)
    }

    /// The number of items indexed.
    public var count: Int { frames.count }

    /// Adds the next placed item. Items must come in index order, as the engine places them.
    public mutating func insert(_ item: PlacedItem) {
        if firstIndex == nil { firstIndex = item.index }
        precondition(item.index == firstIndex! + frames.count, "items must be inserted in index order")
        let position = frames.count
        frames.append(item.frame)
        for column in item.column..<(item.column + item.columnSpan) { columns[column].append(position) }
    }

    /// The frame of the item with this index, if it is indexed.
    public func frame(ofItem index: Int) -> DeviceRect? {
        guard let firstIndex, index >= firstIndex, index - firstIndex < frames.count else { return nil }
        return frames[index - firstIndex]
    }

    /// The indices of the items whose frames share area with `rect`, in index order.
    public func items(intersecting rect: DeviceRect) -> [Int] {
        guard let firstIndex, rect.width > 0, rect.height > 0 else { return [] }
        var found: Set<Int> = []
        for (column, positions) in columns.enumerated() {
            // A column owns the gutter after it too: an item spanning columns covers the gutters between them,
            // and a rectangle inside such a gutter must still find it.
            let left = grid.columnX[column]
            guard left < rect.maxX, rect.x < left + grid.columnWidth + grid.columnGap, !positions.isEmpty else { continue }
            // The first item of the column whose bottom is below the rectangle's top.
            var low = 0
            var high = positions.count
            while low < high {
                let middle = (low + high) / 2
                if frames[positions[middle]].maxY <= rect.y { low = middle + 1 } else { high = middle }
            }
            var cursor = low
            while cursor < positions.count, frames[positions[cursor]].y < rect.maxY {
                let frame = frames[positions[cursor]]
                if frame.x < rect.maxX, rect.x < frame.maxX { found.insert(positions[cursor]) }
                cursor += 1
            }
        }
        return found.sorted().map { $0 + firstIndex }
    }
}
