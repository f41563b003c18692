import FeedLayout

/// The bounds the service holds the query and path values of its read routes to, in one place: the router and the
/// page fast path check them alike, and `schemas/feedlayout-service.openapi.yaml` states each (the contract check,
/// `scripts/check-contract`, holds the two together).
enum QueryBounds {
    /// `layout`: a breakpoint's index, below the most breakpoints a layout may have (``OptionLimits/breakpoints``).
    /// An index within these bounds that the layout does not have names nothing (`404`), as a page past the end does.
    static let layoutIndices = 0...(OptionLimits.breakpoints.bounds.upperBound - 1)
    /// `wait`, in seconds: ``ServiceSettings/maximumWait``'s default (the fast path holds requests to it).
    static let defaultMaximumWait = 60
    /// `x`, `y`, `width`, `height` and `offset`: finite CSS px within ±10^12, far past any layout's extent.
    static let maximumCoordinate = 1e12
}
