import FeedLayoutTestSupport
import Foundation
import Testing

/// `feedlayout layout` on a feed whose photos are served by a real HTTP server on 127.0.0.1.
@Suite(.timeLimit(.minutes(2)))
struct RemoteLayoutEndToEndTests {
    /// The sample feed with every photo URL made absolute on the test server.
    static func remoteSampleFeed(server: TestHTTPServer) throws -> URL {
        let photos = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos")
        for name in try FileManager.default.contentsOfDirectory(atPath: photos.path) {
            let bytes = try Data(contentsOf: photos.appendingPathComponent(name))
            server.serve("/photos/" + name, .init(body: [UInt8](bytes), honoursRange: true, entityTag: "\"\(name)\""))
        }
        let feed = try String(contentsOfFile: CommandRunner.sampleFeed, encoding: .utf8)
            .replacingOccurrences(of: "url=\"photos/", with: "url=\"\(server.url("/photos/"))")
        let file = try CommandRunner.temporaryDirectory().appendingPathComponent("remote-feed.xml")
        try feed.write(to: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Photo sizes and sources by file name, from a layout's NDJSON pages (the first item using each photo:
    /// several items share photos, and they may declare different sizes).
    static func photos(_ output: CommandRunner.Output) throws -> [String: (width: Double, height: Double, from: String)]
    {
        var photos: [String: (width: Double, height: Double, from: String)] = [:]
        for line in output.stdoutText.split(separator: "\n") {
            for item in try PageFile(Data(line.utf8)).items {
                let photo = item["photo"] as! [String: Any]
                guard let url = photo["url"] as? String, photos[URL(fileURLWithPath: url).lastPathComponent] == nil
                else { continue }
                photos[URL(fileURLWithPath: url).lastPathComponent] = (
                    number(photo["width"]), number(photo["height"]), photo["sizeFrom"] as! String
                )
            }
        }
        return photos
    }

    /// Lays out the sample feed from `source` (its photos on the test server) and from disk, and checks
    /// that every photo gets the same size from the same source both ways; the sample's missing and
    /// corrupt photos fail remotely too.
    ///
    /// - Parameter source: The remote sample feed's path or URL.
    /// - Returns: The remote layout's photos.
    static func layOutLikeTheLocalSample(
        _ source: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String: (width: Double, height: Double, from: String)] {
        let remote = try await CommandRunner.run(
            ["layout", source, "--allow-private-network", "--no-cache", "--quiet"] + LayoutEndToEndTests.options)
        let local = try await CommandRunner.run(
            ["layout", CommandRunner.sampleFeed, "--no-cache", "--quiet"] + LayoutEndToEndTests.options)
        #expect(remote.status == 1, "\(remote.stderr)", sourceLocation: sourceLocation)
        let remotePhotos = try photos(remote)
        let localPhotos = try photos(local)
        #expect(remotePhotos.count == localPhotos.count && remotePhotos.count > 30, sourceLocation: sourceLocation)
        for (name, photo) in localPhotos {
            let fetched = try #require(remotePhotos[name], "\(name)", sourceLocation: sourceLocation)
            #expect(
                fetched.width == photo.width && fetched.height == photo.height && fetched.from == photo.from,
                "\(name)", sourceLocation: sourceLocation)
        }
        return remotePhotos
    }

    @Test func remotePhotosGetTheSameSizesAsLocalOnes() async throws {
        try await TestHTTPServer.with { server in
            let feed = try Self.remoteSampleFeed(server: server)
            let remotePhotos = try await Self.layOutLikeTheLocalSample(feed.path)
            #expect(remotePhotos["djembe-and-wine.jpg"]?.from == "header")
            // One range request per distinct image (no cache here; items that share a photo share its probe).
            let distinct = Set(
                try String(contentsOf: feed, encoding: .utf8).components(separatedBy: "url=\"").dropFirst()
                    .map { $0.prefix { $0 != "\"" } }.filter { $0.hasPrefix("http") })
            #expect(distinct.count > 30 && distinct.count < LayoutEndToEndTests.sampleItemCount)
            #expect(server.requests.count == distinct.count, "\(server.requests.count) requests")
        }
    }

    @Test func privateAddressesAreRefusedUnlessAllowed() async throws {
        try await TestHTTPServer.with { server in
            let feed = try Self.remoteSampleFeed(server: server)
            let output = try await CommandRunner.run(
                ["layout", feed.path, "--no-cache", "--quiet"] + LayoutEndToEndTests.options)
            #expect(output.status == 1)
            #expect(server.requests.count == 0)
            let photos = try Self.photos(output)
            #expect(photos.values.allSatisfy { $0.from != "header" })
            // Declared sizes still lay the item out: the spaniels declare 800×600 (the file says 600×900).
            #expect(photos["spaniels-at-the-door.jpg"].map { [$0.width, $0.height] } == [800, 600])
            #expect(output.stdoutText.contains("imageRefused"))
        }
    }
}
