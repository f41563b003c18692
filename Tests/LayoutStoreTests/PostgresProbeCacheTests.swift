import FeedLayoutTestSupport
import Foundation
import ImageProbe
import Logging
import ProbeCache
import RemoteFetch
import Testing

@testable import LayoutStore

/// The probe cache that `feedlayout serve` instances share through PostgreSQL, on a throwaway cluster of each test's
/// own (scripts/postgres-cluster).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PostgresProbeCacheTests {
    static let logger = Logger(label: "test.postgres-probe-cache")
    static let fixtures: String = {
        let thisFile = "\(#filePath)"
        return String(thisFile[..<thisFile.lastIndex(of: "/")!]) + "/../ImageProbeTests/Fixtures"
    }()

    static let file = CachedProbe(
        validator: .file(size: 634, modifiedNanoseconds: 1_700_000_000_123_456_789),
        info: ImageInfo(
            format: .jpeg, width: 6, height: 4, orientation: 6, bytesRead: 634, isProgressive: true, isCMYK: true,
            bitDepth: 8, warnings: ["one", "", "three"]),
        placeholder: ImagePlaceholder(
            averageColor: PlaceholderColor(red: 255, green: 2, blue: 3, alpha: 4), thumbHash: [9, 8, 7]))
    static let tagged = CachedProbe(
        validator: .remote(RemoteValidator(entityTag: "\"v1\"", lastModified: nil)),
        info: ImageInfo(format: .png, width: 640, height: 480, orientation: 1, bytesRead: 33, isInterlaced: true),
        placeholder: nil)
    static let dated = CachedProbe(
        validator: .remote(RemoteValidator(entityTag: nil, lastModified: "Sat, 21 Nov 2026 10:00:00 GMT")),
        info: ImageInfo(
            format: .gif, width: 1, height: 1, orientation: 1, bytesRead: 13, isAnimated: true,
            isAppleOptimizedPNG: true),
        placeholder: ImagePlaceholder(
            averageColor: PlaceholderColor(red: 0, green: 0, blue: 0, alpha: 0), thumbHash: []))

    /// Runs `body` with a started cluster of its own and always removes it (for a test that stops the server).
    static func withCluster(_ body: (PostgresTestCluster) async throws -> Void) async throws {
        try await PostgresTestCluster.with(body)
    }

    /// Runs `body` with a database of its own on the suite's shared cluster.
    static func withDatabase(_ body: (PostgresTestDatabase) async throws -> Void) async throws {
        try await PostgresTestDatabase.with(body)
    }

    /// Opens a store on the cluster. A cluster that has just started on a machine busy with the rest of the test
    /// run can miss the store's 15 s bound for its migrations: that bound is what `feedlayout serve` answers a
    /// person with, not what these tests are about, so a timed-out open is tried again for two minutes. (Three
    /// tries were not enough at the very start of a fresh-clone run, when some 120 suites start at once on two
    /// cores: the client's connection pool logged that its `run()` had not started yet, and a SQLite test beside
    /// it took 72 s.)
    static func openStore(_ cluster: some PostgresTestStore) async throws -> PostgresLayoutStore {
        try await retryingWhileUnanswered {
            try await PostgresLayoutStore.open(url: cluster.url, leaseDuration: .seconds(30), logger: logger)
        }
    }

    /// `open` again while it fails for a server that did not answer in time, for two minutes (see ``openStore(_:)``).
    static func retryingWhileUnanswered(
        _ open: () async throws -> PostgresLayoutStore
    ) async throws -> PostgresLayoutStore {
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            do {
                return try await open()
            } catch {
                let message = "\(error)"
                guard ContinuousClock.now < deadline, message.contains("did not answer") else { throw error }
            }
        }
    }

    /// What one instance stores, another instance on the same database reads back whole; a later store replaces.
    @Test func entriesRoundTripBetweenTwoInstances() async throws {
        try await Self.withDatabase { cluster in
            let one = try await Self.openStore(cluster)
            defer { one.close() }
            let other = try await Self.openStore(cluster)
            defer { other.close() }
            let writer = one.probeCache()
            let reader = other.probeCache()

            try await writer.store([
                ("a.jpg", Self.file), ("https://example.com/a.png", Self.tagged),
                ("https://example.com/b.gif", Self.dated),
            ])
            let found = try await reader.entries(for: [
                "a.jpg", "https://example.com/a.png", "https://example.com/b.gif", "missing.jpg",
            ])
            #expect(found.count == 3)
            #expect(found["a.jpg"] == Self.file)
            #expect(found["https://example.com/a.png"] == Self.tagged)
            #expect(found["https://example.com/b.gif"] == Self.dated)
            #expect(try await reader.entry(for: "a.jpg") == Self.file)
            #expect(try await reader.entry(for: "missing.jpg") == nil)

            // In one batch the last entry for a source wins, as separate stores would have it.
            var newer = Self.file
            newer.info.width = 99
            var newest = Self.file
            newest.info.width = 100
            newest.placeholder = nil
            try await reader.store([("a.jpg", newer), ("z.jpg", Self.tagged), ("a.jpg", newest)])
            #expect(try await writer.entry(for: "a.jpg") == newest)
            #expect(try await writer.entry(for: "z.jpg") == Self.tagged)
            #expect(try await writer.count() == 4)
            try await writer.store([])
            #expect(try await writer.entries(for: []).isEmpty)
            #expect(try await writer.count() == 4)
        }
    }

    /// PostgreSQL stopped: a cache call fails within its bound as `.unavailable` naming the store, and the prober
    /// reads the photo itself.
    @Test func aStoppedServerMakesProbesMissNotFail() async throws {
        try await Self.withCluster { cluster in
            let store = try await Self.openStore(cluster)
            defer { store.close() }
            let cache = store.probeCache()
            let prober = CachingImageProber(prober: ImageProber(remote: nil), cache: cache, logger: Self.logger)
            let image = Self.fixtures + "/jpeg-baseline.jpg"
            let first = await prober.probe(image, withPlaceholder: true)
            #expect(!first.fromCache)
            let second = await prober.probe(image, withPlaceholder: true)
            #expect(second.fromCache)
            #expect(try second.info.get() == first.info.get())
            #expect(try second.placeholder?.get() == first.placeholder?.get())

            try await cluster.stop()
            let error = await #expect(throws: ProbeCacheError.self) { try await cache.entry(for: image) }
            #expect(error?.code == .unavailable)
            #expect(error?.message.contains(cluster.url) == true, "\(String(describing: error))")
            let third = await prober.probe(image, withPlaceholder: true)
            #expect(!third.fromCache)
            #expect(try third.info.get() == first.info.get())
        }
    }
}
