import FeedLayoutTestSupport
import Foundation
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
        #expect(lenientInteger("12 p x") == nil)
        #expect(lenientInteger("12pxx") == nil)
        #expect(lenientInteger("\t640\n") == 640)
    }

    @Test func comparesASCIIKeywordsInAnyCase() {
        #expect("IMAGE".equalsASCIIIgnoringCase("image"))
        #expect(!"images".equalsASCIIIgnoringCase("image"))
        #expect(!"imag".equalsASCIIIgnoringCase("image"))
        #expect("Image/JPEG".hasASCIIPrefixIgnoringCase("image/"))
        #expect(!"video/mp4".hasASCIIPrefixIgnoringCase("image/"))
        #expect("DATA:image/png;base64,".hasASCIIPrefixIgnoringCase("data:"))
        // Only ASCII letters fold: "İ" is not "i".
        #expect(!"İmage".equalsASCIIIgnoringCase("image"))
    }

    @Test func theFieldSetHasABitForEveryField() {
        #expect(ItemField.allCases.count <= 32)
        #expect(Set(ItemField.allCases.map(\.bit)).count == ItemField.allCases.count)
    }

    @Test func wordChecksAgreeWithBytewiseChecks() {
        // Every byte value at every position of a word, among neighbours that never match: the word tricks must
        // say what a byte-by-byte look says, for each bound and value the scanners use.
        for position in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: 0x61, count: 8)
                bytes[position] = UInt8(value)
                let word = bytes.withUnsafeBytes { ByteWord.load($0.baseAddress!, at: 0) }
                for bound: UInt8 in [0x20, 0x21] {
                    #expect(ByteWord.hasByte(below: bound, in: word) == (value < Int(bound)), "\(value) < \(bound)")
                }
                for probe: UInt8 in [0x22, 0x26, 0x3C, 0x5C, 0xC2] {
                    #expect(ByteWord.hasByte(probe, in: word) == (value == Int(probe)), "\(value) == \(probe)")
                }
                #expect(ByteWord.isASCII(word) == (value < 0x80))
                let highBit = UInt64(0x80) << (8 * UInt64(position))
                #expect(ByteWord.positions(of: 0x20, in: word) == (value == 0x20 ? highBit : 0), "\(value) at \(position)")
                // Exact among neighbours that all match, where a borrow would spill into the next byte.
                var spaces = [UInt8](repeating: 0x20, count: 8)
                spaces[position] = UInt8(value)
                let spaced = spaces.withUnsafeBytes { ByteWord.load($0.baseAddress!, at: 0) }
                let expected = value == 0x20 ? ByteWord.highs : ByteWord.highs & ~highBit
                #expect(ByteWord.positions(of: 0x20, in: spaced) == expected, "\(value) among spaces at \(position)")
            }
        }
    }

    @Test func theFirstByteARunStopsAtIsExactInAnyWord() {
        // Random words over the bytes that matter (each also after a byte that matches, where a borrow spills into
        // the next): the offset of the lowest stop is the first byte a byte-by-byte look stops at.
        var generator = SplitMix64(seed: 8)
        let alphabet: [UInt8] = [0x00, 0x0A, 0x1F, 0x20, 0x26, 0x3C, 0x5D, 0x61, 0x7F, 0x80, 0xC2, 0xE4, 0xFF]
        func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x80 && byte != 0x26 && byte != 0x3C }
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in alphabet.randomElement(using: &generator)! }
            let word = bytes.withUnsafeBytes { ByteWord.load($0.baseAddress!, at: 0) }
            let stops = InputSanitizer.nonPlainBytes(word)
            let first = bytes.firstIndex { !isPlain($0) }
            #expect((stops == 0) == (first == nil), "\(bytes)")
            if let first { #expect(ByteWord.offset(ofFirst: stops) == first, "\(bytes)") }
            let brackets = ByteWord.bytes(equalTo: 0x5D, in: word)
            if let bracket = bytes.firstIndex(of: 0x5D) {
                #expect(ByteWord.offset(ofFirst: brackets) == bracket, "\(bytes)")
            } else {
                #expect(brackets == 0, "\(bytes)")
            }
        }
    }

    @Test func collapsedTextIsTakenAsItIsAndOtherTextCollapses() {
        // Whitespace collapses to single spaces with the ends trimmed, as splitting on it and joining with spaces
        // does; text already like that takes the fast path. Random strings over the bytes that matter, at every
        // length around a word.
        let pieces: [[UInt8]] = [[0x61], [0x62], [0x20], [0x20], [0x09], [0x0A], [0xC2, 0xA0], [0xC3, 0xA9], [0xC2, 0xA9]]
        var random = SplitMix64(seed: 17)
        for _ in 0..<4000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 0..<20, using: &random) {
                bytes += pieces[Int.random(in: 0..<pieces.count, using: &random)]
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\u{A0}" })
            let expected = words.joined(separator: " ")
            #expect(HTMLTextConverter.collapseWhitespace(bytes) == expected, "\(bytes)")
            let alreadyCollapsed = Array(text.utf8) == Array(expected.utf8) && !bytes.contains(0xC2)
            if alreadyCollapsed { #expect(bytes.withUnsafeBufferPointer { HTMLTextConverter.isCollapsed($0) }) }
        }
    }


    @Test func attributeValuesSurviveAtEveryAlignment() throws {
        // Attribute values are copied eight bytes at a time while nothing in them needs a look: put each kind of
        // byte that does (a bare `&`, a newline, non-ASCII), and some that do not, at every offset of a word.
        for special in ["&", "\n", "é", "'", "-", "]"] {
            for offset in 0..<17 {
                let url = "https://example.com/" + String(repeating: "a", count: offset) + special + "b/photo.jpg"
                let feed = """
                    <rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><item><title>t</title>
                    <media:content url="\(url)" medium="image"/></item></channel></rss>
                    """
                let item = try #require(try parse(feed, chunkSize: 64).items.first)
                // A newline in an attribute value is normalised to a space by the XML parser.
                #expect(item.image?.url == url.replacingOccurrences(of: "\n", with: " "), "\(special) at \(offset)")
            }
        }
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

    @Test func resolvesAgainstTheBaseElseTheFeed() {
        #expect(
            remote.resolveLink("a.jpg", base: "https://blog.example.com/post/") == "https://blog.example.com/post/a.jpg")
        #expect(remote.resolveLink("../a.jpg", base: nil) == "https://example.com/a.jpg")
        #expect(remote.resolveLink("/a b.jpg", base: nil) == "https://example.com/a%20b.jpg")
    }

    @Test func protocolRelativeTakesTheFeedsScheme() {
        #expect(remote.resolveLink("//cdn.example.net/x.jpg", base: nil) == "https://cdn.example.net/x.jpg")
        let plain = URLResolver(feedURL: "http://example.com/feed", feedDirectory: nil, imageRoot: nil)
        #expect(plain.resolveLink("//cdn.example.net/x.jpg", base: nil) == "http://cdn.example.net/x.jpg")
    }

    @Test func absoluteReferencesAreKept() {
        #expect(
            remote.resolveLink("HTTPS://Other.example/x.jpg", base: "https://a/") == "HTTPS://Other.example/x.jpg")
        #expect(URLResolver.scheme(of: "c:/windows") == "c")
        #expect(URLResolver.scheme(of: "photos/a:b.jpg") == nil)
    }
}

/// The byte-level helpers that decide what a reference's path is: its query and fragment cut off, its extension read
/// from the last path segment only.
struct ReferencePathTests {
    @Test(arguments: [
        ("photos/a.jpg", "photos/a.jpg", "jpg"),
        ("photos/a.JPG?size=large#top", "photos/a.JPG", "jpg"),
        ("https://example.org/a.b/c", "https://example.org/a.b/c", ""),
        ("https://example.org/a.tar.gz#part", "https://example.org/a.tar.gz", "gz"),
        ("noextension", "noextension", ""),
        ("folder.d/", "folder.d/", ""),
        ("a.png#x?y", "a.png", "png"),
        ("?only=query.jpg", "", ""),
        ("写真/夏.JPEG", "写真/夏.JPEG", "jpeg"),
        ("", "", ""),
    ])
    func pathAndExtension(reference: String, path: String, pathExtension: String) {
        #expect(URLResolver.stripQueryAndFragment(reference) == path)
        #expect(ItemFinisher.pathExtension(reference) == pathExtension)
    }
}
