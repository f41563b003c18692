import FeedLayoutTestSupport
import Foundation
import NIOHTTP1
import Testing

@testable import LayoutService

/// What the web client is served: its own files as they are kept, each layout's style sheet and fonts, and photos
/// from the image root only.
@Suite(.timeLimit(.minutes(5)))
struct ClientRoutesTests {
    static let clientFolder = ServiceFeeds.repositoryRoot.appendingPathComponent("Sources/LayoutService/Client/Resources/client")
    static let sampleFolder = ServiceFeeds.repositoryRoot.appendingPathComponent("sample-feed")

    @Test func theClientsFilesAreServedAsKeptAndRevalidated() async throws {
        let service = try await ServiceHarness.start()
        defer { Task { await service.stop() } }
        for (path, file, type) in [
            ("/", "index.html", "text/html; charset=utf-8"),
            ("/view/0123456789abcdef0123456789abcdef", "view.html", "text/html; charset=utf-8"),
            ("/view/feed/0123456789abcdef0123456789abcdef", "view.html", "text/html; charset=utf-8"),
            ("/client/feed.js", "feed.js", "text/javascript; charset=utf-8"),
            ("/client/form.js", "form.js", "text/javascript; charset=utf-8"),
            ("/client/feed.css", "feed.css", "text/css; charset=utf-8"),
            ("/client/feedlayout.mjs", "../../../../../clients/js/feedlayout.mjs", "text/javascript; charset=utf-8"),
            ("/client/feedlayout.css", "../../../../../clients/js/feedlayout.css", "text/css; charset=utf-8"),
        ] {
            let reply = try await service.request(.GET, path)
            #expect(reply.status == 200, "\(path)")
            let kept = Self.clientFolder.appendingPathComponent(file).standardized
            #expect(reply.body == [UInt8](try Data(contentsOf: kept)), "\(path)")
            #expect(reply.headers.first(name: "Content-Type") == type)
            #expect(reply.headers.first(name: "Cache-Control") == "no-cache")
            let tag = try #require(reply.headers.first(name: "ETag"))
            let again = try await service.request(.GET, path, headers: [("If-None-Match", tag)])
            #expect(again.status == 304 && again.body.isEmpty, "\(path)")
            if type.hasPrefix("text/html") {
                #expect(reply.headers.first(name: "Content-Security-Policy")?.contains("script-src 'self'") == true)
            }
        }
        #expect(try await service.request(.GET, "/client/nothing.js").status == 404)
        #expect(try await service.request(.GET, "/client/..%2FLayoutService.swift").status == 404)
    }

    @Test func aLayoutsStyleSheetDeclaresItsFontsEachWithOnlyTheCharactersItAdds() async throws {
        let service = try await ServiceHarness.start { $0.imageRoot = Self.sampleFolder.path }
        defer { Task { await service.stop() } }
        let feed = try String(contentsOf: Self.sampleFolder.appendingPathComponent("feed.xml"), encoding: .utf8)
        let posted = try await service.post(["feedText": feed, "options": ["width": 800, "columns": 3]])
        let id = try #require(posted.json["id"] as? String, "\(posted.text)")
        _ = try await service.waitUntilDone(id)
        let page = try await service.request(.GET, "/v1/layouts/\(id)/pages/0")
        let fonts = try #require((page.json["layout"] as? [String: Any])?["fonts"] as? [String: [[String: Any]]])

        let sheet = try await service.request(.GET, "/v1/layouts/\(id)/style.css")
        #expect(sheet.status == 200)
        #expect(sheet.headers.first(name: "Content-Type") == "text/css; charset=utf-8")
        #expect(sheet.headers.first(name: "Cache-Control") == "public, max-age=31536000, immutable")
        #expect(sheet.text.contains(".feedlayout-title { font: 700 15px/normal \"FeedLayout title 0\""))
        #expect(sheet.text.contains("-webkit-line-clamp: 2;"))
        #expect(sheet.text.contains(".feedlayout-caption { font: 400 13px/normal \"FeedLayout caption 0\""))
        for role in ["title", "caption"] {
            let faces = sheet.text.split(separator: "\n").filter { $0.contains("font-family: \"FeedLayout \(role) ") }
            var covered: [ClosedRange<UInt32>] = []
            for (position, face) in faces.enumerated() {
                // Each face is a font of the page's list, at its place in it.
                let digest = try #require(face.firstMatch(of: /fonts\/([0-9a-f]{64})\./)?.1)
                let listed = try #require(fonts[role]?.firstIndex { $0["digest"] as? String == "sha256:" + digest })
                #expect(listed >= position, "\(role) font \(position) is out of the list's order")
                let ranges = face.firstMatch(of: /unicode-range: ([^;]+);/).map { Self.ranges(String($0.1)) } ?? []
                // The primary font covers everything; every fallback only what no font before it has.
                #expect(position == 0 ? ranges.isEmpty : !ranges.isEmpty, "\(face)")
                #expect(FontCoverage.subtract(covered, from: ranges) == ranges, "\(role) font \(position) overlaps")
                covered = FontCoverage.union(covered, ranges)

                let url = try #require(face.firstMatch(of: /url\("([^"]+)"\)/)?.1)
                let font = try await service.request(.GET, String(url), record: false)
                #expect(font.status == 200)
                #expect(font.headers.first(name: "Content-Type")?.hasPrefix("font/") == true)
                let magic = Array(font.body.prefix(4))
                #expect([[0, 1, 0, 0], Array("OTTO".utf8), Array("ttcf".utf8), Array("true".utf8)].contains(magic))
            }
            #expect(faces.count >= 2, "\(role): \(faces.count) faces")
            // Thai reaches the Thai font: its letters are in that face's range and no other's.
            #expect(covered.contains { $0.contains(0x0E01) })
        }
        let wrong = try await service.request(.GET, "/v1/layouts/\(id)/fonts/" + String(repeating: "0", count: 64) + ".ttf")
        #expect(wrong.status == 404)
        #expect(try await service.request(.GET, "/v1/layouts/" + String(repeating: "a", count: 32) + "/style.css").status == 404)
    }

