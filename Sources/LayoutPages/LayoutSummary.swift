import FeedIngest
import WaterfallLayout

/// What a run did, for the summary line and the exit code.
public struct LayoutSummary: Sendable {
    public var items = 0
    public var pages = 0
    public var imagesProbed = 0
    /// Items whose image could not be read (missing, corrupt, refused); their photo size was declared or guessed.
    /// Any makes the command exit with 1.
    public var imageFailures = 0
    public var warnings = 0
    /// Warnings counted by code, for the summary.
    public var warningsByCode: [String: Int] = [:]
    public var feedFormat: String?
    /// Problems with the feed as a whole (not with one item): where the parser recovered, junk after the root.
    public var feedWarnings: [FeedWarning] = []
    /// Time per stage. Probing and measuring run in concurrent tasks: theirs is the sum over the tasks.
    public var stageTimes = StageTimes()
}

/// Where a run's time went.
public struct StageTimes: Sendable {
    /// Reading and parsing the feed.
    public var parse: Duration = .zero
    /// Probing photos (summed over concurrent tasks).
    public var probe: Duration = .zero
    /// Measuring titles and captions (summed over concurrent tasks).
    public var measure: Duration = .zero
    /// Placing items and cutting pages.
    public var place: Duration = .zero
    /// Handing pages to the caller (writing files or standard output).
    public var write: Duration = .zero
}

/// How far a run has come, reported after each batch of items (for a progress line).
public struct LayoutProgress: Sendable {
    public var items: Int
    public var imagesProbed: Int
    public var imageFailures: Int
    public var pages: Int
}

extension LayoutSummary {
    /// The one-line summary printed on standard error after a run.
    public func line(grids: [WaterfallGrid], destination: String?, elapsed: Duration) -> String {
        var text = "laid out \(items) items in \(pages) page\(pages == 1 ? "" : "s")"
        if grids.count == 1, let grid = grids.first {
            text += " (\(grid.columnCount) columns of \(cssNumber(Double(grid.columnWidth) / grid.scale)) px)"
        } else {
            let layouts = grids.map {
                "\(cssNumber(Double($0.containerWidth) / $0.scale)) px: \($0.columnCount) columns"
            }
            text += " (\(grids.count) layouts: " + layouts.joined(separator: ", ") + ")"
        }
        text += ": \(imagesProbed) images probed, \(imageFailures) failed"
        if !warningsByCode.isEmpty {
            text +=
                "; warnings: "
                + warningsByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        text += "; " + String(Int((elapsed.seconds * 1000).rounded())) + " ms"
        let times = stageTimes
        let stages = [
            ("parse", times.parse), ("probe", times.probe), ("measure", times.measure), ("place", times.place),
            ("write", times.write),
        ]
        text +=
            " ("
            + stages.map { name, time in
                "\(name) \(Int((time.seconds * 1000).rounded())) ms"
            }.joined(separator: ", ") + "; probe and measure summed over tasks)"
        if let destination { text += " → \(destination)" }
        return text
    }
}

extension Duration {
    /// The duration in seconds, as a `Double` (summaries print milliseconds, progress lines rates).
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
