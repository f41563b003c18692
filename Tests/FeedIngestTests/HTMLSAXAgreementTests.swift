import FeedLayoutTestSupport
import Testing

@testable import FeedIngest

/// Captions are read from libxml2's SAX events; before, from the document tree it built. The two must
/// agree on text and images for any input: the fixtures, the fuzz corpus, cut into fragments, and
/// generated tag soup.
struct HTMLSAXAgreementTests {
    static func disagreements(_ inputs: [[UInt8]]) -> [String] {
        let sax = HTMLTextConverter()
        let tree = HTMLTextConverter()
        var found: [String] = []
        for input in inputs {
            for collectImages in [false, true] {
                let fromEvents = sax.convert(input, collectImages: collectImages)
                let fromTree = tree.convertWithTree(input, collectImages: collectImages)
                if fromEvents.text != fromTree.text || fromEvents.images != fromTree.images {
                    found.append(
                        "\(String(decoding: input.prefix(300), as: UTF8.self)): \(fromEvents.text.prefix(200)) | \(fromTree.text.prefix(200)) | \(fromEvents.images.count) vs \(fromTree.images.count) images"
                    )
                }
            }
        }
        return found
    }

    @Test func handWrittenCases() {
        let cases = [
            "<p>One&nbsp;&amp;\n two</p><script>var x = '<b>';</script><ul><li>a</li><li>b</li></ul>x<b>y</b>z &eacute;",
            "<div><span>a</span> <span>b</span></div>", "<p>a</p> <p>b</p>", "a<br>b<br/>c",
            "<table><tr><td>1<td>2</table>3",
            "<noscript><img src=/n.jpg>hidden</noscript>shown", "<style>p{}</style><template><p>t</p></template>x",
            "<img src=\"/a.jpg\" width=\"1\" height=\"1\"><img data-src=/lazy.jpg src=/p.jpg>",
            "<img srcset=\"/s.jpg 1x, /l.jpg 2x\">",
            "<IMG SRC=/upper.JPG WIDTH=800>", "<p>unclosed <b>bold <i>both</p>after", "x<iframe></iframe> <em>y</em>",
            "<html><head><title>T</title></head><body> <p>b</p> </body></html>", "<!DOCTYPE html><p>d</p>",
            "<![CDATA[c]]>d", "<!-- c --><p>after comment</p>", "<?pi x?>pi", "&lt;b&gt;escaped&lt;/b&gt;",
            "<a href=x>link</a>&nbsp;<span>after</span>",
            "<select><option>o1<option>o2</select> s", "<object><param name=a></object> o", "text <input> text",
            "<dl><dt>t<dd>d</dl>",
            "<h1>h</h1>x<hr>y", "<blockquote>q</blockquote><figcaption>f</figcaption>",
            "<p><a href=u>X</a> posted a photo:</p> <p><a href=v><img src=\"https://e/x.jpg\" width=\"240\" height=\"160\" alt=\"a\" /></a></p> <p>caption</p>",
            "<script>unterminated", "<p>a</p>\n\n<div>\n<span>b</span>\n</div>", "  leading <b> and </b> trailing  ",
            // A paragraph opened in a paragraph closes it; the outer end tag is then stray (Flickr's captions).
            "<p><p>a&nbsp;🚲</p><p>b</p></p>", "<p>a<p>b</p></p>c", "</p>x", "x</p>", "<div><p>a<p>b</div>",
            "<p><b>a<p>b</b>", "<p>a</b><p>b", "<div><p>a</div></p>b", "<p><a href=x>a</a><p>b</p></p></p>",
        ]
        #expect(Self.disagreements(cases.map { Array($0.utf8) }) == [])
    }

    @Test func fixturesAndTheirFragments() {
        let names = [
            "atom-xml-base.xml", "atom03.xml", "bare-ampersand-nbsp.xml", "cdata.xml", "html-page.html",
            "images-only-in-html.xml", "lazy-load-data-src.xml", "media-namespace-variants.xml", "rss2-flickr.xml",
            "tracking-pixels.xml", "non-numeric-sizes.xml", "odd-dates.xml", "rss1.rdf",
        ]
        var inputs: [[UInt8]] = []
        for name in names {
            let bytes = fixture(name)
            inputs.append(bytes)
            // Fragments from every '<' at a stride: HTML fragments in all states.
            var start = 0
            while start < bytes.count {
                for length in [40, 200, 900] { inputs.append(Array(bytes[start..<min(bytes.count, start + length)])) }
                start += 37
            }
        }
        #expect(Self.disagreements(inputs) == [])
    }

    @Test func theFuzzCorpus() throws {
        #expect(Self.disagreements(try FuzzCorpusTests.corpus()) == [])
    }

