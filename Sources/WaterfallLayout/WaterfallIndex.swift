/// The placed items of a layout, indexed for the queries a scrolling client makes: which items intersect the
/// visible rectangle, and where item N is.
///
/// A vertical waterfall is indexed by column. Within one column, items stack: each starts at or below the bottom
/// of the one before it. So each column's list is sorted by top and by bottom at once, and a binary search finds
/// where a rectangle starts: a query costs O(c · log n + k) for c columns, n items and k results.
///
/// Every other layout (the horizontal axis, the flow engine, follow mode, whose items are not in feed order along
/// the scroll axis) is indexed by the items' start on the scroll axis: a sorted list and the longest item seen.
/// A query costs O(log n + k + m), m being the items that start within one longest item before the rectangle.
/// Insertion appends when items come in scroll order, as rows do, and otherwise moves the tail after the new one.
public struct WaterfallIndex: Sendable {
    /// The vertical waterfall's grid; `nil` for the scroll-ordered index.
    public let grid: WaterfallGrid?
    /// The scroll axis of the scroll-ordered index.
    public let axis: LayoutAxis
    /// Frames by item index, starting at `firstIndex`.
    private var frames: [DeviceRect] = []
    private var firstIndex: Int?
    /// Per column, the positions in `frames` of the items that take it, in placement order.
    private var columns: [[Int]]
    /// Scroll-ordered index: positions in `frames` sorted by their start on the scroll axis, ties in insertion
    /// order, and the longest extent along it.
    private var byStart: [Int] = []
    private var longest = 0

    /// An index for the items of this grid: by column for a vertical grid, scroll-ordered for a horizontal one.
    public init(grid: WaterfallGrid) {
        if grid.axis == .vertical {
            self.grid = grid
            columns = Array(repeating: [], count: grid.columnCount)
        } else {
            self.grid = nil
            columns = []
        }
        axis = grid.axis
    }

    /// A scroll-ordered index for frames from any layout (the flow engine's, say), scrolling along `axis`.
    public init(axis: LayoutAxis) {
        grid = nil
        self.axis = axis
        columns = []
    }

    /// The number of items indexed.
    public var count: Int { frames.count }

    /// Adds the next placed item. Items must come in index order, as the engines return them.
    public mutating func insert(_ item: PlacedItem) {
        if firstIndex == nil { firstIndex = item.index }
        precondition(item.index == firstIndex! + frames.count, "items must be inserted in index order")
        let position = frames.count
        frames.append(item.frame)
        if grid != nil {
            for column in item.column..<(item.column + item.columnSpan) { columns[column].append(position) }
            return
        }
        let start = scrollStart(item.frame)
        longest = max(longest, scrollLength(item.frame))
        // After the last item that starts at or before this one: appending is the common case.
        if let last = byStart.last, scrollStart(frames[last]) > start {
            var low = 0
            var high = byStart.count
            while low < high {
                let middle = (low + high) / 2
                if scrollStart(frames[byStart[middle]]) <= start { low = middle + 1 } else { high = middle }
            }
            byStart.insert(position, at: low)
        } else {
            byStart.append(position)
        }
    }

    /// The frame of the item with this index, if it is indexed.
    public func frame(ofItem index: Int) -> DeviceRect? {
        guard let firstIndex, index >= firstIndex, index - firstIndex < frames.count else { return nil }
        return frames[index - firstIndex]
    }

    /// The indices of the items whose frames share area with `rect`, in index order.
    public func items(intersecting rect: DeviceRect) -> [Int] {
        guard let firstIndex, rect.width > 0, rect.height > 0 else { return [] }
        guard let grid else { return scrollOrderedItems(intersecting: rect).map { $0 + firstIndex } }
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

    private func scrollStart(_ frame: DeviceRect) -> Int { axis == .vertical ? frame.y : frame.x }
    private func scrollLength(_ frame: DeviceRect) -> Int { axis == .vertical ? frame.height : frame.width }

    private func scrollOrderedItems(intersecting rect: DeviceRect) -> [Int] {
        // No item that starts at or before `rect start - longest` reaches into the rectangle.
        let from = scrollStart(rect) - longest
        let to = axis == .vertical ? rect.maxY : rect.maxX
        var low = 0
        var high = byStart.count
        while low < high {
            let middle = (low + high) / 2
            if scrollStart(frames[byStart[middle]]) <= from { low = middle + 1 } else { high = middle }
        }
        var found: [Int] = []
        while low < byStart.count {
            let frame = frames[byStart[low]]
            if scrollStart(frame) >= to { break }
            if frame.x < rect.maxX, rect.x < frame.maxX, frame.y < rect.maxY, rect.y < frame.maxY {
                found.append(byStart[low])
            }
            low += 1
        }
        return found.sorted()
    }
}
