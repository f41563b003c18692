import FeedLayoutTestSupport
import Foundation
import Testing

/// The reference client following a subscription (`GET /view/feed/{id}` of `feedlayout serve`) in headless
/// Chromium: a new version of the feed shows a bar "N new pins" and nothing on the screen moves; a click on it
/// switches to the new version with the pin at the top of the viewport exactly where it was on the screen (matched
/// by its `key`), or, when the new version does not have that pin, at the feed's top. No layout shift is ever
/// reported (the observers of `ClientInChromiumTests` count shifts without recent input, as CLS does).
@Suite(.serialized, .timeLimit(.minutes(10)))
struct FeedViewInChromiumTests {
    typealias ServeProcess = ServeEndToEndTests.ServeProcess
    static let photos = try! FileManager.default.contentsOfDirectory(
        atPath: CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos").path
    ).filter { $0.hasSuffix(".jpg") || $0.hasSuffix(".png") }.sorted()

    /// An RSS feed of the pins `ids`, in that order (newest first); photos relative to the feed, on its server.
    static func feed(_ ids: [Int]) -> [UInt8] {
        let words = "harbour lantern meadow granite saffron willow comet ferry orchard".split(separator: " ")
        var feed = #"<?xml version="1.0"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>A wire</title>"#
        for id in ids {
            let caption = (0..<(id * 7 % 19 + 1)).map { String(words[($0 + id) % words.count]) }.joined(separator: " ")
            feed += "<item><guid>wire-\(id)</guid><title>Pin \(id)</title><description>\(caption)</description>"
            feed += "<media:content url=\"photos/\(photos[id % photos.count])\" medium=\"image\"/></item>\n"
        }
        return Array((feed + "</channel></rss>\n").utf8)
    }

    /// A finished version's pins of its one breakpoint: frame and key by index (the pages as served).
    struct Version {
        var layout: String
        var frames: [Int: ClientInChromiumTests.Frame]
        var keys: [Int: String]
        func index(ofKey key: String) -> Int? { keys.first { $0.value == key }?.key }
    }

