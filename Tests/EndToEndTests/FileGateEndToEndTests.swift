import FeedLayoutTestSupport
import Foundation
import Testing

/// Every way a feed can name a local file it has no right to, through `layout` and both previews, for a feed on
/// disk and one from a server: none is read, linked or quoted, and a FIFO or device never stalls the run.
@Suite(.timeLimit(.minutes(5)))
struct FileGateEndToEndTests {
    /// A folder holding a feed, with things beside it a feed should not reach.
    struct Scene {
        let base: URL
        var feedFolder: URL { base.appendingPathComponent("feed") }
        /// A real photo and a secret text file, outside every allowed folder.
        var outside: URL { base.appendingPathComponent("outside") }
        /// An extra allowed folder, for `--image-root`.
        var imageRoot: URL { base.appendingPathComponent("root") }

        /// The secret's text: it must never appear in any output, nor its bytes in hex.
        static let secret = "SECRET-TOKEN root:x:0:0"
        static let secretHex = "53 45 43 52"

        init() throws {
            base = try CommandRunner.temporaryDirectory()
            let manager = FileManager.default
            for folder in [feedFolder.appendingPathComponent("photos"), outside, imageRoot] {
                try manager.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            let photo = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos/espresso.jpg")
            try manager.copyItem(at: photo, to: feedFolder.appendingPathComponent("photos/good.jpg"))
            try manager.copyItem(at: photo, to: outside.appendingPathComponent("photo.jpg"))
            try manager.copyItem(at: photo, to: imageRoot.appendingPathComponent("only-in-root.jpg"))
            try Self.secret.write(to: outside.appendingPathComponent("passwd"), atomically: true, encoding: .utf8)
            try manager.createSymbolicLink(
                atPath: feedFolder.appendingPathComponent("link-out.jpg").path,
                withDestinationPath: outside.appendingPathComponent("photo.jpg").path)
            try manager.createSymbolicLink(
                atPath: feedFolder.appendingPathComponent("dev-zero.jpg").path, withDestinationPath: "/dev/zero")
            #expect(mkfifo(feedFolder.appendingPathComponent("fifo.jpg").path, 0o644) == 0)
            #expect(mkfifo(imageRoot.appendingPathComponent("fifo.jpg").path, 0o644) == 0)
        }

        func remove() { try? FileManager.default.removeItem(at: base) }

        /// A feed with a good photo and then `reference`.
        static func feed(_ reference: String) -> String {
            """
            <?xml version="1.0" encoding="utf-8"?>
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>gate</title>
            <item><title>good</title><guid>good</guid><media:content url="photos/good.jpg" medium="image"/></item>
            <item><title>hostile</title><guid>hostile</guid><media:content url="\(reference)" medium="image"/></item>
            </channel></rss>

            """
        }

        /// Writes the feed into the feed folder and returns its path.
        func writeFeed(_ reference: String) throws -> String {
            let path = feedFolder.appendingPathComponent("feed.xml").path
            try Self.feed(reference).write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
    }

    /// How a local feed names what lies outside its folder.
    enum LocalReference: String, CaseIterable, Sendable {
        case symlinkOut, dotDot, percentDotDot, absolutePath, fileURL, secretFile, fifo, deviceLink

        func text(_ scene: Scene) -> String {
            switch self {
            case .symlinkOut: "link-out.jpg"
            case .dotDot: "../outside/photo.jpg"
            case .percentDotDot: "photos/%2e%2e/%2E%2E/outside/photo.jpg"
            case .absolutePath: scene.outside.appendingPathComponent("photo.jpg").path
            case .fileURL: "file://" + scene.outside.appendingPathComponent("photo.jpg").path
            case .secretFile: scene.outside.appendingPathComponent("passwd").path
            case .fifo: "fifo.jpg"
            case .deviceLink: "dev-zero.jpg"
            }
        }
    }

    /// How a feed from a server names local files: only `file:` URLs can (every other reference resolves against
    /// the feed's URL).
    enum RemoteReference: String, CaseIterable, Sendable {
        case photo, secretFile, fifo, device, insideFeedFolder

        func text(_ scene: Scene) -> String {
            switch self {
            case .photo: "file://" + scene.outside.appendingPathComponent("photo.jpg").path
            case .secretFile: "file://" + scene.outside.appendingPathComponent("passwd").path
            case .fifo: "file://" + scene.imageRoot.appendingPathComponent("fifo.jpg").path
            case .device: "file:///dev/zero"
            case .insideFeedFolder: "file://" + scene.feedFolder.appendingPathComponent("photos/good.jpg").path
            }
        }
    }

    /// The commands end in time (a FIFO must not block them); this long is plenty for two pins.
    static let timeout = 60.0

    // MARK: Checks

    /// The hostile item of `layout`'s NDJSON pages: laid out with a declared or fallback size (its file unread),
    /// a warning naming the reference, nothing of the secret anywhere.
    static func expectRefusedInLayout(
        _ output: CommandRunner.Output, reference: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(output.status == 1, "\(output.stderr)", sourceLocation: sourceLocation)
        let items = try output.stdoutText.split(separator: "\n").flatMap { try PageFile(Data($0.utf8)).items }
        try #require(items.count == 2, "\(output.stdoutText)", sourceLocation: sourceLocation)
        let good = items[0]["photo"] as! [String: Any]
        #expect(good["sizeFrom"] as? String == "header", sourceLocation: sourceLocation)
        let hostile = items[1]["photo"] as! [String: Any]
        #expect(hostile["sizeFrom"] as? String != "header", "\(hostile)", sourceLocation: sourceLocation)
        let warnings = (items[1]["warnings"] as? [[String: Any]] ?? []).map { "\($0["code"] ?? ""): \($0["message"] ?? "")" }
        #expect(
            warnings.contains { $0.contains(reference) }, "\(warnings)", sourceLocation: sourceLocation)
        expectNoSecret(output.stdoutText + output.stderr, sourceLocation: sourceLocation)
    }

