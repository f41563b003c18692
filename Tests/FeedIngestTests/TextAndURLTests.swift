import Testing

@testable import FeedIngest

struct HTMLTextTests {
    @Test func dropsTagsDecodesEntitiesAndCollapsesWhitespace() {
        let converter = HTMLTextConverter()
        let html = Array(
            "<p>One&nbsp;&amp;\n two</p><script>var x = '<b>';</script><ul><li>a</li><li>b</li></ul>x<b>y</b>z &eacute;"
                .utf8)
        #expect(converter.convert(html, collectImages: false).text == "One & two a b xyz é")
    }

    @Test(arguments: [
        ("<b>Bold</b> <i>italic</i>", "Bold italic"),
        (" <em>lead</em> text ", "lead text"),
        ("<p>one</p><p>two</p>", "one two"),
        ("<a href=\"x\">link</a>&nbsp;<span>after</span>", "link after"),
        ("1 < 2 and 3 > 2", "1 < 2 and 3 > 2"),
        ("Tom & Jerry &amp; friends", "Tom & Jerry & friends"),
        ("<title>Page</title><p>Body</p>", "Page Body"),
    ])
    func keepsSpacesBetweenInlineElements(html: String, expected: String) {
        #expect(HTMLTextConverter().convert(Array(html.utf8), collectImages: false).text == expected)
    }

    @Test func findsImagesButNotPixelsAvatarsOrDataURIs() {
        let converter = HTMLTextConverter()
        let html = Array(
            """
            <img src="data:image/png;base64,AAAA"><img src="/a.gif" width="1" height="1">
            <img class="avatar photo" src="/me.jpg"><img src="/p.jpg" data-src="/lazy.jpg" width="800px">
            <img srcset="/s.jpg 1x, /l.jpg 2x">
            """.utf8)
        let images = converter.convert(html, collectImages: true).images
        #expect(
            images == [
                HTMLImageReference(source: "/lazy.jpg", width: "800px", height: nil),
                HTMLImageReference(source: "/l.jpg", width: nil, height: nil),
            ])
    }

    @Test func truncatesAtAWordBoundary() {
        #expect(truncateText("short", limit: 10) == "short")
        #expect(truncateText("the quick brown fox jumps", limit: 12) == "the quick…")
        #expect(truncateText("abcdefghijklmnop", limit: 5) == "abcd…")
    }

    @Test func readsSizesLeniently() {
        #expect(lenientInteger("800px") == 800)
        #expect(lenientInteger(" 1024.5") == 1024)
        #expect(lenientInteger(" 800PX ") == 800)
        #expect(lenientInteger("100%") == nil)
        #expect(lenientInteger("50em") == nil)
        #expect(lenientInteger("auto") == nil)
        #expect(lenientInteger("") == nil)
    }

    @Test func guessesWhetherATitleIsHTML() {
        #expect(HTMLTextConverter.looksLikeHTML(Array("<b>Bold</b> move".utf8)))
        #expect(HTMLTextConverter.looksLikeHTML(Array("Caf&eacute;".utf8)))
        #expect(!HTMLTextConverter.looksLikeHTML(Array("Fish & Chips <3".utf8)))
        #expect(!HTMLTextConverter.looksLikeHTML(Array("The <Feed> tag".utf8)))
    }
}

struct URLResolverTests {
    let remote = URLResolver(feedURL: "https://example.com/feeds/all.xml", feedDirectory: nil, imageRoot: nil)

    @Test func resolvesAgainstTheFirstBase() {
        #expect(
            remote.resolveLink("a.jpg", bases: [nil, "https://blog.example.com/post/"])
                == "https://blog.example.com/post/a.jpg")
        #expect(
            remote.resolveLink("a.jpg", bases: ["https://x.example/base/", "https://y.example/"])
                == "https://x.example/base/a.jpg")
        #expect(remote.resolveLink("../a.jpg", bases: [nil]) == "https://example.com/a.jpg")
        #expect(remote.resolveLink("/a b.jpg", bases: []) == "https://example.com/a%20b.jpg")
    }

    @Test func protocolRelativeTakesTheFeedsScheme() {
        #expect(remote.resolveLink("//cdn.example.net/x.jpg", bases: []) == "https://cdn.example.net/x.jpg")
        let plain = URLResolver(feedURL: "http://example.com/feed", feedDirectory: nil, imageRoot: nil)
        #expect(plain.resolveLink("//cdn.example.net/x.jpg", bases: []) == "http://cdn.example.net/x.jpg")
    }

    @Test func absoluteReferencesAreKept() {
        #expect(
            remote.resolveLink("HTTPS://Other.example/x.jpg", bases: ["https://a/"]) == "HTTPS://Other.example/x.jpg")
        #expect(URLResolver.scheme(of: "c:/windows") == "c")
        #expect(URLResolver.scheme(of: "photos/a:b.jpg") == nil)
    }
}
