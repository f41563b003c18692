import FeedLayoutTestSupport
import Foundation
import GRDB
import ImageProbe
import Logging
import RemoteFetch
import Testing

@testable import ProbeCache

/// The probe cache on a real SQLite file in a temporary folder.
@Suite(.timeLimit(.minutes(5)))
struct ProbeCacheTests {
    static let logger = Logger(label: "test.probe-cache")
    static let fixtures: String = {
        let thisFile = "\(#filePath)"
        return String(thisFile[..<thisFile.lastIndex(of: "/")!]) + "/../ImageProbeTests/Fixtures"
    }()

    static func temporaryFolder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("probe-cache-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static let sample = CachedProbe(
        validator: .file(size: 634, modifiedNanoseconds: 1_700_000_000_123_456_789),
        info: ImageInfo(
            format: .jpeg, width: 6, height: 4, orientation: 6, bytesRead: 634, isProgressive: true, isCMYK: true,
            bitDepth: 8, warnings: ["one", "two"]),
        placeholder: ImagePlaceholder(
            averageColor: PlaceholderColor(red: 1, green: 2, blue: 3, alpha: 4), thumbHash: [9, 8, 7]))

    @Test func entriesRoundTripThroughTheFile() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/nested/probe.sqlite"
        do {
            let cache = try ProbeCache(path: path)
            try cache.store(Self.sample, for: "a.jpg")
            var remote = Self.sample
            remote.validator = .remote(RemoteValidator(entityTag: "\"x\"", lastModified: nil))
            remote.placeholder = nil
            try cache.store(remote, for: "https://example.com/a.jpg")
        }
        let reopened = try ProbeCache(path: path)
        #expect(try reopened.count() == 2)
        #expect(try reopened.entry(for: "a.jpg") == Self.sample)
        #expect(try reopened.entry(for: "a.jpg", validator: .file(size: 634, modifiedNanoseconds: 1)) == nil)
        let remote = try reopened.entry(for: "https://example.com/a.jpg")
        #expect(remote?.validator == .remote(RemoteValidator(entityTag: "\"x\"", lastModified: nil)))
        #expect(remote?.placeholder == nil)
        #expect(try reopened.entry(for: "missing") == nil)
    }

    @Test func aCorruptFileIsReportedWithItsPath() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/probe.sqlite"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: ProbeCacheError.self) { try ProbeCache(path: path) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(path) == true)
        #expect(error?.message.contains("--no-cache") == true)
    }

    @Test func aNewerSchemaIsRefused() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/probe.sqlite"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA user_version=99'); c.commit()", path,
        ]
        try process.run()
        try #require(process.waitForExit() == 0)
        let error = #expect(throws: ProbeCacheError.self) { try ProbeCache(path: path) }
        #expect(error?.code == .incompatibleSchema)
        #expect(error?.message.contains(path) == true)
    }

    @Test func theDefaultPathFollowsXDG() {
        #expect(
            ProbeCache.defaultPath(environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/c/feedlayout/probe.sqlite")
        #expect(ProbeCache.defaultPath(environment: ["HOME": "/h"]) == "/h/.cache/feedlayout/probe.sqlite")
        #expect(
            ProbeCache.defaultPath(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/h"])
                == "/h/.cache/feedlayout/probe.sqlite")
    }

    @Test func manyTasksAndTwoConnectionsShareTheFile() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/probe.sqlite"
        let first = try ProbeCache(path: path)
        let second = try ProbeCache(path: path)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let cache = index.isMultiple(of: 2) ? first : second
                    var entry = Self.sample
                    entry.info.width = index + 1
                    try cache.store(entry, for: "image-\(index % 50).jpg")
                    _ = try cache.entry(for: "image-\((index + 7) % 50).jpg")
                }
            }
            try await group.waitForAll()
        }
        #expect(try first.count() == 50)
    }

    @Test func batchesAreStoredAndReadInOneTransactionEach() throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try ProbeCache(path: folder + "/probe.sqlite")
        var entries: [(source: String, entry: CachedProbe)] = (0..<300).map { index in
            var entry = Self.sample
            entry.info.width = index + 1
            return ("image-\(index).jpg", entry)
        }
        // A later entry for the same source replaces the earlier one, as separate stores would.
        var replacement = Self.sample
        replacement.info.width = 9999
        entries.append(("image-7.jpg", replacement))
        try cache.store(entries)
        #expect(try cache.count() == 300)
        let found = try cache.entries(for: ["image-0.jpg", "image-7.jpg", "image-299.jpg", "missing.jpg"])
        #expect(found.count == 3)
        #expect(found["image-0.jpg"]?.info.width == 1)
        #expect(found["image-7.jpg"]?.info.width == 9999)
        #expect(found["image-299.jpg"] == entries[299].entry)
        #expect(found["missing.jpg"] == nil)
        #expect(try cache.entries(for: []).isEmpty)
        try cache.store([])
        #expect(try cache.count() == 300)
    }

    @Test func aBatchProbesLikeOneByOneAndFillsTheCache() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let names = [
            "jpeg-gradient-orientation-6.jpg", "png-rgb.png", "jpeg-baseline.jpg", "gif-static.gif",
            "jpeg-orientation-8-le.jpg",
        ]
        var sources: [String] = []
        for name in names {
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + name, toPath: folder + "/" + name)
            sources.append(folder + "/" + name)
        }
        // A missing file, a URL without a remote prober, and a repeated file, in between.
        sources.insert(folder + "/missing.jpg", at: 2)
        sources.insert("https://example.com/a.jpg", at: 4)
        sources.append(sources[0])
        let cache = try ProbeCache(path: folder + "/probe.sqlite")
        let cached = CachingImageProber(
            prober: ImageProber(remote: nil), cache: cache, localFiles: .always, logger: Self.logger)
        let uncached = CachingImageProber(prober: ImageProber(remote: nil), cache: nil, logger: Self.logger)

        let first = await cached.probe(sources, withPlaceholder: false)
        #expect(first.count == sources.count)
        #expect(first.allSatisfy { !$0.fromCache })
        #expect(try cache.count() == names.count)
        let second = await cached.probe(sources, withPlaceholder: false)
        let plain = await uncached.probe(sources, withPlaceholder: false)
        for (index, source) in sources.enumerated() {
            let single = await uncached.probe(source, withPlaceholder: false)
            switch (single.info, first[index].info, second[index].info, plain[index].info) {
            case (.success(let expected), .success(let a), .success(let b), .success(let c)):
                #expect(a == expected && b == expected && c == expected, "\(source)")
                #expect(second[index].fromCache, "\(source)")
            case (.failure(let expected), .failure(let a), .failure(let b), .failure(let c)):
                #expect(a.code == expected.code && b.code == expected.code && c.code == expected.code, "\(source)")
                #expect(!second[index].fromCache, "\(source)")
            default:
                Issue.record("\(source): the batch and the single probe disagree")
            }
        }
        #expect(throws: ImageProbeError.self) { try first[2].info.get() }
        #expect(throws: ImageProbeError.self) { try first[4].info.get() }
    }

    @Test func filesAreServedFromTheCacheUntilTheyChange() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let image = folder + "/a.jpg"
        try FileManager.default.copyItem(atPath: Self.fixtures + "/jpeg-gradient-orientation-6.jpg", toPath: image)
        let cache = try ProbeCache(path: folder + "/probe.sqlite")
        let prober = CachingImageProber(
            prober: ImageProber(remote: nil), cache: cache, localFiles: .always, logger: Self.logger)
        let first = await prober.probe(image, withPlaceholder: false)
        #expect(!first.fromCache)
        let second = await prober.probe(image, withPlaceholder: false)
        #expect(second.fromCache)
        #expect(try second.info.get() == first.info.get())
        // Asking for a placeholder the entry lacks probes again, and stores it.
        let withPlaceholder = await prober.probe(image, withPlaceholder: true)
        #expect(!withPlaceholder.fromCache)
        let cachedPlaceholder = await prober.probe(image, withPlaceholder: true)
        #expect(cachedPlaceholder.fromCache)
        #expect(try cachedPlaceholder.placeholder?.get() == withPlaceholder.placeholder?.get())
        // A cached placeholder is not handed to a caller that did not ask for one (it would change its output).
        let withoutPlaceholder = await prober.probe(image, withPlaceholder: false)
        #expect(withoutPlaceholder.fromCache)
        #expect(withoutPlaceholder.placeholder == nil)
        // Replacing the file changes its size and time: the entry no longer counts.
        try FileManager.default.removeItem(atPath: image)
        try FileManager.default.copyItem(atPath: Self.fixtures + "/png-rgb.png", toPath: image)
        let changed = await prober.probe(image, withPlaceholder: false)
        #expect(!changed.fromCache)
        #expect(try changed.info.get().format == .png)
        // Standard input is never cached, and a missing file is an error, not a cache entry.
        let missing = await prober.probe(folder + "/missing.jpg", withPlaceholder: false)
        #expect(throws: ImageProbeError.self) { try missing.info.get() }
    }

    /// By default a local file's header-only probe reads the file, not the cache (an entry costs more than the
    /// header it saves), with the same results; a probe that decodes pixels (a placeholder) is still kept and
    /// served from the cache.
    @Test func headerOnlyProbesOfLocalFilesSkipTheCacheByDefault() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let names = ["jpeg-gradient-orientation-6.jpg", "png-rgb.png", "jpeg-baseline.jpg"]
        var sources: [String] = []
        for name in names {
            try FileManager.default.copyItem(atPath: Self.fixtures + "/" + name, toPath: folder + "/" + name)
            sources.append(folder + "/" + name)
        }
        sources.insert(folder + "/missing.jpg", at: 1)
        let cache = try ProbeCache(path: folder + "/probe.sqlite")
        let prober = CachingImageProber(prober: ImageProber(remote: nil), cache: cache, logger: Self.logger)
        let uncached = CachingImageProber(prober: ImageProber(remote: nil), cache: nil, logger: Self.logger)
        let plain = await uncached.probe(sources, withPlaceholder: false)
        for round in 0..<2 {
            let batch = await prober.probe(sources, withPlaceholder: false)
            for (index, source) in sources.enumerated() {
                let single = await prober.probe(source, withPlaceholder: false)
                #expect(!batch[index].fromCache && !single.fromCache, "round \(round): \(source)")
                switch (plain[index].info, batch[index].info, single.info) {
                case (.success(let expected), .success(let a), .success(let b)):
                    #expect(a == expected && b == expected, "\(source)")
                case (.failure(let expected), .failure(let a), .failure(let b)):
                    #expect(a.code == expected.code && b.code == expected.code, "\(source)")
                default:
                    Issue.record("\(source): the cached prober and the plain one disagree")
                }
            }
            #expect(try cache.count() == 0, "no entry for a header-only probe of a local file")
        }
        // A placeholder is worth keeping: stored once, then served from the cache.
        let first = await prober.probe(sources[0], withPlaceholder: true)
        #expect(!first.fromCache)
        #expect(try cache.count() == 1)
        let second = await prober.probe(sources[0], withPlaceholder: true)
        #expect(second.fromCache)
        #expect(try second.placeholder?.get() == first.placeholder?.get())
        let batch = await prober.probe(sources, withPlaceholder: true)
        #expect(batch[0].fromCache)
        #expect(try cache.count() == 3, "the three images, each with its placeholder")
    }

    @Test func aCacheOpensWhileAnotherProcessHoldsItsWriteLock() throws {
        // Another connection holds the new file's reserved lock (a write transaction in rollback-journal mode, as
        // a process that is creating the cache does for a moment). Switching to WAL then gets SQLITE_BUSY at once,
        // whatever the busy timeout; the cache must wait for the lock instead of failing.
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/probe.sqlite"
        let other = try DatabaseQueue(path: path)
        let holding = DispatchSemaphore(value: 0)
        let releasing = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        // The lock is held until the cache has been refused by it, however long that takes: not for a time.
        let holder = Thread {
            try? other.write { db in
                try db.execute(sql: "CREATE TABLE holding (x)")
                holding.signal()
                releasing.wait()
            }
            released.signal()
        }
        holder.start()
        holding.wait()
        var holderLetGo = false
        func letTheHolderGo() {
            guard !holderLetGo else { return }
            holderLetGo = true
            releasing.signal()
            released.wait()
        }
        var refusals = 0
        let cache: ProbeCache
        do {
            cache = try ProbeCache(path: path) {
                refusals += 1
                letTheHolderGo()
            }
        } catch {
            letTheHolderGo()
            throw error
        }
        letTheHolderGo()
        #expect(refusals >= 1, "the cache never met the other connection's lock")
        // It opened the file the other connection wrote, and works.
        try cache.store(Self.sample, for: "a.jpg")
        #expect(try cache.entry(for: "a.jpg") == Self.sample)
        #expect(try other.read { try $0.tableExists("holding") && $0.tableExists("probe") })
    }

    @Test func urlsAreRevalidatedWithAConditionalRangeRequest() async throws {
        let folder = try Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cache = try ProbeCache(path: folder + "/probe.sqlite")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/jpeg-baseline.jpg"))
        // No timeout can fire while CPU-bound suites hold the threads; the suite's time limit ends a real hang.
        let configuration = RemoteFetchConfiguration(
            connectTimeout: .seconds(3600), readTimeout: .seconds(3600), totalTimeout: .seconds(3600),
            allowPrivateNetwork: true)
        try await TestHTTPServer.with { server in
            server.serve("/a.jpg", .init(body: [UInt8](bytes), entityTag: "\"v1\""))
            server.serve("/dated.jpg", .init(body: [UInt8](bytes), lastModified: "Sat, 21 Nov 2026 10:00:00 GMT"))
            try await RemoteFetcher.withFetcher(configuration: configuration, logger: Self.logger) { fetcher in
                let prober = CachingImageProber(
                    prober: ImageProber(remote: RemoteImageProber(fetcher: fetcher)), cache: cache, logger: Self.logger)
                for path in ["/a.jpg", "/dated.jpg"] {
                    let first = await prober.probe(server.url(path), withPlaceholder: false)
                    #expect(!first.fromCache)
                    let second = await prober.probe(server.url(path), withPlaceholder: false)
                    #expect(second.fromCache)
                    #expect(try second.info.get() == first.info.get())
                    let requests = server.requests(for: path)
                    #expect(requests.count == 2)
                    #expect(requests.last?.range == "bytes=0-16383")
                    #expect(
                        requests.last?.headers["if-none-match"] ?? requests.last?.headers["if-modified-since"] != nil)
                }
                server.serve(
                    "/a.jpg",
                    .init(
                        body: try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/png-rgb.png"))),
                        entityTag: "\"v2\""))
                let changed = await prober.probe(server.url("/a.jpg"), withPlaceholder: false)
                #expect(!changed.fromCache)
                #expect(try changed.info.get().format == .png)
            }
        }
    }
}
