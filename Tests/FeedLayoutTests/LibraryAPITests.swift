import Foundation
import Logging
import Synchronization
import Testing
import TextMeasure

@testable import FeedLayout

/// The library API a server holds: feeds from memory and from async byte chunks, pages as an async sequence,
/// cancellation, shared resources, and the layout threads.
@Suite(.timeLimit(.minutes(5)))
struct LibraryAPITests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// A feed whose photos are absolute URLs that are never fetched (a loopback address, refused at once with the
    /// same warning every time; a reserved name got one resolver message or another): every layout of it, from any
    /// source, takes the declared sizes, so the sources can be compared byte for byte.
    static func feed(items count: Int) -> String {
        var feed = #"<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>"#
        for index in 0..<count {
            feed += "<item><guid>item-\(index)</guid><title>Pin \(index)</title><description>caption \(index) "
            feed += String(repeating: "word ", count: index % 17) + "</description>"
            feed += "<media:content url=\"https://127.0.0.1/\(index % 5).jpg\" medium=\"image\" "
            feed += "width=\"\(400 + index % 7 * 50)\" height=\"\(300 + index % 11 * 40)\"/></item>\n"
        }
        return feed + "</channel></rss>\n"
    }

    static func pagesJSON(_ pipeline: LayoutPipeline, _ feed: FeedInput) async throws -> [[UInt8]] {
        var pages: [[UInt8]] = []
        _ = try await pipeline.run(feed) { page in
            var json = JSONWriter()
            Records.write(page, into: &json)
            pages.append(json.takeBytes())
        }
        return pages
    }

    static var options: LayoutOptions {
        var options = LayoutOptions()
        options.pagination = PaginationRule(pageSize: 10)
        return options
    }

    @Test func aFeedInMemoryOrInChunksLaysOutAsTheSameFileDoes() async throws {
        let text = Self.feed(items: 57)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-api-\(UUID()).xml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let pipeline = try LayoutPipeline(options: Self.options)
        let fromFile = try await Self.pagesJSON(pipeline, .path(file.path))
        #expect(fromFile.count == 6)
        #expect(try await Self.pagesJSON(pipeline, .bytes(Array(text.utf8))) == fromFile)
        // Chunks of every size from one byte up, as a request body arrives.
        for size in [1, 7, 4096, 1 << 20] {
            let bytes = Array(text.utf8)
            let chunks = AsyncStream<[UInt8]> { continuation in
                for start in stride(from: 0, to: bytes.count, by: size) {
                    continuation.yield(Array(bytes[start..<min(bytes.count, start + size)]))
                }
                continuation.finish()
            }
            #expect(try await Self.pagesJSON(pipeline, .chunks(chunks)) == fromFile, "chunks of \(size)")
        }
    }

    /// A server that names an image root (`feedlayout serve --image-root`): a feed from memory then reads its
    /// relative photos there, as the same feed read from a file in that folder reads them beside it.
    @Test func aFeedFromMemoryReadsItsPhotosUnderTheImageRootAsTheFileInThatFolderDoes() async throws {
        let sample = Self.repository.appendingPathComponent("sample-feed")
        let feed = sample.appendingPathComponent("feed.xml")
        var options = Self.options
        options.imageRoot = sample.path
        let fromFile = try await Self.pagesJSON(try LayoutPipeline(options: Self.options), .path(feed.path))
        let fromMemory = try await Self.pagesJSON(
            try LayoutPipeline(options: options), .bytes(try [UInt8](Data(contentsOf: feed))))
        #expect(fromMemory == fromFile)
        #expect(String(decoding: fromMemory[0], as: UTF8.self).contains(/"sizeFrom": ?"header"/))
        // Without the root, the same bytes read nothing: every photo takes its declared size or the fallback.
        let unrooted = try await Self.pagesJSON(
            try LayoutPipeline(options: Self.options), .bytes(try [UInt8](Data(contentsOf: feed))))
        #expect(!unrooted.contains { String(decoding: $0, as: UTF8.self).contains(/"sizeFrom": ?"header"/) })
    }

    @Test func aFeedFromMemoryNeverReadsALocalFile() async throws {
        // A photo beside the process's working folder, named relatively and as a file: URL.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-untrusted-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Self.repository.appendingPathComponent("sample-feed/photos/espresso.jpg"),
            to: folder.appendingPathComponent("espresso.jpg"))
        let text = """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
            <item><guid>a</guid><media:content url="\(folder.path)/espresso.jpg" medium="image"/></item>
            <item><guid>b</guid><media:content url="file://\(folder.path)/espresso.jpg" medium="image"/></item>
            <item><guid>c</guid><media:content url="espresso.jpg" medium="image"/></item>
            </channel></rss>
            """
        let pipeline = try LayoutPipeline(options: Self.options)
        var warnings: [String] = []
        let summary = try await pipeline.run(.bytes(Array(text.utf8))) { page in
            for item in page.items {
                #expect(item.photo.sizeSource != .header, "item \(item.id) was read from a local file")
                warnings += item.warnings.map(\.code)
            }
        }
        #expect(summary.items == 3)
        #expect(summary.imagesProbed == 0)
        #expect(!warnings.isEmpty)
        // With the folder as the image root (the caller's opt-in), the absolute path and the file: URL are read.
        var trusting = Self.options
        trusting.imageRoot = folder.path
        let opted = try await LayoutPipeline(options: trusting).run(.bytes(Array(text.utf8))) { _ in }
        // The file: URL and the relative reference (under the root) are read; an absolute path is a path only in a
        // feed that is itself a local file.
        #expect(opted.imagesProbed == 2)
        // A URL feed is only ever http(s).
        #expect(throws: LayoutError.self) { try FeedInput.url("file:///etc/passwd") }
        #expect(throws: LayoutError.self) { try FeedInput.url("/etc/passwd") }
    }

    @Test func pagesAsAnAsyncSequenceAreTheRunsPages() async throws {
        let text = Self.feed(items: 33)
        let pipeline = try LayoutPipeline(options: Self.options)
        let expected = try await Self.pagesJSON(pipeline, .bytes(Array(text.utf8)))
        var seen: [[UInt8]] = []
        for try await page in pipeline.pages(of: .bytes(Array(text.utf8))) {
            var json = JSONWriter()
            Records.write(page, into: &json)
            seen.append(json.takeBytes())
        }
        #expect(seen == expected)
    }

    /// A run cancelled while it hands over its first page stops there: it still hands over the pages already made
    /// from the same window of items (placed before the cancellation), then none, and ends with
    /// `CancellationError`, not with the 10,000 pages of the feed. Counted, not timed: the page handler holds the
    /// run until the cancellation has happened, so the test knows where it landed.
    @Test func cancellingAfterTheFirstPageOfAHundredThousandPinsStopsTheRun() async throws {
        let bytes = Array(Self.feed(items: 100_000).utf8)
        let pipeline = try LayoutPipeline(options: Self.options)
        let (firstPage, firstPageHeld) = AsyncStream<Void>.makeStream()
        let handedAfterwards = Mutex<[(page: Int, lastItem: Int)]>([])
        let run = Task {
            try await pipeline.run(.bytes(bytes)) { page in
                guard page.index > 0 else {
                    firstPageHeld.yield()
                    await Self.untilCancelled()
                    return
                }
                handedAfterwards.withLock { $0.append((page.index, page.items.last?.index ?? -1)) }
            }
        }
        for await _ in firstPage { break }
        run.cancel()
        await #expect(throws: CancellationError.self, "the cancelled run ended with a summary") {
            _ = try await run.value
        }
        let handed = handedAfterwards.withLock { $0 }
        // A window of `windowSize` items makes at most this many pages of 10; the first page is one of them.
        let pagesPerWindow = (pipeline.windowSize + 9) / 10
        #expect(handed.count < pagesPerWindow, "\(handed.count) pages were handed over after the cancellation")
        #expect(
            handed.allSatisfy { $0.lastItem < pipeline.windowSize },
            "pages of items read after the cancellation were handed over: \(handed)")
    }

    /// Suspends until the current task is cancelled.
    static func untilCancelled() async {
        let (cancelled, cancelling) = AsyncStream<Void>.makeStream()
        await withTaskCancellationHandler {
            for await _ in cancelled {}
        } onCancel: {
            cancelling.finish()
        }
    }

    /// Leaving a loop over `pages(of:)` cancels its run: the run lets go of the feed having read only the few
    /// windows of items its stages hold, not the feed.
    @Test func leavingTheLoopOverPagesStopsTheRunFromReadingTheFeed() async throws {
        let bytes = Array(Self.feed(items: 100_000).utf8)
        let chunks = CountedChunks(
            stride(from: 0, to: bytes.count, by: 4096).map { Array(bytes[$0..<min(bytes.count, $0 + 4096)]) })
        let pipeline = try LayoutPipeline(options: Self.options)
        var count = 0
        for try await _ in pipeline.pages(of: .chunks(chunks)) {
            count += 1
            if count == 2 { break }
        }
        #expect(count == 2)
        // The run drops its reader of the chunks when it ends: only then is the count final.
        for await _ in chunks.tally.released { break }
        let taken = chunks.tally.taken.load(ordering: .relaxed)
        // The stages' buffers hold about fifteen windows of 32 items between them: some 110 KB of this 23 MB feed,
        // 27 of its 5,681 chunks (14 were read when this was written). A hundredth of the feed is twice that, and
        // far from the whole feed that a run not cancelled reads.
        #expect(
            taken < chunks.chunks.count / 100,
            "the run read \(taken) of \(chunks.chunks.count) chunks after the loop over its pages was left")
    }

    @Test func withSharedResourcesALayoutRunsOnItsOwnThreadsAndMakesTheSamePages() async throws {
        let resources = LayoutResources(threadCount: 2, logger: Logger(label: "test"))
        let text = Self.feed(items: 45)
        let own = try await Self.pagesJSON(try LayoutPipeline(options: Self.options), .bytes(Array(text.utf8)))
        let shared = try LayoutPipeline(options: Self.options, resources: resources)
        let onPoolThreads = Mutex<[Bool]>([])
        var pages: [[UInt8]] = []
        _ = try await shared.run(.bytes(Array(text.utf8))) { page in
            onPoolThreads.withLock { $0.append(LayoutThreadPool.isPoolThread) }
            var json = JSONWriter()
            Records.write(page, into: &json)
            pages.append(json.takeBytes())
        }
        #expect(pages == own)
        #expect(onPoolThreads.withLock { !$0.isEmpty && $0.allSatisfy { $0 } }, "\(onPoolThreads.withLock { $0 })")
        // A second pipeline with the same style shares the measurers: the fonts are loaded once.
        let again = try LayoutPipeline(options: Self.options, resources: resources)
        #expect(again.fonts == shared.fonts)
        let measurer = try resources.measurers.measurer(for: Self.options.annotation.text)
        #expect(try resources.measurers.measurer(for: Self.options.annotation.text) === measurer)
        // A policy that disagrees with the shared HTTP client's is refused, naming the option.
        var other = Self.options
        other.allowPrivateNetwork = true
        #expect(throws: LayoutError.self) { try LayoutPipeline(options: other, resources: resources) }
        try await resources.shutdown()
    }

    /// Progress reports and pages of a layout with shared resources come from the layout threads too, however
    /// long the run: its work never lands on the cooperative pool (the language carries the executor preference
    /// to every child task).
    @Test func aLongLayoutStaysOnItsThreads() async throws {
        let resources = LayoutResources(threadCount: 1, logger: Logger(label: "test"))
        let pipeline = try LayoutPipeline(options: Self.options, resources: resources)
        let bytes = Array(Self.feed(items: 5_000).utf8)
        let elsewhere = Mutex(0)
        let calls = Mutex(0)
        _ = try await pipeline.run(
            .bytes(bytes),
            onProgress: { _ in
                calls.withLock { $0 += 1 }
                if !LayoutThreadPool.isPoolThread { elsewhere.withLock { $0 += 1 } }
            }
        ) { _ in
            calls.withLock { $0 += 1 }
            if !LayoutThreadPool.isPoolThread { elsewhere.withLock { $0 += 1 } }
        }
        #expect(calls.withLock { $0 } > 500)
        #expect(elsewhere.withLock { $0 } == 0)
        try await resources.shutdown()
    }
}

/// A feed's bytes in chunks, counting those taken; ``Tally/released`` yields once the reader has let go of its
/// iterator (the run that read them has ended).
struct CountedChunks: AsyncSequence, Sendable {
    let chunks: [[UInt8]]
    let tally = Tally()

    init(_ chunks: [[UInt8]]) { self.chunks = chunks }

    final class Tally: Sendable {
        let taken = Atomic<Int>(0)
        let released: AsyncStream<Void>
        fileprivate let releasing: AsyncStream<Void>.Continuation

        init() { (released, releasing) = AsyncStream<Void>.makeStream() }
    }

    /// Tells the tally when the iterator that holds it goes.
    final class Reader: Sendable {
        let tally: Tally
        init(_ tally: Tally) { self.tally = tally }
        deinit { tally.releasing.yield() }
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: [[UInt8]]
        let reader: Reader
        var position = 0

        mutating func next() async -> [UInt8]? {
            guard position < chunks.count else { return nil }
            reader.tally.taken.add(1, ordering: .relaxed)
            position += 1
            return chunks[position - 1]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: chunks, reader: Reader(tally)) }
}
