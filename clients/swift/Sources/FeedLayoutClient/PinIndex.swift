/// The pins of one layout loaded so far, indexed for the queries a scrolling client makes: which pins intersect a
/// rectangle (`GET /v1/layouts/{id}/items`) and where a scroll should come to rest (`GET /v1/layouts/{id}/snap`),
/// answering exactly what the service answers for the same pins.
///
/// The service keeps frames in whole device pixels (a page's CSS pixels times `layout.scale`) and so does this
/// index: a page's lengths are device pixels divided by the scale, so multiplying back and rounding gives them
/// exactly. A rectangle is turned into device pixels as the service does, rounded outwards (left and top down, right
/// and bottom up), so no pin that touches it is missed. A pin is in the answer when its frame and the rectangle
/// share area: `frame.x < rect.maxX && rect.x < frame.maxX`, and the same on y (a pin that only touches an edge is
/// not); an empty rectangle holds nothing. Pins come in feed order.
///
/// Cost. A waterfall's pins stack in each column (each starts at or below the bottom of the one before it in every
/// column it takes), so each column's list is sorted by start and by end at once: a query looks only at the columns
/// the rectangle crosses, finds its first pin in each by binary search and walks down to the rectangle's end,
/// O(log n + k) per column crossed, for n pins and k answers. Flow rows (and any layout whose columns would not
/// stack) are indexed by start on the scroll axis with the longest pin seen, as the engine's `WaterfallIndex` does:
/// O(log n + k + m), m being the pins that start within one longest pin before the rectangle.
///
/// Pages are added in order (``append(_:)``), as a scrolling client loads them; a layout still being computed
/// simply has fewer pins, as the service's answers do while it runs.
public struct PinIndex: Sendable {
    /// The grid of the layout's pages (from the first page added).
    public let grid: Grid
    /// The loaded pins, in feed order, from ``firstItemIndex``.
    public private(set) var items: [Item] = []
    /// The index of the next page to add.
    public private(set) var nextPageIndex: Int
    /// The feed index of `items[0]`.
    public private(set) var firstItemIndex: Int?
    /// The last added page's `contentHeight`: how far the loaded content reaches on the scroll axis.
    public private(set) var contentHeight: Double = 0
    /// The last added page's cursor (`nil` before any page and after the last).
    public private(set) var cursor: String?
    /// Whether the last page is in (its cursor is `nil`).
    public private(set) var isComplete = false
    /// How far on the scroll axis every pin is loaded: the smallest of the last page's `columnHeights` (the top of
    /// the next pin in the shortest column; the next row's top in a flow layout), infinity once the last page is in,
    /// 0 before any page. A client that shows a rectangle ending above it has every pin it needs.
    public private(set) var loadedExtent: Double = 0

    private let scale: Double
    private let vertical: Bool
    private var frames: [DeviceRect] = []
    /// Per column: positions in `frames`, in feed order. `nil` when the layout is not indexed by column.
    private var lanes: [[Int]]?
    /// Per column: the extent across the scroll axis of the pins in it (low, high), to skip the columns a rectangle
    /// does not cross.
    private var laneExtents: [(low: Int, high: Int)] = []
    /// Positions sorted by start on the scroll axis (ties in feed order), and the longest extent along it.
    private var byStart: [Int] = []
    private var longest = 0
    /// Distinct pin starts on the scroll axis, ascending, each with the first pin that starts there.
    private var starts: [(offset: Int, item: Int)] = []

    /// An empty index for the pages of a layout with this grid; `firstPage` is the index of the first page that
    /// will be added (0 to index a layout from its start).
    public init(grid: Grid, firstPage: Int = 0) {
        self.grid = grid
        scale = grid.scale
        vertical = grid.scrollsVertically
        nextPageIndex = firstPage
        if grid.mode == nil, let columns = grid.columns, columns > 0 {
            lanes = Array(repeating: [], count: columns)
            laneExtents = Array(repeating: (Int.max, Int.min), count: columns)
        }
    }

    /// An index holding these pages, which must follow each other from the first one.
    public init(pages: [Page]) throws {
        guard let first = pages.first else { throw PinIndexError.noPages }
        self.init(grid: first.layout, firstPage: first.page.index)
        for page in pages { try append(page) }
    }