    /// Markup the libxml2-free path reads itself (and near misses it must hand over): nested elements of
    /// its list, attributes, references, whitespace between tags.
    @Test func generatedSimpleMarkup() {
        var generator = SplitMix64(seed: 0xCAB)
        let blocks = ["p", "div"]
        let inlines = ["a", "b", "i", "em", "strong", "span", "u", "small", "code", "font", "q", "sub", "li"]
        let texts = [
            "word", " ", "\n", "  two words ", "&amp;", "&lt;b&gt;", "&nbsp;", "&#233;", "&#x1F600;", "&#150;", "&#0;",
            "&quot;", "&apos;", "Café", "写真", "&amp", "a > b", "\u{85}", "\t",
        ]
        let attributes = [
            "", " href=\"https://e.example/x?a=1&amp;b=2\"", " class='c'", " data-x=y", " title=\"a > b\"", " hidden",
            " src=/no-quotes.jpg", " width=\"240\" height=\"160\"",
        ]
        func pick<T>(_ list: [T]) -> T { list[Int(generator.next() % UInt64(list.count))] }
        func content(depth: Int, inlineOnly: Bool) -> String {
            var result = ""
            for _ in 0..<Int(generator.next() % 4) {
                switch generator.next() % 7 {
                case 0 where depth < 4 && !inlineOnly:
                    let name = pick(blocks)
                    result +=
                        "<\(name)\(pick(attributes))>" + content(depth: depth + 1, inlineOnly: name == "p")
                        + "</\(name)>"
                case 1 where depth < 4:
                    let name = pick(inlines)
                    result +=
                        "<\(name)\(pick(attributes))>" + content(depth: depth + 1, inlineOnly: true) + "</\(name)>"
                case 2:
                    result += pick([
                        "<br>", "<br/>", "<img src=\"/i.jpg\" />", "<img alt=x>", "</br>", "<p/>", "<p>", "</p>",
                    ])
                default: result += pick(texts)
                }
            }
            return result
        }
        var inputs: [[UInt8]] = []
        for _ in 0..<4000 { inputs.append(Array(content(depth: 0, inlineOnly: false).utf8)) }
        // Most of them must take the libxml2-free path, or this compares libxml2 with itself.
        let simple = inputs.filter { SimpleHTML.text($0) != nil }.count
        #expect(simple > 1500, "\(simple) of \(inputs.count) inputs took the simple path")
        let found = Self.disagreements(inputs)
        #expect(found.isEmpty, "\(found.count) disagreements, e.g. \(found.prefix(5))")
    }

    /// `<img>` tags the libxml2-free path reads the images of (and near misses it must hand over): quoting,
    /// references in values, repeated and uppercase names, lazy-load and `srcset` sources, tracking pixels, avatars.
    @Test func generatedImages() {
        var generator = SplitMix64(seed: 0x1A6E)
        let attributes = [
            " src=\"https://e.example/a.jpg\"", " src='/b.png'", " src=c.jpg", " SRC=\"/Upper.JPG\"",
            " src=\"/q?a=1&amp;b=2\"", " src=\"/q?a=1&b=2\"", " src=\"/caf&#233;.jpg\"", " src=\"/x&bogus;.jpg\"",
            " src=\"\"", " src=\" /padded.jpg \"", " src=\"data:image/gif;base64,R0l\"", " data-src=\"/lazy.jpg\"",
            " data-lazy-src=/l2.jpg", " srcset=\"/s.jpg 1x, /l.jpg 2x\"", " data-srcset=\"/m.jpg 640w, /n.jpg 1280w\"",
            " width=\"240\"", " height=\"160\"", " width=1", " height=\"2\"", " WIDTH=800", " width=\"12px\"",
            " alt=\"a &quot;b&quot;\"", " alt=\"写真 &amp; 画\"", " alt", " class=\"avatar\"", " class=\"photo\"",
            " src=\"https://www.gravatar.com/avatar/x\"", " src=\"/pixel.gif\"", " alt=\"tab\there\"",
            " src=\"/n&nbsp;b.jpg\"", " width=240/", " title=\"a > b\"",
        ]
        func pick<T>(_ list: [T]) -> T { list[Int(generator.next() % UInt64(list.count))] }
        var inputs: [[UInt8]] = []
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<Int(generator.next() % 3 + 1) {
                var tag = "<img"
                for _ in 0..<Int(generator.next() % 5) { tag += pick(attributes) }
                tag += pick([">", "/>", " />", "></img>", ">x</img>y", "></IMG >"])
                let (open, close) = pick([("", ""), ("<p>", "</p>"), ("<a href=\"/p\">", "</a>"), ("", " caption")])
                text += open + tag + close + " "
            }
            inputs.append(Array(text.utf8))
        }
        var scratch = SimpleHTML.Scratch()
        let simple = inputs.filter { input in
            input.withUnsafeBufferPointer { SimpleHTML.read($0, collectImages: true, scratch: &scratch) != nil }
        }.count
        #expect(simple > 1000, "\(simple) of \(inputs.count) inputs took the simple path")
        let found = Self.disagreements(inputs)
        #expect(found.isEmpty, "\(found.count) disagreements, e.g. \(found.prefix(5))")
    }

    @Test func generatedTagSoup() {
        var generator = SplitMix64(seed: 0x5EED)
        let pieces = [
            "<p>", "</p>", "<b>", "</b>", "<span>", "</span>", "<div>", "</div>", "<br>", "<img src=/i.jpg>",
            "<img data-src=/d.jpg width=2 height=2>", "<script>", "</script>", "<noscript>", "</noscript>", "<li>",
            "<ul>",
            "</ul>", "<table>", "<td>", "</table>", "<a href=x>", "</a>", " ", "\n", "  ", "word", "mot", "語", "&amp;",
            "&nbsp;", "&bogus;", "<!-- c -->", "<em>", "</em>", "<iframe>", "</iframe>", "<input>", "<h2>", "</h2>",
            "<",
            ">", "&", "<![CDATA[x]]>", "<title>", "</title>", "<head>", "<body>", "<select>", "<option>",
        ]
        var inputs: [[UInt8]] = []
        for _ in 0..<3000 {
            var text = ""
            for _ in 0..<Int(generator.next() % 24 + 1) { text += pieces[Int(generator.next() % UInt64(pieces.count))] }
            inputs.append(Array(text.utf8))
        }
        let found = Self.disagreements(inputs)
        #expect(found.isEmpty, "\(found.count) disagreements, e.g. \(found.prefix(5))")
    }
}
