import FeedLayoutTestSupport
import Foundation
import NIOHTTP1
import Testing

@testable import LayoutService

#if canImport(Glibc)
    import Glibc
#endif

/// A full disk under an SQLite store, for real: the store on a small tmpfs, filled to the last byte.
@Suite(
    .serialized, .timeLimit(.minutes(5)),
    .enabled(
        if: SmallDisk.canMount,
        "mount -t tmpfs is not permitted here (it needs root or CAP_SYS_ADMIN): the full-disk tests do not run"))
struct FullDiskTests {
    @Test func aFullDiskIsA507ARunningLayoutFailsWithThatReasonAndEarlierPagesAreStillServed() async throws {
        try await SmallDisk.with(megabytes: 24) { disk in
            try await TestHTTPServer.with { photos in
                try ServiceFeeds.servePhotos(photos)
                // The photo of the running layout's later items is held until the disk is full.
                let gate = ResponseGate(holdingAt: .beforeHead)
                let cat = try Data(
                    contentsOf: ServiceFeeds.repositoryRoot.appendingPathComponent(
                        "sample-feed/photos/chelsea-the-cat.jpg"))
                photos.serve("/held/late.jpg", .init(body: [UInt8](cat), contentType: "image/jpeg", gate: gate))
                let storePath = disk + "/store.sqlite"
                var service: ServiceHarness? = try await ServiceHarness.start(storePath: storePath)
                let options: [String: Any] = ["width": 600, "columns": 3, "pageSize": 10]

                // A layout made while there is room.
                let earlierFeed = ServiceFeeds.rss(items: 40, photoBase: photos.url("/photos/"), seed: 1)
                let earlier = try await service!.post(["feedText": earlierFeed, "options": options])
                #expect(earlier.status == 202, "\(earlier.text)")
                let earlierID = try #require(earlier.json["id"] as? String)
                #expect(try await service!.waitUntilDone(earlierID).json["status"] as? String == "done")
                let earlierPage0 = try await service!.request(.GET, "/v1/layouts/\(earlierID)/pages/0")
                #expect(earlierPage0.status == 200)

                // A layout that stores its first pages, then waits for a photo.
                var runningFeed = ServiceFeeds.rss(items: 300, photoBase: photos.url("/photos/"), seed: 2)
                runningFeed = runningFeed.replacingOccurrences(of: "</channel></rss>\n", with: "")
                for index in 0..<200 {
                    runningFeed +=
                        "<item><guid>late-\(index)</guid><title>Late \(index)</title>"
                        + "<media:content url=\"\(photos.url("/held/late.jpg"))\" medium=\"image\"/></item>\n"
                }
                runningFeed += "</channel></rss>\n"
                let running = try await service!.post(["feedText": runningFeed, "options": options])
                #expect(running.status == 202, "\(running.text)")
                let runningID = try #require(running.json["id"] as? String)
                let firstPage = try await service!.request(.GET, "/v1/layouts/\(runningID)/pages/0?wait=60")
                #expect(firstPage.status == 200)
                #expect(await gate.waitUntilHeld() == 0)

                // The disk fills up; then the photo comes, and the layout's next page cannot be stored.
                let filler = try SmallDisk.fill(disk)
                gate.open()
                let failed = try await service!.waitUntilDone(runningID)
                #expect(failed.json["status"] as? String == "failed", "\(failed.text)")
                let error = failed.json["error"] as? [String: Any]
                #expect(error?["code"] as? String == "storageFull", "\(failed.text)")
                #expect((error?["message"] as? String)?.contains("disk is full") == true)
                #expect((error?["message"] as? String)?.contains(disk) == false, "no path reaches a client")
                let storedPages = try #require(failed.json["pages"] as? Int)
                #expect(storedPages >= 1)

                // A new layout: 507, as a problem that says so.
                let refusedFeed = ServiceFeeds.rss(items: 30, photoBase: photos.url("/photos/"), seed: 3)
                let refused = try await service!.post(["feedText": refusedFeed, "options": options])
                #expect(refused.status == 507, "\(refused.text)")
                #expect(refused.json["type"] as? String == "urn:feedlayout:problem:insufficient-storage")
                #expect(refused.json["status"] as? Int == 507)
                #expect((refused.json["detail"] as? String)?.contains("disk is full") == true)
                #expect((refused.json["detail"] as? String)?.contains("nothing") == true)
                #expect(refused.headers.first(name: "Content-Type") == "application/problem+json")
                let exchanges = FileManager.default.temporaryDirectory.appendingPathComponent(
                    "exchanges-\(UUID().uuidString).jsonl")
                try service!.recordedExchanges.write(to: exchanges, atomically: true, encoding: .utf8)
                defer { try? FileManager.default.removeItem(at: exchanges) }
                let (checked, report) = try await OpenAPICheckerTests.check(["responses", exchanges.path])
                #expect(checked == 0, "the 507 and the failed layout are as the OpenAPI document says:\n\(report)")

                // Nothing half-written: no feed file but the two layouts' (no partial one, none for the refused).
                let feedFiles = Set(try FileManager.default.contentsOfDirectory(atPath: storePath + ".feeds"))
                #expect(feedFiles == [earlierID, runningID], "\(feedFiles)")

                // Earlier pages are still served, from the store (pages not asked for before included).
                for index in 0..<4 {
                    let page = try await service!.request(.GET, "/v1/layouts/\(earlierID)/pages/\(index)")
                    #expect(page.status == 200, "page \(index) of the earlier layout")
                }
                for index in 0..<storedPages {
                    let page = try await service!.request(.GET, "/v1/layouts/\(runningID)/pages/\(index)")
                    #expect(page.status == 200, "page \(index) of the failed layout")
                }
                let gzipped = try await service!.request(
                    .GET, "/v1/layouts/\(earlierID)/pages/1", headers: [("Accept-Encoding", "gzip")])
                #expect(gzipped.status == 200)

                // Room again: new layouts succeed, and the failure that could not be written is written.
                try FileManager.default.removeItem(atPath: filler)
                let after = try await service!.post(["feedText": refusedFeed, "options": options])
                #expect(after.status == 202, "\(after.text)")
                let afterID = try #require(after.json["id"] as? String)
                #expect(try await service!.waitUntilDone(afterID).json["status"] as? String == "done")

                // A restart reads the failure from the store: the layout is not resumed as if it were running.
                await service!.stop()
                service = nil
                let restarted = try await ServiceHarness.start(storePath: storePath)
                let reread = try await restarted.request(.GET, "/v1/layouts/\(runningID)")
                #expect(reread.json["status"] as? String == "failed", "\(reread.text)")
                #expect((reread.json["error"] as? [String: Any])?["code"] as? String == "storageFull")
                await restarted.stop()
            }
        }
    }
}

