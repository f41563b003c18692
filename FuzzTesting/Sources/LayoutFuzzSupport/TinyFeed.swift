import Dispatch
import FeedLayout
import Foundation

/// A small RSS feed written once per fuzzer process, so each input runs the real `layout` path (`LayoutPipeline`)
/// without reading anything the fuzzer did not make.
///
/// Items declare their photo sizes (some wide, some tall, one missing) and carry titles and captions, so placement,
/// text measurement and pagination all have work to do; the photo files do not exist, so no probe reads a file
/// and no run touches the network.
public enum TinyFeed {
    /// The feed's path: `feed.xml` in a fresh temporary folder.
    public static let path: String = {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("feedlayout-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let sizes = [(600, 400), (600, 900), (800, 600), (300, 1200), (1024, 1024), (0, 0), (1920, 1080), (500, 700)]
        var xml = #"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>fuzz</title>"#
        for index in 0..<14 {
            let (width, height) = sizes[index % sizes.count]
            let size = width > 0 ? #" width="\#(width)" height="\#(height)""# : ""
            let caption = String(repeating: "A caption that wraps onto several lines, 写真 صور. ", count: 1 + index % 3)
            xml += "<item><title>Pin \(index)</title><guid>pin-\(index)</guid><category>section \(index / 5)</category>"
            xml += "<description>\(caption)</description>"
            xml += #"<media:content url="photos/missing-\#(index).jpg" medium="image"\#(size)/></item>"#
        }
        xml += "</channel></rss>"
        let file = folder.appendingPathComponent("feed.xml")
        try! Data(xml.utf8).write(to: file)
        return file.path
    }()
}

/// Waits for an async operation from the synchronous libFuzzer callback.
///
/// The operation runs on the cooperative pool while the calling (libFuzzer) thread blocks, which is safe because
/// that thread is not one of the pool's.
public func waitFor<Value: Sendable>(_ operation: @escaping @Sendable () async -> Value) -> Value {
    let box = ResultBox<Value>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        box.value = await operation()
        done.signal()
    }
    done.wait()
    return box.value!
}

/// Carries a value from the task that makes it to the thread that waits for it; the semaphore orders the accesses.
private final class ResultBox<Value>: @unchecked Sendable {
    var value: Value?
}

/// The outcome of one layout run: its pages, or the error it stopped with.
public enum LayoutOutcome: Sendable {
    case pages([LayoutPage])
    case failed(any Error)
}

extension LayoutPipeline {
    /// Lays out `TinyFeed` (from `resume` on) and returns the pages or the error.
    public func layOutTinyFeed(resume: String? = nil) -> LayoutOutcome {
        waitFor {
            var pages: [LayoutPage] = []
            do {
                _ = try await run(feedPath: TinyFeed.path, resume: resume) { pages.append($0) }
                return .pages(pages)
            } catch {
                return .failed(error)
            }
        }
    }
}
