import FeedIngest
import WaterfallLayout

extension LayoutSummary {
    /// What a person is told after a run: the summary line, then the feed's own warnings, one per line.
    ///
    /// - Parameter feed: The feed's name, put before each line in a batch; `nil` for a run of one feed.
    public func report(grids: [WaterfallGrid], destination: String?, elapsed: Duration, feed: String? = nil)
        -> [String]
    {
        let summary = line(grids: grids, destination: destination, elapsed: elapsed)
        return [feed.map { "\($0): \(summary)" } ?? summary] + feedWarnings.map { $0.reportLine(feed: feed ?? "feed") }
    }
}

extension FeedWarning {
    /// The warning as a line for a person: `warning: FEED:LINE: message`.
    public func reportLine(feed: String) -> String {
        "warning: \(feed)\(line.map { ":\($0)" } ?? ""): \(message)"
    }
}

extension LayoutError {
    /// Options, fonts and cursors are the caller's to fix (usage, exit code 2); a feed that cannot be read is a
    /// failed input (exit code 1).
    public var isUsageError: Bool {
        switch code {
        case .invalidOptions, .fontUnavailable, .invalidCursor, .cursorMismatch: true
        default: false
        }
    }
}