    /// The previews: the hostile photo is reported as not drawn (naming the reference), not linked from
    /// index.html, and nothing of the secret is printed; the good photo is drawn and linked.
    static func expectRefusedInPreviews(
        _ output: CommandRunner.Output, folder: URL, reference: String, forbiddenInLinks: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(output.status == 1, "\(output.stderr)", sourceLocation: sourceLocation)
        let notDrawn = output.stderr.split(separator: "\n").filter { $0.contains("photo not drawn: ") }
        #expect(notDrawn.count == 1, "\(output.stderr)", sourceLocation: sourceLocation)
        #expect(notDrawn.first?.contains(reference) == true, "\(output.stderr)", sourceLocation: sourceLocation)
        expectNoSecret(output.stderr, sourceLocation: sourceLocation)
        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        let sources = html.components(separatedBy: "src=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(
            sources.contains { $0.hasSuffix("photos/good.jpg") }, "\(sources)", sourceLocation: sourceLocation)
        for forbidden in forbiddenInLinks {
            #expect(!sources.contains { $0.contains(forbidden) }, "\(sources)", sourceLocation: sourceLocation)
        }
        #expect(
            FileManager.default.fileExists(atPath: folder.appendingPathComponent("preview.png").path),
            sourceLocation: sourceLocation)
    }