    @Test func photosAreServedFromTheImageRootAndNowhereElse() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-root-\(UUID())")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("photos"), withIntermediateDirectories: true)
        let cat = Self.sampleFolder.appendingPathComponent("photos/chelsea-the-cat.jpg")
        try FileManager.default.copyItem(at: cat, to: root.appendingPathComponent("photos/cat.jpg"))
        try Data("secret".utf8).write(to: root.appendingPathComponent("photos/notes.txt"))
        // A link inside the root to a photo outside it.
        try FileManager.default.createSymbolicLink(
            at: root.appendingPathComponent("photos/outside.jpg"),
            withDestinationURL: Self.sampleFolder.appendingPathComponent("photos/espresso.jpg"))
        let service = try await ServiceHarness.start { $0.imageRoot = root.path }
        defer { Task { await service.stop() } }
        let photo = try await service.request(.GET, "/files/photos/cat.jpg")
        #expect(photo.status == 200)
        #expect(photo.body == [UInt8](try Data(contentsOf: cat)))
        #expect(photo.headers.first(name: "Content-Type") == "image/jpeg")
        for path in [
            "/files/photos/notes.txt", "/files/photos/outside.jpg", "/files/photos/missing.jpg",
            "/files/../sample-feed/photos/espresso.jpg", "/files/photos/%2e%2e/%2e%2e/etc/passwd.jpg",
        ] {
            let reply = try await service.request(.GET, path)
            #expect(reply.status == 404, "\(path): \(reply.status)")
            #expect(!reply.text.contains("secret"))
        }
        let unrooted = try await ServiceHarness.start()
        defer { Task { await unrooted.stop() } }
        let refused = try await unrooted.request(.GET, "/files/photos/cat.jpg")
        #expect(refused.status == 404 && refused.text.contains("--image-root"))
    }

    /// Coverage arithmetic against sets of code points, on random ranges.
    @Test func rangeUnionAndSubtractionAgreeWithSets() {
        var random = SplitMix64(seed: 7)
        func ranges() -> [ClosedRange<UInt32>] {
            var result: [ClosedRange<UInt32>] = []
            var start = UInt32(random.next() % 8)
            while start < 300 {
                let end = start + UInt32(random.next() % 12)
                result.append(start...end)
                start = end + 2 + UInt32(random.next() % 15)
            }
            return result
        }
        func points(_ ranges: [ClosedRange<UInt32>]) -> Set<UInt32> { Set(ranges.flatMap { Array($0) }) }
        for _ in 0..<300 {
            let (first, second) = (ranges(), ranges())
            let union = FontCoverage.union(first, second)
            let difference = FontCoverage.subtract(first, from: second)
            #expect(points(union) == points(first).union(points(second)))
            #expect(points(difference) == points(second).subtracting(points(first)))
            for result in [union, difference] {
                #expect(zip(result, result.dropFirst()).allSatisfy { $0.upperBound + 1 < $1.lowerBound })
            }
        }
        #expect(FontCoverage.css([0x41...0x5A, 0xE9...0xE9]) == "U+41-5A, U+E9")
    }

    static func ranges(_ text: String) -> [ClosedRange<UInt32>] {
        text.split(separator: ",").compactMap { part in
            let bounds = part.trimmingCharacters(in: .whitespaces).dropFirst(2).split(separator: "-")
            guard let low = UInt32(bounds[0], radix: 16) else { return nil }
            return low...(bounds.count > 1 ? UInt32(bounds[1], radix: 16) ?? low : low)
        }
    }
}