    /// Waits for the subscription's version of `count` versions and its layout's end, and reads its pages.
    static func version(_ service: ServeProcess, _ id: String, number count: Int) async throws -> Version {
        let deadline = Date().addingTimeInterval(90)
        var state: [String: Any] = [:]
        while Date() < deadline {
            state = try await service.json("/v1/feeds/\(id)")
            if (state["versions"] as? [[String: Any]] ?? []).count >= count { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let versions = state["versions"] as? [[String: Any]] ?? []
        try #require(versions.count == count, "\(state)\n\(service.log())")
        let layout = try #require(versions.first?["layout"] as? String)
        let status = try await service.waitUntilDone(layout)
        try #require(status["status"] as? String == "done", "\(status)")
        let served = try await ClientInChromiumTests.served(service, id: layout, status: status)
        return Version(layout: layout, frames: served.frames.first ?? [:], keys: served.keys.first ?? [:])
    }

    /// The bar's text once it is shown, else nil after `seconds`.
    static func barText(_ browser: DevToolsBrowser, _ tab: String, within seconds: Double) async throws -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = try await browser.evaluate(
                "(b => b.hidden ? null : b.textContent)(document.getElementById('new-pins'))", in: tab) as? String
            if let text { return text }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Clicks the bar as a person does (mouse events through the browser's input, so the page sees real input).
    static func clickBar(_ browser: DevToolsBrowser, _ tab: String) async throws {
        let center = try #require(
            try await browser.evaluate(
                "(r => [r.left + r.width / 2, r.top + r.height / 2])(document.getElementById('new-pins').getBoundingClientRect())",
                in: tab) as? [NSNumber])
        for type in ["mousePressed", "mouseReleased"] {
            _ = try await browser.send(
                "Input.dispatchMouseEvent",
                ["type": type, "x": center[0].doubleValue, "y": center[1].doubleValue, "button": "left", "clickCount": 1],
                session: tab)
        }
    }

    /// Waits until the view shows `layout` and has settled; its cards then.
    static func shown(_ layout: String, _ browser: DevToolsBrowser, _ tab: String) async throws -> ClientInChromiumTests.View {
        try ClientInChromiumTests.view(
            try await browser.evaluate(
                """
                new Promise(resolve => {
                  const check = () => feedlayout.layoutId === '\(layout)'
                    ? feedlayout.settled().then(() => resolve(__test.cards())) : setTimeout(check, 50);
                  check();
                })
                """, in: tab))
    }

    @Test func newPinsWaitForAClickAndThePinAtTheTopStaysWhereItWas() async throws {
        try await TestHTTPServer.with { server in
            let folder = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos")
            for name in Self.photos {
                let bytes = try Data(contentsOf: folder.appendingPathComponent(name))
                server.serve("/photos/" + name, .init(body: [UInt8](bytes), contentType: "image/jpeg"))
            }
            let first = Array((0..<400).reversed())
            server.serve("/feed.xml", .init(body: Self.feed(first), contentType: "application/rss+xml"))
            let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
            let service = try await ServeProcess(store: store, arguments: ["--min-refresh", "1"])
            defer { _ = service.signal(SIGKILL) }
            let created = try await ServeProcess.http(
                "POST", "http://127.0.0.1:\(service.port)/v1/feeds",
                body: try JSONSerialization.data(withJSONObject: [
                    "feed": server.url("/feed.xml"), "options": ["width": 1280, "columns": 5, "pageSize": 50],
                    "refresh": ["minSeconds": 1, "maxSeconds": 1],
                ]))
            let id = try #require(
                (try JSONSerialization.jsonObject(with: created.body) as? [String: Any])?["id"] as? String,
                "\(String(decoding: created.body, as: UTF8.self))")
            let v1 = try await Self.version(service, id, number: 1)

            let browser = try DevToolsBrowser()
            defer { browser.quit() }
            let tab = try await browser.openTab(width: 1280, height: 800, script: ClientInChromiumTests.observers)
            try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/view/feed/\(id)")
            var view = try await Self.shown(v1.layout, browser, tab)
            ClientInChromiumTests.check(view, against: v1.frames, step: "the feed's first version")
            // The stream of the feed's events is open (it replays the shown version's event: no bar for it).
            let deadline = Date().addingTimeInterval(30)
            while !browser.events("Network.responseReceived").contains(where: {
                (($0["response"] as? [String: Any])?["url"] as? String ?? "").hasSuffix("/v1/feeds/\(id)/events")
            }), Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
            await #expect(try Self.barText(browser, tab, within: 1) == nil)

            // Down the feed; then 20 new pins arrive at its top.
            view = try ClientInChromiumTests.view(try await browser.evaluate("__test.step(3000)", in: tab))
            let top = view.scrollY - view.originTop
            let anchor = try #require(
                v1.frames.filter { $0.value.y < top + 800 && $0.value.y + $0.value.height > max(0, top) }.keys.min())
            let anchorScreenY = view.originTop + v1.frames[anchor]!.y - view.scrollY
            let anchorKey = try #require(v1.keys[anchor])
            server.serve("/feed.xml", .init(body: Self.feed(Array((400..<420).reversed()) + first), contentType: "application/rss+xml"))
            let bar = try await Self.barText(browser, tab, within: 60)
            #expect(bar == "20 new pins")
            // Nothing moved: the same cards at the same places, the same layout.
            let still = try ClientInChromiumTests.view(try await browser.evaluate("__test.cards()", in: tab))
            #expect(still.scrollY == view.scrollY)
            #expect(still.cards.map(\.index) == view.cards.map(\.index))
            ClientInChromiumTests.check(still, against: v1.frames, step: "with the bar shown")
            await #expect(try browser.evaluate("feedlayout.layoutId", in: tab) as? String == v1.layout)

            let v2 = try await Self.version(service, id, number: 2)
            let moved = try #require(v2.index(ofKey: anchorKey), "the anchor's key is in the new version")
            #expect(moved == anchor + 20)
            try await Self.clickBar(browser, tab)
            view = try await Self.shown(v2.layout, browser, tab)
            ClientInChromiumTests.check(view, against: v2.frames, step: "the second version")
            let screenY = view.originTop + v2.frames[moved]!.y - view.scrollY
            #expect(screenY == anchorScreenY, "pin \(anchorKey) was at \(anchorScreenY) px on the screen, is at \(screenY)")
            await #expect(try Self.barText(browser, tab, within: 0.2) == nil)

            // A version without the pin at the top: the feed's top is shown.
            let third = Array((1000..<1300).reversed())
            server.serve("/feed.xml", .init(body: Self.feed(third), contentType: "application/rss+xml"))
            #expect(try await Self.barText(browser, tab, within: 60) == "300 new pins")
            let v3 = try await Self.version(service, id, number: 3)
            #expect(v3.index(ofKey: anchorKey) == nil)
            try await Self.clickBar(browser, tab)
            view = try await Self.shown(v3.layout, browser, tab)
            #expect(view.scrollY == view.originTop, "the feed's top at the viewport's top")
            ClientInChromiumTests.check(view, against: v3.frames, step: "the third version")

            let cls = try await browser.evaluate("__test.cls", in: tab) as? Double
            let shifts = try await browser.evaluate("__test.shifts", in: tab)
            #expect(cls == 0, "cumulative layout shift \(cls ?? -1): \(shifts ?? "")")
            let errors = browser.events("Runtime.exceptionThrown").map { "\($0)" }
                + browser.events("Runtime.consoleAPICalled").filter { $0["type"] as? String == "error" }.map { "\($0)" }
            #expect(errors.isEmpty, "console errors: \(errors.prefix(3))")
        }
    }
}