    static func expectNoSecret(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!text.contains("SECRET"), "\(text)", sourceLocation: sourceLocation)
        #expect(!text.contains(Scene.secretHex), "\(text)", sourceLocation: sourceLocation)
    }

    /// What the links of index.html must never name.
    static let forbiddenInLinks = ["outside", "passwd", "fifo", "zero", "file:"]

    /// Serves the feed naming `reference` (and its good photo) on 127.0.0.1 while `body` runs with its URL.
    static func withRemoteFeed(
        _ reference: String, scene: Scene, _ body: (String) async throws -> Void
    ) async throws {
        try await TestHTTPServer.with { server in
            server.serve("/feed.xml", .init(body: Array(Scene.feed(reference).utf8), contentType: "application/rss+xml"))
            let photo = try Data(contentsOf: scene.feedFolder.appendingPathComponent("photos/good.jpg"))
            server.serve("/photos/good.jpg", .init(body: [UInt8](photo), contentType: "image/jpeg"))
            try await body(server.url("/feed.xml"))
        }
    }

    // MARK: Tests

    @Test(arguments: LocalReference.allCases)
    func localFeedReadsNothingOutsideItsFolder(_ kind: LocalReference) async throws {
        let scene = try Scene()
        defer { scene.remove() }
        let reference = kind.text(scene)
        let feed = try scene.writeFeed(reference)
        let layout = try await CommandRunner.run(["layout", feed, "--no-cache", "--quiet"], timeout: Self.timeout)
        try Self.expectRefusedInLayout(layout, reference: reference)
        let folder = scene.base.appendingPathComponent("preview")
        let preview = try await CommandRunner.run(
            ["preview", feed, "--out", folder.path, "--no-cache"], timeout: Self.timeout)
        try Self.expectRefusedInPreviews(
            preview, folder: folder, reference: reference, forbiddenInLinks: Self.forbiddenInLinks)
    }

    @Test(arguments: RemoteReference.allCases)
    func remoteFeedReadsNoLocalFile(_ kind: RemoteReference) async throws {
        let scene = try Scene()
        defer { scene.remove() }
        let reference = kind.text(scene)
        try await Self.withRemoteFeed(reference, scene: scene) { feed in
            let layout = try await CommandRunner.run(
                ["layout", feed, "--allow-private-network", "--no-cache", "--quiet"], timeout: Self.timeout)
            try Self.expectRefusedInLayout(layout, reference: reference)
            let folder = scene.base.appendingPathComponent("preview")
            let preview = try await CommandRunner.run(
                ["preview", feed, "--out", folder.path, "--allow-private-network", "--no-cache"],
                timeout: Self.timeout)
            try Self.expectRefusedInPreviews(
                preview, folder: folder, reference: reference, forbiddenInLinks: Self.forbiddenInLinks + ["feed/"])
        }
    }

    /// `--image-root` is where `layout` finds a relative reference that is not beside the feed, as the preview
    /// does; a FIFO there is refused, not waited on.
    @Test func imageRootServesRelativeReferencesInLayoutAndPreviews() async throws {
        let scene = try Scene()
        defer { scene.remove() }
        let feed = try scene.writeFeed("only-in-root.jpg")
        let layout = try await CommandRunner.run(
            ["layout", feed, "--image-root", scene.imageRoot.path, "--no-cache", "--quiet"], timeout: Self.timeout)
        #expect(layout.status == 0, "\(layout.stderr)")
        let items = try layout.stdoutText.split(separator: "\n").flatMap { try PageFile(Data($0.utf8)).items }
        #expect(items.map { ($0["photo"] as! [String: Any])["sizeFrom"] as? String } == ["header", "header"])
        let folder = scene.base.appendingPathComponent("preview")
        let preview = try await CommandRunner.run(
            ["preview", feed, "--out", folder.path, "--image-root", scene.imageRoot.path, "--no-cache"],
            timeout: Self.timeout)
        #expect(preview.status == 0, "\(preview.stderr)")
        #expect(!preview.stderr.contains("photo not drawn"), "\(preview.stderr)")
        let html = try String(contentsOf: folder.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(html.contains("src=\"../root/only-in-root.jpg\""), "\(html)")

        let fifoFeed = try scene.writeFeed("../root/fifo.jpg")
        let fifo = try await CommandRunner.run(
            ["layout", fifoFeed, "--image-root", scene.imageRoot.path, "--no-cache", "--quiet"],
            timeout: Self.timeout)
        // Inside the image root, the reference is named relative to it, as pages name it.
        try Self.expectRefusedInLayout(fifo, reference: "fifo.jpg")
        #expect(fifo.stdoutText.contains("named pipe (FIFO), not a regular file"), "\(fifo.stdoutText)")
    }

    /// A device inside an allowed folder is still not read: only regular files are.
    @Test func deviceInsideAnAllowedFolderIsRefused() async throws {
        let scene = try Scene()
        defer { scene.remove() }
        let feed = try scene.writeFeed("/dev/zero")
        let layout = try await CommandRunner.run(
            ["layout", feed, "--image-root", "/dev", "--no-cache", "--quiet"], timeout: Self.timeout)
        // Inside the image root, the reference is named relative to it, as pages name it.
        try Self.expectRefusedInLayout(layout, reference: "zero")
        #expect(layout.stdoutText.contains("a character device, not a regular file"), "\(layout.stdoutText)")
        let folder = scene.base.appendingPathComponent("preview")
        let preview = try await CommandRunner.run(
            ["preview", feed, "--out", folder.path, "--image-root", "/dev", "--no-cache"], timeout: Self.timeout)
        try Self.expectRefusedInPreviews(
            preview, folder: folder, reference: "zero", forbiddenInLinks: Self.forbiddenInLinks)
    }

    /// A feed from a server may name local files only inside the image root the person running it named.
    @Test func remoteFeedReadsInsideTheImageRootOnly() async throws {
        let scene = try Scene()
        defer { scene.remove() }
        let reference = "file://" + scene.imageRoot.appendingPathComponent("only-in-root.jpg").path
        try await Self.withRemoteFeed(reference, scene: scene) { feed in
            let layout = try await CommandRunner.run(
                ["layout", feed, "--image-root", scene.imageRoot.path, "--allow-private-network", "--no-cache", "--quiet"],
                timeout: Self.timeout)
            #expect(layout.status == 0, "\(layout.stderr)")
            let items = try layout.stdoutText.split(separator: "\n").flatMap { try PageFile(Data($0.utf8)).items }
            #expect(items.map { ($0["photo"] as! [String: Any])["sizeFrom"] as? String } == ["header", "header"])
            let folder = scene.base.appendingPathComponent("preview")
            let preview = try await CommandRunner.run(
                [
                    "preview", feed, "--out", folder.path, "--image-root", scene.imageRoot.path,
                    "--allow-private-network", "--no-cache",
                ], timeout: Self.timeout)
            #expect(preview.status == 0, "\(preview.stderr)")
            #expect(!preview.stderr.contains("photo not drawn"), "\(preview.stderr)")
        }
    }

    /// A FIFO named as the font stops the run with a clear error instead of blocking it.
    @Test func fifoAsFontIsRefused() async throws {
        let scene = try Scene()
        defer { scene.remove() }
        let feed = try scene.writeFeed("photos/good.jpg")
        let fifo = scene.imageRoot.appendingPathComponent("fifo.jpg").path
        let output = try await CommandRunner.run(
            ["layout", feed, "--font", fifo, "--no-cache", "--quiet"], timeout: Self.timeout)
        #expect(output.status == 2, "\(output.stderr)")
        #expect(output.stderr.contains("named pipe (FIFO), not a regular file"), "\(output.stderr)")
    }
}
