import FeedLayout
import FeedLayoutTestSupport
import Foundation
import Logging
import ProbeCache
import RemoteFetch
import Synchronization
import Testing

/// A layout reads the probe cache once per window of items, not once per photo (`RunProbeMemo.prefetch`).
@Suite(.timeLimit(.minutes(5)))
struct ProbePrefetchTests {
    /// A probe cache in memory that counts its reads.
    final class CountingCache: ProbeCacheStorage {
        let stored = Mutex<[String: CachedProbe]>([:])
        let singleReads = Mutex(0)
        let batchReads = Mutex<[Int]>([])

        func entry(for source: String) async throws(ProbeCacheError) -> CachedProbe? {
            singleReads.withLock { $0 += 1 }
            return stored.withLock { $0[source] }
        }

        func entries(for sources: [String]) async throws(ProbeCacheError) -> [String: CachedProbe] {
            batchReads.withLock { $0.append(sources.count) }
            return stored.withLock { stored in stored.filter { sources.contains($0.key) } }
        }

        func store(_ entries: [(source: String, entry: CachedProbe)]) async throws(ProbeCacheError) {
            stored.withLock { stored in for (source, entry) in entries { stored[source] = entry } }
        }
    }

    /// 150 items, each with a photo URL of its own (fresh for a day), one of them twice.
    static func feed(_ server: TestHTTPServer) -> [UInt8] {
        var text = #"<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>"#
        for index in 0..<150 {
            let photo = index == 149 ? 0 : index
            text += "<item><guid>\(index)</guid><title>Pin \(index)</title>"
            text += "<media:content url=\"\(server.url("/photos/\(photo).jpg"))\" medium=\"image\"/></item>\n"
        }
        return Array((text + "</channel></rss>").utf8)
    }

    @Test func aWindowOfPhotosIsOneCacheRead() async throws {
        let photo = try [UInt8](Data(contentsOf: ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed/photos/chelsea-the-cat.jpg")))
        try await TestHTTPServer.with { server in
            for index in 0..<149 {
                var resource = TestHTTPServer.Resource(body: photo, contentType: "image/jpeg", entityTag: "\"\(index)\"")
                resource.extraHeaders = ["Cache-Control": "max-age=86400"]
                server.serve("/photos/\(index).jpg", resource)
            }
            let cache = CountingCache()
            let resources = LayoutResources(
                fetch: RemoteFetchConfiguration(allowPrivateNetwork: true), probeCache: cache,
                logger: Logger(label: "test"))
            defer { Task { try? await resources.shutdown() } }
            var options = LayoutOptions()
            options.allowPrivateNetwork = true
            let pipeline = try LayoutPipeline(options: options, resources: resources)
            let feed = Self.feed(server)
            func pages() async throws -> [LayoutPage] {
                var pages: [LayoutPage] = []
                _ = try await pipeline.run(.bytes(feed, name: "feed")) { pages.append($0) }
                return pages
            }
            let first = try await pages()
            let fetched = (0..<149).reduce(0) { $0 + server.requests(for: "/photos/\($1).jpg").count }
            #expect(fetched == 149, "each photo once")
            // Again: every photo is fresh in the cache, read a window at a time, never one by one.
            cache.batchReads.withLock { $0.removeAll() }
            cache.singleReads.withLock { $0 = 0 }
            let second = try await pages()
            #expect(second.map(\.items.count) == first.map(\.items.count))
            #expect(
                second.flatMap { $0.items.map(\.photo.size) } == first.flatMap { $0.items.map(\.photo.size) })
            #expect((0..<149).reduce(0) { $0 + server.requests(for: "/photos/\($1).jpg").count } == 149)
            #expect(cache.singleReads.withLock { $0 } == 0)
            let reads = cache.batchReads.withLock { $0 }
            // A read per window: the first of `windowSize` items, the others of `preparationWindowSize`.
            let window = pipeline.preparationWindowSize
            #expect(reads.count == 1 + (150 - pipeline.windowSize + window - 1) / window, "\(reads)")
            // The repeated photo is read once in its window.
            #expect(reads.reduce(0, +) == 149, "\(reads)")
        }
    }
}