    /// Adds the next page's pins. Pages come in order: the page must be ``nextPageIndex``, of the same grid.
    public mutating func append(_ page: Page) throws {
        guard page.page.index == nextPageIndex else {
            throw PinIndexError.outOfOrder(expected: nextPageIndex, got: page.page.index)
        }
        guard page.layout.width == grid.width, page.layout.columns == grid.columns, page.layout.scale == grid.scale,
            page.layout.mode == grid.mode, page.layout.axis == grid.axis
        else { throw PinIndexError.otherLayout(page: page.page.index) }
        for item in page.items {
            let expected = firstItemIndex.map { $0 + items.count } ?? item.index
            guard item.index == expected else {
                throw PinIndexError.itemOutOfOrder(page: page.page.index, expected: expected, got: item.index)
            }
            insert(item)
        }
        nextPageIndex += 1
        contentHeight = page.contentHeight
        cursor = page.cursor
        isComplete = page.cursor == nil
        loadedExtent = isComplete ? .infinity : (page.columnHeights.min() ?? page.contentHeight)
    }

    /// The number of pins loaded.
    public var count: Int { items.count }

    /// Whether queries go by column (a waterfall whose columns stack), rather than by start alone.
    var isIndexedByColumn: Bool { lanes != nil }

    /// The pin with this feed index, if it is loaded.
    public func item(at index: Int) -> Item? {
        guard let firstItemIndex, index >= firstItemIndex, index - firstItemIndex < items.count else { return nil }
        return items[index - firstItemIndex]
    }

    /// The pins whose frames share area with `rect` (CSS pixels), in feed order: the service's
    /// `GET /v1/layouts/{id}/items?x=&y=&width=&height=` for the pins loaded so far.
    public func items(in rect: Rect) -> [Item] {
        itemPositions(in: deviceRect(rect)).map { items[$0] }
    }

    /// The feed indexes of ``items(in:)``.
    public func itemIndexes(in rect: Rect) -> [Int] {
        guard let firstItemIndex else { return [] }
        return itemPositions(in: deviceRect(rect)).map { $0 + firstItemIndex }
    }

