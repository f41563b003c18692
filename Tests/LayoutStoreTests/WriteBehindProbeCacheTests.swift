import Foundation
import ImageProbe
import Logging
import ProbeCache
import RemoteFetch
import Synchronization
import Testing

@testable import LayoutStore

/// The service's probe cache writes what layouts learn in batches, and lookups see entries not written yet.
@Suite struct WriteBehindProbeCacheTests {
    /// A storage that keeps entries in memory and counts its writes.
    final class CountingStorage: ProbeCacheStorage {
        let stored = Mutex<[String: CachedProbe]>([:])
        let writes = Mutex<[Int]>([])
        /// The sources each read asked for.
        let reads = Mutex<[[String]]>([])

        func entry(for source: String) async throws(ProbeCacheError) -> CachedProbe? {
            reads.withLock { $0.append([source]) }
            return stored.withLock { $0[source] }
        }

        func entries(for sources: [String]) async throws(ProbeCacheError) -> [String: CachedProbe] {
            reads.withLock { $0.append(sources) }
            return stored.withLock { stored in stored.filter { sources.contains($0.key) } }
        }

        func store(_ entries: [(source: String, entry: CachedProbe)]) async throws(ProbeCacheError) {
            stored.withLock { stored in for (source, entry) in entries { stored[source] = entry } }
            writes.withLock { $0.append(entries.count) }
        }
    }

    static func entry(width: Int) -> CachedProbe {
        CachedProbe(
            validator: .remote(RemoteValidator(entityTag: "\"\(width)\"", lastModified: nil)),
            info: ImageInfo(format: .png, width: width, height: 10, orientation: 1, bytesRead: 33), placeholder: nil)
    }

    @Test func singleStoresAreWrittenInBatches() async throws {
        let base = CountingStorage()
        let cache = WriteBehindProbeCache(base: base, logger: Logger(label: "test"), batchSize: 100, delay: .seconds(60))
        for index in 0..<250 {
            try await cache.store([(source: "https://photos.example/\(index).png", entry: Self.entry(width: index + 1))])
        }
        // Two full batches went at once; the rest waits for the delay (or the shutdown), and lookups see it.
        #expect(base.writes.withLock { $0 } == [100, 100])
        #expect(try await cache.entry(for: "https://photos.example/249.png")?.info.width == 250)
        #expect(try await base.entry(for: "https://photos.example/249.png") == nil)
        let found = try await cache.entries(for: ["https://photos.example/0.png", "https://photos.example/240.png"])
        #expect(found.count == 2)
        await cache.flush()
        #expect(base.writes.withLock { $0 } == [100, 100, 50])
        #expect(base.stored.withLock { $0.count } == 250)
    }

    @Test func pendingEntriesAreWrittenAfterTheDelay() async throws {
        let base = CountingStorage()
        let cache = WriteBehindProbeCache(base: base, logger: Logger(label: "test"), batchSize: 100, delay: .milliseconds(50))
        try await cache.store([(source: "a", entry: Self.entry(width: 1))])
        try await cache.store([(source: "a", entry: Self.entry(width: 2))])
        // Returns as soon as the write is made (about 50 ms); the bound is for a full test run, whose blocking tests
        // can keep the cooperative pool's threads (and so the timer's task) from running for most of a minute.
        let deadline = ContinuousClock.now + .seconds(120)
        while base.writes.withLock({ $0.isEmpty }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        // One write, with the later entry for the source.
        #expect(base.writes.withLock { $0 } == [1])
        #expect(try await base.entry(for: "a")?.info.width == 2)
    }

    @Test func entriesReadOnceAreAnsweredFromMemory() async throws {
        let base = CountingStorage()
        let sources = (0..<30).map { "https://photos.example/\($0).png" }
        try await base.store(sources.enumerated().map { (source: $1, entry: Self.entry(width: $0 + 1)) })
        let cache = WriteBehindProbeCache(
            base: base, logger: Logger(label: "test"), batchSize: 100, delay: .seconds(60), recentLimit: 10)
        let first = try await cache.entries(for: Array(sources[0..<8]) + ["https://photos.example/missing.png"])
        #expect(first.count == 8)
        // The second time only the source the store did not have is asked for again.
        let second = try await cache.entries(for: Array(sources[0..<8]) + ["https://photos.example/missing.png"])
        #expect(second == first)
        #expect(base.reads.withLock { $0.last } == ["https://photos.example/missing.png"])
        #expect(try await cache.entry(for: sources[3])?.info.width == 4)
        #expect(base.reads.withLock { $0.count } == 2)
        // An entry this instance stores replaces the one it read.
        try await cache.store([(source: sources[3], entry: Self.entry(width: 400))])
        #expect(try await cache.entries(for: [sources[3]])[sources[3]]?.info.width == 400)
        #expect(base.reads.withLock { $0.count } == 2)
        // Memory holds two generations of at most ten: reading 22 more sources pushes the first ones out.
        _ = try await cache.entries(for: Array(sources[8..<30]))
        let reads = base.reads.withLock { $0.count }
        _ = try await cache.entries(for: [sources[0]])
        #expect(base.reads.withLock { $0.count } == reads + 1)
        #expect(base.reads.withLock { $0.last } == [sources[0]])
    }
}
