import FeedLayoutTestSupport
import Foundation
import Testing

/// `feedlayout ingest URL` and `feedlayout layout URL`: the feed itself served by a real HTTP server on
/// 127.0.0.1, streamed into the parser.
@Suite(.timeLimit(.minutes(2)))
struct RemoteFeedEndToEndTests {
    /// Serves the sample feed at /feeds/sample.xml (reached through a redirect from /feed) and its photos
    /// beside it, so that the feed's relative photo paths resolve against the URL after the redirect.
    static func serveSampleFeed(_ server: TestHTTPServer, contentType: String = "application/rss+xml") throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: CommandRunner.sampleFeed))
        server.serve("/feeds/sample.xml", .init(body: [UInt8](bytes), contentType: contentType, chunkSize: 4096))
        server.serve("/feed", .init(redirect: server.url("/feeds/sample.xml")))
        let photos = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos")
        for name in try FileManager.default.contentsOfDirectory(atPath: photos.path) {
            let photo = try Data(contentsOf: photos.appendingPathComponent(name))
            server.serve("/feeds/photos/" + name, .init(body: [UInt8](photo), honoursRange: true))
        }
    }

    static func records(_ output: CommandRunner.Output) throws -> [[String: Any]] {
        try output.stdoutText.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    @Test func ingestStreamsAFeedFromAURLAndResolvesAgainstItsFinalURL() async throws {
        try await TestHTTPServer.with { server in
            try Self.serveSampleFeed(server)
            let output = try await CommandRunner.run(["ingest", server.url("/feed"), "--allow-private-network"])
            #expect(output.status == 0, "\(output.stderr)")
            let records = try Self.records(output)
            #expect(records.count == LayoutEndToEndTests.sampleItemCount)
            #expect(records.first?["title"] as? String == "Espresso")
            // Relative photo paths resolve against the URL after the redirect, not the one asked for.
            let image = records.first?["image"] as? [String: Any]
            #expect(image?["url"] as? String == server.url("/feeds/photos/espresso.jpg"))
            #expect(server.requests(for: "/feeds/sample.xml").count == 1)
        }
    }

    @Test func layoutReadsTheFeedFromAURLAndProbesItsPhotosThere() async throws {
        try await TestHTTPServer.with { server in
            try Self.serveSampleFeed(server)
            _ = try await RemoteLayoutEndToEndTests.layOutLikeTheLocalSample(server.url("/feed"))
            #expect(server.requests.contains { $0.path == "/feeds/photos/espresso.jpg" })
        }
    }

    @Test func aPrivateAddressIsRefusedUnlessAllowed() async throws {
        try await TestHTTPServer.with { server in
            try Self.serveSampleFeed(server)
            for command in ["ingest", "layout"] {
                let output = try await CommandRunner.run([command, server.url("/feed"), "--quiet"])
                #expect(output.status == 1, "\(command)")
                #expect(output.stderr.contains(server.url("/feed")), "\(output.stderr)")
                #expect(output.stderr.contains("--allow-private-network"), "\(output.stderr)")
                #expect(output.stdout.isEmpty)
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test func httpErrorsAndHTMLPagesAreClearErrorsNamingTheURL() async throws {
        try await TestHTTPServer.with { server in
            server.serve("/gone.xml", .init(status: 410))
            server.serve(
                "/page.html",
                .init(
                    body: Array("<!DOCTYPE html>\n<html><head><title>Blog</title></head><body>hi</body></html>".utf8),
                    contentType: "text/html; charset=utf-8"))
            let gone = try await CommandRunner.run(["ingest", server.url("/gone.xml"), "--allow-private-network"])
            #expect(gone.status == 1)
            #expect(gone.stderr.contains(server.url("/gone.xml")) && gone.stderr.contains("HTTP 410"), "\(gone.stderr)")
            let page = try await CommandRunner.run(["ingest", server.url("/page.html"), "--allow-private-network"])
            #expect(page.status == 1)
            #expect(
                page.stderr.contains(server.url("/page.html")) && page.stderr.contains("HTML page"), "\(page.stderr)")
        }
    }

    @Test func theContentTypeCharsetIsHonouredWhenTheFeedDeclaresNone() async throws {
        try await TestHTTPServer.with { server in
            let body =
                Array("<rss version=\"2.0\"><channel><title>t</title><item><guid>1</guid><title>Caf".utf8) + [0xE9]
                + Array(" cr".utf8) + [0xE8] + Array("me</title></item></channel></rss>".utf8)
            server.serve("/latin1.xml", .init(body: body, contentType: "text/xml; charset=\"ISO-8859-1\""))
            let output = try await CommandRunner.run(["ingest", server.url("/latin1.xml"), "--allow-private-network"])
            #expect(output.status == 0, "\(output.stderr)")
            let record = try #require(try Self.records(output).first)
            #expect(record["title"] as? String == "Café crème")
            // Read as declared by the transport: no "invalid UTF-8" repair.
            #expect((record["warnings"] as? [Any])?.isEmpty == true, "\(record)")
        }
    }

    @Test func localImagePathsAreRefusedForARemoteFeedButTheItemIsKept() async throws {
        try await TestHTTPServer.with { server in
            let feed = """
                <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title>
                <item><guid>1</guid><title>Secret</title>
                <media:content url="file:///etc/hostname" medium="image" width="400" height="300"/></item>
                <item><guid>2</guid><media:content url="//cdn.example.net/p.jpg" medium="image"/></item>
                </channel></rss>
                """
            server.serve("/f.xml", .init(body: Array(feed.utf8), contentType: "application/rss+xml"))
            // No --image-root: a remote feed names no local file then (FileGateEndToEndTests has the opt-in).
            let output = try await CommandRunner.run(["ingest", server.url("/f.xml"), "--allow-private-network"])
            #expect(output.status == 0, "\(output.stderr)")
            let records = try Self.records(output)
            #expect(records.count == 2)
            let image = try #require(records[0]["image"] as? [String: Any])
            #expect(image["url"] as? String == "file:///etc/hostname")
            let warning = try #require((records[0]["warnings"] as? [[String: Any]])?.first)
            #expect(warning["code"] as? String == "refusedPath")
            #expect(warning["line"] as? Int == 3)
            // Protocol-relative: the feed's scheme.
            #expect((records[1]["image"] as? [String: Any])?["url"] as? String == "http://cdn.example.net/p.jpg")
        }
    }
}
