import FeedIngest
import FeedLayout
import Foundation
import LayoutPages
import WaterfallLayout

/// What a `LayoutJob` tells its caller while it runs: a command prints these, a server logs them.
public enum LayoutJobEvent: Sendable {
    /// A feed's run begins.
    case started(feed: String)
    /// How far the feed's run has come (after each batch of items).
    case progress(LayoutProgress, feed: String)
    /// A feed's run has ended (successfully or not); anything reported next is about its outcome.
    case ended(feed: String)
    /// A line for a person: a run's summary, a feed-wide warning, the batch's totals.
    case note(String)
    /// A feed of a batch failed; the batch goes on. `record` is the NDJSON line for the page stream
    /// (`{"feed": …, "error": …}`) when pages go to standard output, `nil` when they go to files.
    case failed(feed: String, message: String, record: [UInt8]?)
}

/// One `layout` job: a single feed, or a batch of feeds (several arguments, folders, a list on standard input),
/// written as page files under `output` or as NDJSON pages on standard output.
///
/// Alone, a feed's errors end the job. In a batch each feed gets `output/NAME/`, every page on standard output
/// carries its feed, and a feed that fails is reported (`LayoutJobEvent.failed`) while the others go on.
public final class LayoutJob {
    public let pipeline: LayoutPipeline
    private let output: String?
    private let pretty: Bool
    private let resume: String?
    private let report: (LayoutJobEvent) -> Void

    /// Totals over a batch.
    private var folderNames = FeedBatch.FolderNames()
    private var feeds = 0
    private var failedFeeds = 0
    private var items = 0
    private var pages = 0
    private var someInputsFailed = false

    /// - Parameters:
    ///   - pipeline: The layout every feed gets.
    ///   - output: The folder for page files; `nil` for NDJSON pages on standard output.
    ///   - pretty: Indent page files.
    ///   - resume: A cursor to continue from (one feed only).
    ///   - report: Receives what a person should be told, in order.
    public init(
        pipeline: LayoutPipeline, output: String?, pretty: Bool, resume: String?,
        report: @escaping (LayoutJobEvent) -> Void
    ) {
        self.pipeline = pipeline
        self.output = output
        self.pretty = pretty
        self.resume = resume
        self.report = report
    }

    /// Lays out the feeds the arguments name (see `FeedBatch.input(for:)`).
    ///
    /// - Returns: Whether some input failed (an unreadable image or feed): exit code 1 for a command.
    /// - Throws: `LayoutError` when a single feed cannot be laid out, or a usage error (bad options, a cursor
    ///   given to a batch) in any case.
    public func run(arguments: [String]) async throws -> Bool {
        let started = ContinuousClock.now
        switch try FeedBatch.input(for: arguments) {
        case .feeds(let list) where list.count == 1:
            try await layOut(list[0], prefix: Data(), inBatch: false)
            return someInputsFailed
        case .standardInputFeed(let prefix):
            try await layOut("-", prefix: prefix, inBatch: false)
            return someInputsFailed
        case .feeds(let list):
            try checkBatch()
            for feed in list { try await layOut(feed, prefix: Data(), inBatch: true) }
        case .standardInputList(let prefix):
            try checkBatch()
            try await FeedBatch.forEachListedFeed(startingWith: prefix) { feed in
                try await layOut(feed, prefix: Data(), inBatch: true)
            }
        }
        var line = "\(feeds) feed\(feeds == 1 ? "" : "s"): \(items) items in \(pages) page\(pages == 1 ? "" : "s")"
        line += ", \(failedFeeds) feed\(failedFeeds == 1 ? "" : "s") failed"
        line += "; \(Int(((ContinuousClock.now - started).seconds * 1000).rounded())) ms"
        report(.note(line))
        return someInputsFailed || failedFeeds > 0
    }

    private func checkBatch() throws(LayoutError) {
        if resume != nil {
            throw LayoutError(.invalidOptions, "--resume continues one feed's layout: pass that feed alone")
        }
    }

    /// Lays out one feed. Alone its errors end the job; in a batch they are reported and the batch goes on.
    private func layOut(_ feed: String, prefix: Data, inBatch: Bool) async throws {
        let name = feed == "-" ? "stdin" : feed
        var directory = output
        if inBatch, let output {
            directory = output + "/" + folderNames.name(for: feed)
        }
        report(.started(feed: name))
        do {
            let sink = try PageWriter(
                directory: directory, pretty: pretty, breakpoints: pipeline.options.breakpoints,
                feed: inBatch ? feed : nil)
            let started = ContinuousClock.now
            let summary = try await pipeline.run(
                feedPath: feed, resume: resume, standardInputPrefix: prefix,
                onProgress: { [report] in report(.progress($0, feed: name)) }, onPage: { try sink.write($0) })
            try sink.finish()
            report(.ended(feed: name))
            for line in summary.report(
                grids: pipeline.grids, destination: directory, elapsed: ContinuousClock.now - started,
                feed: inBatch ? name : nil)
            {
                report(.note(line))
            }
            feeds += 1
            items += summary.items
            pages += summary.pages
            if summary.imageFailures > 0 { someInputsFailed = true }
        } catch let error as LayoutError {
            report(.ended(feed: name))
            guard inBatch, !error.isUsageError else { throw error }
            feeds += 1
            failedFeeds += 1
            var record: [UInt8]?
            if output == nil {
                var json = JSONWriter()
                Records.writeFeedError(feed: feed, error: error, into: &json)
                json.appendRaw("\n")
                record = json.takeBytes()
            }
            report(
                .failed(
                    feed: feed, message: error.message.hasPrefix(feed) ? error.message : "\(feed): \(error.message)",
                    record: record))
        }
    }
}