    /// Where a scroll proposed to end at `offset` (CSS pixels on the scroll axis: y, or x for the horizontal
    /// waterfall) should come to rest: the service's `GET /v1/layouts/{id}/snap`. `forward` gives the first pin
    /// start at or after the offset, `backward` the last at or before it, `nearest` the closer of those two (a tie
    /// goes back); beyond the last start or before the first, the closest there is. `nil` before any pin.
    public func snap(_ offset: Double, direction: SnapDirection = .nearest) -> SnapTarget? {
        guard !starts.isEmpty else { return nil }
        let device = offset * scale
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if Double(starts[middle].offset) < device { low = middle + 1 } else { high = middle }
        }
        let after = low < starts.count ? starts[low] : nil
        let before: (offset: Int, item: Int)?
        if let after, Double(after.offset) == device { before = after } else { before = low > 0 ? starts[low - 1] : nil }
        let chosen: (offset: Int, item: Int)?
        switch direction {
        case .forward: chosen = after ?? before
        case .backward: chosen = before ?? after
        case .nearest:
            if let before, let after {
                chosen = device - Double(before.offset) <= Double(after.offset) - device ? before : after
            } else {
                chosen = before ?? after
            }
        }
        return chosen.map { SnapTarget(offset: Double($0.offset) / scale, index: $0.item) }
    }

    // MARK: Device pixels

    /// The largest coordinate the service handles (2^53 − 1); a rectangle is clamped to it as the service clamps.
    static let maximumCoordinate = (1 << 53) - 1

    func deviceRect(_ rect: Rect) -> DeviceRect {
        let limit = Double(Self.maximumCoordinate)
        func clamp(_ value: Double) -> Int { value.isNaN ? 0 : Int(max(-limit, min(limit, value))) }
        let left = clamp((rect.x * scale).rounded(.down))
        let top = clamp((rect.y * scale).rounded(.down))
        let right = clamp(((rect.x + rect.width) * scale).rounded(.up))
        let bottom = clamp(((rect.y + rect.height) * scale).rounded(.up))
        return DeviceRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    func device(_ length: Double) -> Int { Int((length * scale).rounded()) }

    // MARK: Indexing

    private mutating func insert(_ item: Item) {
        if firstItemIndex == nil { firstItemIndex = item.index }
        let position = frames.count
        let frame = DeviceRect(
            x: device(item.frame.x), y: device(item.frame.y), width: device(item.frame.width),
            height: device(item.frame.height))
        items.append(item)
        frames.append(frame)
        let start = vertical ? frame.y : frame.x
        let length = vertical ? frame.height : frame.width
        // Columns: each pin goes into every column it takes, which must stack (else the layout is indexed by start
        // alone, still exactly).
        if lanes != nil {
            let end = start + length
            let low = vertical ? frame.x : frame.y
            let high = low + (vertical ? frame.width : frame.height)
            if item.column >= 0, item.columnSpan >= 1, item.column + item.columnSpan <= lanes!.count {
                for lane in item.column..<(item.column + item.columnSpan) {
                    if let last = lanes![lane].last {
                        let previous = frames[last]
                        let previousStart = vertical ? previous.y : previous.x
                        let previousEnd = previousStart + (vertical ? previous.height : previous.width)
                        if start < previousStart || end < previousEnd {
                            lanes = nil
                            break
                        }
                    }
                    lanes![lane].append(position)
                    laneExtents[lane].low = min(laneExtents[lane].low, low)
                    laneExtents[lane].high = max(laneExtents[lane].high, high)
                }
            } else {
                lanes = nil
            }
        }
        // By start: appending is the common case; else after the last pin that starts at or before this one.
        longest = max(longest, length)
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
        // Snap points: distinct starts, each with its first pin.
        if let last = starts.last, last.offset >= start {
            if last.offset == start { return }
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle].offset < start { low = middle + 1 } else { high = middle }
            }
            if low < starts.count, starts[low].offset == start { return }
            starts.insert((start, item.index), at: low)
        } else {
            starts.append((start, item.index))
        }
    }

    private func scrollStart(_ frame: DeviceRect) -> Int { vertical ? frame.y : frame.x }

    private func intersects(_ frame: DeviceRect, _ rect: DeviceRect) -> Bool {
        frame.x < rect.maxX && rect.x < frame.maxX && frame.y < rect.maxY && rect.y < frame.maxY
    }

    /// Positions in `items` of the pins that share area with `rect`, ascending.
    func itemPositions(in rect: DeviceRect) -> [Int] {
        guard !frames.isEmpty, rect.width > 0, rect.height > 0 else { return [] }
        let rectStart = vertical ? rect.y : rect.x
        let rectEnd = vertical ? rect.maxY : rect.maxX
        guard let lanes else {
            // No pin that starts at or before `rect start - longest` reaches into the rectangle.
            let from = rectStart - longest
            var low = 0
            var high = byStart.count
            while low < high {
                let middle = (low + high) / 2
                if scrollStart(frames[byStart[middle]]) <= from { low = middle + 1 } else { high = middle }
            }
            var found: [Int] = []
            while low < byStart.count {
                let frame = frames[byStart[low]]
                if scrollStart(frame) >= rectEnd { break }
                if intersects(frame, rect) { found.append(byStart[low]) }
                low += 1
            }
            return found.sorted()
        }
        let acrossLow = vertical ? rect.x : rect.y
        let acrossHigh = vertical ? rect.maxX : rect.maxY
        var lists: [[Int]] = []
        for (lane, positions) in lanes.enumerated() {
            let extent = laneExtents[lane]
            guard !positions.isEmpty, extent.low < acrossHigh, acrossLow < extent.high else { continue }
            // The lane's first pin that ends after the rectangle's start.
            var low = 0
            var high = positions.count
            while low < high {
                let middle = (low + high) / 2
                let frame = frames[positions[middle]]
                let end = vertical ? frame.maxY : frame.maxX
                if end <= rectStart { low = middle + 1 } else { high = middle }
            }
            var found: [Int] = []
            while low < positions.count {
                let frame = frames[positions[low]]
                if scrollStart(frame) >= rectEnd { break }
                if intersects(frame, rect) { found.append(positions[low]) }
                low += 1
            }
            if !found.isEmpty { lists.append(found) }
        }
        // Each list is in feed order; a pin spanning columns is in several.
        if lists.count == 1 { return lists[0] }
        var merged = lists.flatMap { $0 }
        merged.sort()
        var result: [Int] = []
        result.reserveCapacity(merged.count)
        for position in merged where result.last != position { result.append(position) }
        return result
    }
}

/// A rectangle in whole device pixels, as the service keeps frames.
struct DeviceRect: Hashable, Sendable {
    var x: Int, y: Int, width: Int, height: Int
    var maxX: Int { x + width }
    var maxY: Int { y + height }
}

/// Pages that cannot go into a ``PinIndex``.
public enum PinIndexError: Error, Hashable, Sendable, CustomStringConvertible {
    case noPages
    /// A page that is not the next one.
    case outOfOrder(expected: Int, got: Int)
    /// A page of another layout (another width, scale, mode or axis).
    case otherLayout(page: Int)
    /// A page whose pins do not continue the loaded ones.
    case itemOutOfOrder(page: Int, expected: Int, got: Int)

    public var description: String {
        switch self {
        case .noPages: "no pages to index"
        case .outOfOrder(let expected, let got): "page \(got) added where page \(expected) comes next; add pages in order"
        case .otherLayout(let page): "page \(page) is of another layout (width, columns, scale, mode or axis differ)"
        case .itemOutOfOrder(let page, let expected, let got):
            "page \(page) holds pin \(got) where pin \(expected) comes next"
        }
    }
}
