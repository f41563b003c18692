import LayoutStore

/// `--max-items`: a layout lays out at most this many of its feed's items, then ends `done` with a `truncated`
/// warning.
///
/// Each of a layout's layouts (one per breakpoint) keeps its pages up to and including the one that holds the
/// limit's item, and no page after it: pages are never cut, so every stored page is byte for byte the one
/// `feedlayout layout` writes for the same feed, and a layout holds from `maximum` items up to `maximum` plus one
/// page's worth. The run stops once every layout has reached the limit.
///
/// Why a warning on a finished layout, not a `413`/`422` when the feed is posted: how many items a feed has is only
/// known by reading all of it (RSS, Atom, JSON Feed, broken markup repaired as it goes), which is the layout's
/// work, done after the post is answered; refusing at the post would mean parsing every feed twice. A client reads
/// `warnings.truncated` in `GET /v1/layouts/{id}` and knows the layout holds the feed's first items only.
struct ItemLimit {
    /// The warning a truncated layout carries (count 1).
    static let warningCode = "truncated"

    /// Thrown from a page's handler to stop the run once every layout reached the limit.
    struct Reached: Error {}

    let maximum: Int?
    /// Items stored so far, by layout index.
    private var items: [Int]

    /// - Parameters:
    ///   - layouts: How many layouts (breakpoints) the layout has.
    ///   - resumedItems: Items its stored pages hold already, when it resumes from its last page's cursor (one
    ///     layout only; layouts with breakpoints start again from the beginning).
    init(maximum: Int?, layouts: Int, resumedItems: Int) {
        self.maximum = maximum
        items = Array(repeating: 0, count: max(1, layouts))
        items[0] = resumedItems
    }

    /// Whether the page is kept (its layout has not reached the limit before it), counting its items.
    mutating func admits(_ page: PageWrite) -> Bool {
        guard let maximum else { return true }
        if page.layoutIndex >= items.count { items += Array(repeating: 0, count: page.layoutIndex + 1 - items.count) }
        guard items[page.layoutIndex] < maximum else { return false }
        items[page.layoutIndex] += page.pins.count
        return true
    }

    /// Whether every layout has reached the limit.
    var isReached: Bool {
        guard let maximum else { return false }
        return items.allSatisfy { $0 >= maximum }
    }
}
