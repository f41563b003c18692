import WaterfallLayout

/// How good a layout is, as a person scrolling it would judge: balanced columns, little empty space, and pins
/// read in about the order the feed gives them.
///
/// The order measures are taken within a page (pages are what a client shows together); the totals carried
/// from page to page are their sum and maximum. Reading order is top to bottom, then in the grid's reading
/// direction: a pin that starts above an earlier one is read before it.
public struct LayoutQuality: Sendable, Hashable {
    /// The tallest column minus the shortest, after the page (device pixels).
    public var columnImbalance: Int
    /// The empty area under the columns, below the tallest one, after the page (device pixels²).
    public var whitespaceArea: Int
    /// Pairs of the page's items that a reader meets in the opposite order to the feed's.
    public var orderInversions: Int
    /// The furthest any item of the page moves between its feed position and its reading position.
    public var largestDisplacement: Int

    /// Measures a page.
    ///
    /// - Parameters:
    ///   - items: The page's placed items, in feed order.
    ///   - columnHeights: Column heights after the page.
    ///   - grid: The grid (column width, reading direction).
    public init(items: [PlacedItem], columnHeights: [Int], grid: WaterfallGrid) {
        let tallest = columnHeights.max() ?? 0
        columnImbalance = tallest - (columnHeights.min() ?? 0)
        // Saturating: a photo declared 1 px wide and millions tall makes a gap whose area leaves `Int`.
        whitespaceArea = columnHeights.reduce(0) { total, height in
            let (area, areaOverflows) = (tallest - height).multipliedReportingOverflow(by: grid.columnWidth)
            let (sum, sumOverflows) = total.addingReportingOverflow(area)
            return areaOverflows || sumOverflows ? Int.max : sum
        }

        // Reading order: by top, then by the reading direction's horizontal order. On the horizontal axis the
        // reader scrolls sideways: by left edge, then top.
        let readingKeys = items.map {
            grid.axis == .horizontal
                ? ($0.frame.x, $0.frame.y) : ($0.frame.y, grid.direction == .leftToRight ? $0.frame.x : -$0.frame.maxX)
        }
        let readingOrder = items.indices.sorted {
            readingKeys[$0] < readingKeys[$1] || (readingKeys[$0] == readingKeys[$1] && $0 < $1)
        }
        var displacement = 0
        for (rank, position) in readingOrder.enumerated() { displacement = max(displacement, abs(rank - position)) }
        largestDisplacement = displacement
        orderInversions = Self.inversions(readingOrder)
    }

    /// Counts pairs out of order in a permutation, by merge sort: O(n log n), so long pages stay cheap.
    static func inversions(_ permutation: [Int]) -> Int {
        var values = permutation
        var scratch = values
        var count = 0
        var width = 1
        while width < values.count {
            var start = 0
            while start < values.count {
                let middle = min(start + width, values.count)
                let end = min(start + 2 * width, values.count)
                var left = start
                var right = middle
                var out = start
                while left < middle, right < end {
                    if values[left] <= values[right] {
                        scratch[out] = values[left]
                        left += 1
                    } else {
                        scratch[out] = values[right]
                        count += middle - left
                        right += 1
                    }
                    out += 1
                }
                while left < middle { scratch[out] = values[left]; left += 1; out += 1 }
                while right < end { scratch[out] = values[right]; right += 1; out += 1 }
                start = end
            }
            swap(&values, &scratch)
            width *= 2
        }
        return count
    }
}

/// The order measures summed and maximised over every page so far; resume cursors carry them.
public struct LayoutQualityTotals: Sendable, Hashable {
    public var orderInversions = 0
    public var largestDisplacement = 0

    public init(orderInversions: Int = 0, largestDisplacement: Int = 0) {
        self.orderInversions = orderInversions
        self.largestDisplacement = largestDisplacement
    }

    mutating func add(_ page: LayoutQuality) {
        orderInversions += page.orderInversions
        largestDisplacement = max(largestDisplacement, page.largestDisplacement)
    }
}
