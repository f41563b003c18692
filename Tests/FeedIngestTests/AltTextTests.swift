import FeedIngest
import Testing

/// A photo's alternative text (`FeedImage.alt`), each way a feed gives one, and never from what describes the item
/// rather than the image.
struct AltTextTests {
    static let rss = """
        <?xml version="1.0"?>
        <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>Alt</title>
        <item><guid>d</guid><title>Described</title>
          <media:content url="https://e.com/d.jpg" medium="image">
            <media:title>A title</media:title>
            <media:description>A  harbour
              at dawn</media:description>
          </media:content></item>
        <item><guid>t</guid><title>Titled</title>
          <media:thumbnail url="https://e.com/t.jpg"><media:title type="html">Boats &amp;amp; &lt;b&gt;nets&lt;/b&gt;</media:title></media:thumbnail></item>
        <item><guid>h</guid><title>In HTML</title>
          <description>&lt;p&gt;Caption&lt;/p&gt;&lt;img src="https://e.com/h.jpg" alt=" A market stall "&gt;</description></item>
        <item><guid>e</guid><title>Empty alt</title>
          <description>&lt;img src="https://e.com/e.jpg" alt=""&gt;</description></item>
        <item><guid>i</guid><title>Item-level text</title>
          <media:description>About the item, not the image</media:description>
          <media:content url="https://e.com/i.jpg" medium="image"/></item>
        </channel></rss>
        """

    @Test func mediaRSSAndHTMLGiveTheImagesAlternativeText() throws {
        let items = try parse(Self.rss).items
        #expect(items.map { $0.image?.alt } == ["A harbour at dawn", "Boats & nets", "A market stall", nil, nil])
        // The media texts keep their old roles for the item: the item-level description is still its caption.
        #expect(items[4].text == "About the item, not the image")
        #expect(items[0].title == "Described")
    }

    @Test func aJSONFeedAttachmentsTitleIsItsAlternativeText() throws {
        let json = """
            {"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [
              {"id": "1", "attachments": [{"url": "https://e.com/a.jpg", "mime_type": "image/jpeg", "title": " A lighthouse "}]},
              {"id": "2", "attachments": [{"url": "https://e.com/b.jpg", "mime_type": "image/jpeg"}]}]}
            """
        let items = try parse(json).items
        #expect(items.map { $0.image?.alt } == ["A lighthouse", nil])
    }
}
