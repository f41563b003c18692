import FeedIngest
import Foundation
import Testing

@testable import FeedLayout

/// An item's chosen image that turns out missing or not an image gives way to the item's next usable image: a
/// broken `media:content` never wins over a readable thumbnail or enclosure.
@Suite struct ImageFallbackTests {
    /// A feed beside one real photo (the sample feed's espresso, 4:3 once oriented) and a text file named as a photo.
    static func writeFeed() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("feedlayout-fallback-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        try FileManager.default.copyItem(
            at: repository.appendingPathComponent("sample-feed/photos/espresso.jpg"),
            to: folder.appendingPathComponent("photo.jpg"))
        try Data("not a photo\n".utf8).write(to: folder.appendingPathComponent("notes.jpg"))
        let xml = """
            <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>fallbacks</title>
            <item><guid>missing-content</guid>
            <media:content url="missing.jpg" medium="image" width="4000" height="1000"/>
            <media:thumbnail url="photo.jpg" width="10" height="10"/></item>
            <item><guid>not-an-image</guid>
            <media:content url="notes.jpg" width="4000" height="1000"/>
            <enclosure url="photo.jpg" type="image/jpeg"/></item>
            <item><guid>nothing-else</guid>
            <media:content url="missing.jpg" medium="image" width="4000" height="1000"/></item>
            </channel></rss>
            """
        let path = folder.appendingPathComponent("feed.xml").path
        try Data(xml.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theNextUsableImageReplacesABrokenOne() async throws {
        let pipeline = try LayoutPipeline(options: LayoutOptions())
        var items: [LaidOutItem] = []
        _ = try await pipeline.run(feedPath: try Self.writeFeed()) { page in items += page.items }
        try #require(items.count == 3)
        #expect(items.map(\.photo.url) == ["photo.jpg", "photo.jpg", "missing.jpg"])
        #expect(items.map(\.photo.sizeSource) == [.header, .header, .declared])
        let probed = try #require(items[0].photo.info)
        #expect(items[1].photo.info == probed)
        #expect(items[0].warnings.map(\.code) == ["imageNotFound", "imageReplaced"])
        #expect(items[1].warnings.map(\.code) == ["imageUnknownFormat", "imageReplaced"])
        #expect(
            items[1].warnings.last?.message
                == "notes.jpg could not be used; the item's enclosure photo.jpg is its photo instead")
        // With nothing to fall back to, the declared size stands in, as before.
        #expect(items[2].warnings.map(\.code) == ["imageNotFound"])
    }
}
