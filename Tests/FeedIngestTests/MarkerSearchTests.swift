import Testing

@testable import FeedIngest

/// The tracker and avatar markers of caption `<img>`s are found byte by byte (letters folded) in ASCII sources, with
/// the same answers as `lowercased()` and `String.contains`, whose Character matching still decides for other text.
struct MarkerSearchTests {
    static let cases: [(text: String, marker: StaticString)] = [
        ("https://www.gravatar.com/avatar/abc", "gravatar.com/avatar"),
        ("photos/img-00024.jpg", "/avatar"),
        ("/avatar", "/avatar"),
        ("/avata", "/avatar"),
        ("", "/avatar"),
        ("a/b/pixel.gif?x=1", "/pixel.gif"),
        ("line\r\n/beacon", "/beacon"),
        ("xx/~ff/yy", "/~ff/"),
        ("ffff/~f", "/~ff/"),
        // Not ASCII: a combining accent makes the marker's last letter another Character, so no match.
        ("https://example.org/avatar\u{301}/me.jpg", "/avatar"),
        ("https://example.org/фото/avatar/me.jpg", "/avatar"),
        ("https://example.org/é/spacer.gif", "spacer.gif"),
        ("wp-smiley emoji", "wp-smiley"),
        ("HTTPS://SECURE.GRAVATAR.COM/AVATAR/1", "gravatar.com/avatar"),
        ("a/B/Pixel.GIF", "/pixel.gif"),
        ("Photos/Spacer.gif@", "spacer.gif"),
        ("[\\]^_`{|}~@/avatar", "/avatar"),
        ("ÉMOJI/Avatar", "avatar"),
        ("https://example.org/İ/spacer.gif", "spacer.gif"),
    ]

    @Test(arguments: MarkerSearchTests.cases.indices)
    func answersAsStringContains(_ index: Int) {
        let (text, marker) = Self.cases[index]
        #expect(
            HTMLTextConverter.lowercased(text, containsAnyOf: [marker])
                == text.lowercased().contains(marker.description), "\(text)")
        // With other markers beside it, the answer is the same.
        #expect(
            HTMLTextConverter.lowercased(text, containsAnyOf: ["no-such-marker", marker, "zzz"])
                == text.lowercased().contains(marker.description), "\(text)")
    }

    @Test func aCombiningMarkAfterAMarkerIsNoMatch() {
        #expect(!HTMLTextConverter.lowercased("https://example.org/avatar\u{301}/me.jpg", containsAnyOf: ["/avatar"]))
        #expect(HTMLTextConverter.lowercased("https://example.org/фото/avatar/me.jpg", containsAnyOf: ["/avatar"]))
        #expect(!HTMLTextConverter.lowercased("https://example.org/a.jpg", containsAnyOf: []))
        #expect(HTMLTextConverter.isTrackerOrAvatar(source: "https://SECURE.Gravatar.com/avatar/1", className: ""))
        #expect(HTMLTextConverter.isTrackerOrAvatar(source: "photos/a.jpg", className: "wp-smiley big"))
        #expect(!HTMLTextConverter.isTrackerOrAvatar(source: "photos/a.jpg", className: "photo"))
    }
}
