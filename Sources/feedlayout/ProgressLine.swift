import FeedLayout
import Foundation

/// The progress line on standard error: only on a terminal, redrawn at most ten times a second, cleared before
/// anything else is printed.
final class ProgressLine {
    let isEnabled: Bool
    private let clock = ContinuousClock()
    private var started: ContinuousClock.Instant
    private var lastDrawn: ContinuousClock.Instant?
    private var visible = false

    init(quiet: Bool) {
        isEnabled = !quiet && isatty(STDERR_FILENO) == 1
        started = clock.now
    }

    /// Starts timing a new feed.
    func start() { started = clock.now }

    func update(_ progress: LayoutProgress, feed: String) {
        guard isEnabled else { return }
        let now = clock.now
        if let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
        lastDrawn = now
        let seconds = max(0.001, (now - started).seconds)
        var text = "\(feed): \(progress.items) items, \(progress.imagesProbed) images probed, "
        text +=
            "\(progress.imageFailures) failed, \(progress.pages) pages, \(Int(Double(progress.items) / seconds)) items/s"
        FileHandle.standardError.write(Data(("\r\u{1B}[2K" + text).utf8))
        visible = true
    }

    func clear() {
        guard visible else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
        visible = false
    }
}