/// A small tmpfs, mounted for a test and unmounted after it.
enum SmallDisk {
    /// Whether this process may mount a tmpfs (root, or CAP_SYS_ADMIN): tried once, on a 1 MiB one.
    static let canMount: Bool = {
        guard let folder = try? makeFolder() else { return false }
        defer { rmdir(folder) }
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", folder]) else { return false }
        _ = run("/bin/umount", [folder])
        return true
    }()

    /// Mounts a tmpfs of `megabytes`, runs `body` with its path, then unmounts it (lazily: a file a failed test
    /// left open does not keep it).
    static func with(megabytes: Int, _ body: (String) async throws -> Void) async throws {
        let folder = try makeFolder()
        guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", folder]) else {
            rmdir(folder)
            throw TestInputError(message: "mount -t tmpfs -o size=\(megabytes)m tmpfs \(folder) failed")
        }
        defer {
            _ = run("/bin/umount", ["-l", folder])
            rmdir(folder)
        }
        try await body(folder)
    }

    /// Writes a file in `folder` until the disk has no byte left.
    /// - Returns: The file's path (remove it to free the space).
    static func fill(_ folder: String) throws -> String {
        let path = folder + "/filler"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw TestInputError(message: "cannot create \(path)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x55, count: 1 << 20)
        var size = chunk.count
        while size > 0 {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, size) }
            if written < size { size /= 2 }
        }
        guard errno == ENOSPC else { throw TestInputError(message: "filling \(path) stopped without ENOSPC: \(errno)") }
        return path
    }

    private static func makeFolder() throws -> String {
        var template = Array(
            (FileManager.default.temporaryDirectory.path + "/feedlayout-small-disk.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestInputError(message: "mkdtemp failed") }
        return String(cString: made)
    }

    private static func run(_ executable: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        return process.waitForExit() == 0
    }
}
