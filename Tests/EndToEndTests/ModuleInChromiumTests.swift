import FeedLayoutTestSupport
import Foundation
import Testing

/// The ES module `clients/js/feedlayout.mjs` (served by `feedlayout serve` at `/client/feedlayout.mjs`) in headless
/// Chromium over the DevTools protocol: imported by a page of another origin with a card renderer of its own, and
/// taken down by `destroy()`; the view's cards as an accessible feed (Chromium's accessibility tree); its types
/// against real pages (`tsc`). The view `/view/{id}` is a thin page on the module, so `ClientInChromiumTests`
/// (every card at its frame, CLS 0, a bounded DOM, each page fetched once) tests the module too.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ModuleInChromiumTests {
    /// Counts of what a view may leave behind: the listeners on the window, the document and the container
    /// (DevTools' `getEventListeners`), the elements, the style sheets, the container's attributes.
    static let leftovers = #"""
        (() => {
          const count = target => Object.values(getEventListeners(target)).reduce((n, list) => n + list.length, 0);
          const container = document.getElementById('pins');
          return {
            window: count(window), document: count(document), container: count(container),
            elements: document.getElementsByTagName('*').length, links: document.querySelectorAll('link').length,
            cards: document.querySelectorAll('[data-index]').length,
            attributes: [...container.attributes].map(a => a.name + '=' + a.value).sort().join(' '),
          };
        })()
        """#

    /// A page of another origin that imports the module from the service and opens the layout with its own
    /// cards when the test calls `start()`.
    static func embeddingPage(service: String, id: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Another site</title><link rel="icon" href="data:,">
        <style>body { margin: 0; font: 14px sans-serif; } header { height: 64px; }
        .mine { background: #fde; border: 2px solid #c39; } .mine p { margin: 4px; }</style></head>
        <body><header>Another site's header</header><div id="pins" class="theirs"></div>
        <script type="module">
        import { openLayout, place } from '\(service)/client/feedlayout.mjs';
        window.start = () => {
          window.feedlayout = openLayout({
            baseURL: '\(service)', layoutId: '\(id)', container: document.getElementById('pins'),
            renderCard(item, context) {
              const card = document.createElement('section');
              card.className = 'mine';
              const text = document.createElement('p');
              text.textContent = `#${item.index} ${item.annotation.title?.text ?? ''}`;
              card.append(text);
              return card;
            },
          });
          window.events = [];
          for (const type of ['layout', 'breakpoint', 'firstcards', 'complete', 'error']) {
            feedlayout.addEventListener(type, event => events.push(type));
          }
          return true;
        };
        </script></body></html>
        """
    }

    @Test func aPageOfAnotherOriginShowsALayoutWithItsOwnCardsAndDestroyLeavesNothing() async throws {
        try await TestHTTPServer.with { site in
            let siteOrigin = site.url("")
            let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
            let sample = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed").path
            let service = try await ServeEndToEndTests.ServeProcess(
                store: store, arguments: ["--image-root", sample, "--cors-origin", siteOrigin])
            defer { _ = service.signal(SIGKILL) }
            let posted = try await service.post([
                "feedText": try ClientInChromiumTests.generatedFeed(pins: 2_000),
                "options": ["breakpoints": "600:2,1280:5"],
            ])
            let id = try #require((try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
            let status = try await service.waitUntilDone(id)
            let served = try await ClientInChromiumTests.served(service, id: id, status: status)
            let origin = "http://127.0.0.1:\(service.port)"
            site.serve(
                "/embed.html",
                .init(body: Array(Self.embeddingPage(service: origin, id: id).utf8), contentType: "text/html; charset=utf-8"))

            let browser = try DevToolsBrowser()
            defer { browser.quit() }
            let tab = try await browser.openTab(width: 1280, height: 800, script: ClientInChromiumTests.observers)
            try await browser.navigate(tab, to: site.url("/embed.html"))
            try await browser.send("HeapProfiler.collectGarbage", session: tab)
            let before = try await Self.evaluateWithCommandLine(Self.leftovers, browser: browser, tab: tab)
            let countersBefore = try await browser.send("Memory.getDOMCounters", session: tab)

            await #expect(try browser.evaluate("start()", in: tab) as? Bool == true)
            var view = try await ClientInChromiumTests.view(
                try browser.evaluate("feedlayout.settled().then(__test.cards)", in: tab))
            #expect(view.breakpoint == 1280)
            ClientInChromiumTests.check(view, against: served.frames[1], step: "the first view, on another origin")
            // The cards are the page's own, made by its renderCard, and an accessible feed's articles.
            let own = try await browser.evaluate(
                #"""
                [...document.querySelectorAll('#pins > [data-index]')].map(card => [card.tagName, card.className,
                  card.textContent, card.getAttribute('role'), card.getAttribute('aria-posinset'), card.dataset.index])
                """#, in: tab) as? [[String]] ?? []
            #expect(!own.isEmpty)
            for card in own {
                let pin = Int(card[5]) ?? -1
                #expect(card[0] == "SECTION" && card[1].contains("mine") && card[1].contains("feedlayout-card"), "\(card)")
                #expect(card[2].hasPrefix("#\(pin) "), "\(card)")
                #expect(card[3] == "article" && card[4] == String(pin + 1), "\(card)")
            }
            await #expect(try browser.evaluate("document.getElementById('pins').getAttribute('role')", in: tab) as? String == "feed")
            // To the end and back, every card at its frame.
            var y = 0.0
            var steps = 0
            while !(view.complete && view.scrollY >= view.scrollMax - 1), steps < 500 {
                y += 800
                view = try await ClientInChromiumTests.view(try browser.evaluate("__test.step(\(y))", in: tab))
                ClientInChromiumTests.check(view, against: served.frames[1], step: "down to \(y)")
                steps += 1
            }
            #expect(view.complete, "the end was not reached in \(steps) steps")
            view = try await ClientInChromiumTests.view(try browser.evaluate("__test.step(0)", in: tab))
            ClientInChromiumTests.check(view, against: served.frames[1], step: "back at the top")
            await #expect(try browser.evaluate("__test.cls", in: tab) as? Double == 0)
            let maxCards = try await browser.evaluate("__test.maxCards", in: tab) as? Int ?? .max
            #expect(maxCards <= 300, "the DOM held \(maxCards) cards at once")
            let events = try await browser.evaluate("events", in: tab) as? [String] ?? []
            #expect(events.contains("firstcards") && events.contains("complete") && !events.contains("error"), "\(events)")
            // Every request of the layout went to the service cross-origin, and was allowed.
            let corsAnswers = browser.events("Network.responseReceived").compactMap { $0["response"] as? [String: Any] }
                .filter { ($0["url"] as? String ?? "").hasPrefix(origin + "/v1/") }
            #expect(!corsAnswers.isEmpty)
            ClientInChromiumTests.checkRequests(browser, served: served, id: id)

            // destroy(): no card, listener, style sheet or attribute of the view is left, and it asks for nothing more.
            await #expect(try browser.evaluate("feedlayout.destroy(), feedlayout.destroyed", in: tab) as? Bool == true)
            let requestsAtDestroy = browser.events("Network.requestWillBeSent").count
            _ = try await browser.evaluate(
                "scrollTo(0, 4000), new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))", in: tab)
            try await browser.resize(tab, width: 600, height: 800)
            _ = try await browser.evaluate(
                "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r))).then(() => feedlayout.settled())",
                in: tab)
            let after = try await Self.evaluateWithCommandLine(Self.leftovers, browser: browser, tab: tab)
            #expect(after == before, "before the view: \(before); after destroy(): \(after)")
            // Once the page lets go of the view (and of its own listeners on it), nothing the view made is alive:
            // no listener anywhere, and not the hundreds of nodes of its cards (Chromium keeps a couple of
            // detached nodes of its own, such as the removed style sheets' elements, for a while).
            _ = try await browser.evaluate("window.feedlayout = null, window.events = null, true", in: tab)
            for _ in 0..<2 { try await browser.send("HeapProfiler.collectGarbage", session: tab) }
            let countersAfter = try await browser.send("Memory.getDOMCounters", session: tab)
            let listeners = (countersBefore["jsEventListeners"] as? Int ?? -1, countersAfter["jsEventListeners"] as? Int ?? .max)
            #expect(listeners.1 <= listeners.0, "event listeners: \(listeners.0) before the view, \(listeners.1) after destroy()")
            let nodes = (countersBefore["nodes"] as? Int ?? -1, countersAfter["nodes"] as? Int ?? .max)
            #expect(nodes.1 <= nodes.0 + 8, "DOM nodes: \(nodes.0) before the view, \(nodes.1) after destroy()")
            #expect(
                browser.events("Network.requestWillBeSent").count == requestsAtDestroy,
                "the destroyed view still asked for something")
        }
    }

    /// Pins whose photos carry alternative text each way a feed gives it: a `media:description` and a
    /// `media:title` of the image, an `<img alt>` in the HTML description; and pins with none.
    static func altFeed(pins: Int) throws -> String {
        let folder = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos").path
        let photos = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".jpg") && $0 != "corrupt.jpg" }.sorted()
        var feed = #"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>Alt</title>"#
        for index in 0..<pins {
            let photo = "photos/\(photos[index % photos.count])"
            feed += "<item><guid>alt-\(index)</guid><link>https://example.com/alt/\(index)</link>"
            feed += "<title>Pin title \(index)</title>"
            switch index % 4 {
            case 0:
                feed += "<description>Caption \(index)</description><media:content url=\"\(photo)\" medium=\"image\">"
                feed += "<media:description>A harbour at dawn, photo \(index)</media:description></media:content>"
            case 1:
                feed += "<description>Caption \(index)</description><media:content url=\"\(photo)\" medium=\"image\">"
                feed += "<media:title>Boats &amp; nets \(index)</media:title></media:content>"
            case 2:
                feed += "<description>&lt;p&gt;Caption \(index)&lt;/p&gt;&lt;img src=\"\(photo)\" alt=\"A market stall, photo \(index)\"&gt;</description>"
            default:
                feed += "<description>Caption \(index)</description><media:content url=\"\(photo)\" medium=\"image\"/>"
            }
            feed += "</item>\n"
        }
        return feed + "</channel></rss>\n"
    }

    /// What the feed gave each pin as its photo's alternative text (nil: none).
    static func expectedAlt(_ index: Int) -> String? {
        switch index % 4 {
        case 0: "A harbour at dawn, photo \(index)"
        case 1: "Boats & nets \(index)"
        case 2: "A market stall, photo \(index)"
        default: nil
        }
    }

    /// Records every value the feed's `aria-busy` had before each change (`__busy`), the last one being its
    /// value now.
    static let busyObserver = #"""
        window.__busy = [];
        new MutationObserver(records => {
          for (const record of records) __busy.push(record.oldValue);
        }).observe(document, { attributes: true, attributeOldValue: true, attributeFilter: ['aria-busy'], subtree: true });
        """#

    /// The view's cards as a screen reader meets them, in Chromium's accessibility tree: a feed, busy while it
    /// loads; each card an article named by its title and caption, at its position in the set; each photo named
    /// by the feed's alternative text (and none named when the feed gave none); keyboard focus kept on a card
    /// while the reader scrolls far away, and given back to it after a breakpoint change.
    @Test func theCardsAreAnAccessibleFeed() async throws {
        let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
        let sample = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed").path
        let service = try await ServeEndToEndTests.ServeProcess(store: store, arguments: ["--image-root", sample])
        defer { _ = service.signal(SIGKILL) }
        let pins = 400
        let posted = try await service.post(["feedText": try Self.altFeed(pins: pins), "options": ["breakpoints": "600:2,1280:5"]])
        let id = try #require((try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
        let status = try await service.waitUntilDone(id)
        let served = try await ClientInChromiumTests.served(service, id: id, status: status)

        // The pages carry each photo's alternative text, and no alt where the feed gave none.
        var alts: [Int: String] = [:]
        for index in 0..<(served.pageCounts.first ?? 0) {
            let page = try await service.json("/v1/layouts/\(id)/pages/\(index)?layout=1")
            for item in page["items"] as? [[String: Any]] ?? [] {
                let pin = item["index"] as? Int ?? -1
                let alt = (item["photo"] as? [String: Any])?["alt"] as? String
                #expect(alt == Self.expectedAlt(pin), "pin \(pin): photo.alt \(alt ?? "none")")
                if let alt { alts[pin] = alt }
            }
        }
        #expect(alts.count == pins / 4 * 3, "\(alts.count) photos with alt")

        let browser = try DevToolsBrowser()
        defer { browser.quit() }
        let tab = try await browser.openTab(width: 1280, height: 800, script: ClientInChromiumTests.observers + Self.busyObserver)
        try await browser.send("Accessibility.enable", session: tab)
        try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/view/\(id)")
        var view = try await ClientInChromiumTests.view(try browser.evaluate("feedlayout.settled().then(__test.cards)", in: tab))
        ClientInChromiumTests.check(view, against: served.frames[1], step: "first view")
        let busy = try await browser.evaluate("__busy.concat([document.querySelector('[role=feed]').getAttribute('aria-busy')])", in: tab) as? [Any] ?? []
        #expect(busy.contains { $0 as? String == "true" } && busy.last as? String == "false", "aria-busy took \(busy)")

        var tree = try await Self.accessibilityTree(browser, tab: tab)
        let feeds = tree.filter { $0.role == "feed" }
        #expect(feeds.count == 1 && feeds.first?.name == "Pins", "\(feeds)")
        #expect(feeds.first?.properties["busy"] ?? false == false, "\(feeds)")
        let articles = Set(tree.filter { $0.role == "article" }.map(\.name))
        let images = tree.filter { $0.role == "image" || $0.role == "img" }.map(\.name)
        let shown = view.cards.map(\.index)
        #expect(!shown.isEmpty)
        for pin in shown {
            let caption = "Caption \(pin)"
            #expect(articles.contains("Pin title \(pin). \(caption)"), "no article named for pin \(pin): \(articles.sorted().prefix(3))")
            if let alt = alts[pin] { #expect(images.contains(alt), "pin \(pin)'s photo is not named \(alt)") }
        }
        // A photo without alternative text is named by nothing (alt=""), never by its URL.
        #expect(images.allSatisfy { !$0.isEmpty && !$0.contains("photos/") }, "\(images.prefix(5))")
        // Each photo's alt is the page's, empty only when the page has none.
        let domAlts = try await browser.evaluate(
            "[...document.querySelectorAll('[data-index] img')].map(image => [image.closest('[data-index]').dataset.index, image.alt])",
            in: tab) as? [[String]] ?? []
        #expect(domAlts.count == shown.count, "\(domAlts.count) photos for \(shown.count) cards")
        for pair in domAlts { #expect(pair[1] == alts[Int(pair[0]) ?? -1] ?? "", "pin \(pair[0]): alt '\(pair[1])'") }
        #expect(images.count == domAlts.filter { !$0[1].isEmpty }.count, "\(images.count) named photos")
        let positions = try await browser.evaluate(
            "[...document.querySelectorAll('[role=feed] > [data-index]')].map(card => [+card.dataset.index, +card.getAttribute('aria-posinset'), +card.getAttribute('aria-setsize')])",
            in: tab) as? [[Int]] ?? []
        #expect(!positions.isEmpty && positions.allSatisfy { $0[1] == $0[0] + 1 && $0[2] == pins }, "\(positions.prefix(3))")

        // Keyboard focus on a card's link: it stays while the reader scrolls three viewports away and back…
        let focused = try #require(shown.dropFirst(2).first)
        _ = try await browser.evaluate("document.querySelector('[data-index=\"\(focused)\"] a').focus()", in: tab)
        for y in [800.0, 1_600, 2_400, 3_200] {
            view = try await ClientInChromiumTests.view(try browser.evaluate("__test.step(\(y))", in: tab))
            ClientInChromiumTests.check(view, against: served.frames[1], step: "scrolled to \(y) with focus on \(focused)")
            await #expect(
                try browser.evaluate("document.activeElement.closest('[data-index]')?.dataset.index", in: tab) as? String
                    == "\(focused)", "focus left pin \(focused) at \(y)")
        }
        tree = try await Self.accessibilityTree(browser, tab: tab)
        #expect(tree.contains { $0.properties["focused"] == true && $0.name == "Pin title \(focused)" }, "the focused link")
        // … and comes back to it after a switch to the other breakpoint.
        try await browser.resize(tab, width: 600, height: 800)
        view = try await ClientInChromiumTests.view(try browser.evaluate(
            "new Promise(r => requestAnimationFrame(r)).then(() => feedlayout.settled()).then(__test.cards)", in: tab))
        #expect(view.breakpoint == 600)
        await #expect(
            try browser.evaluate("document.activeElement.closest('[data-index]')?.dataset.index", in: tab) as? String
                == "\(focused)", "focus was not given back to pin \(focused) after the breakpoint change")
        await #expect(try browser.evaluate("__test.cls", in: tab) as? Double == 0)
        // Each page once; neither breakpoint was scrolled to its end (-1: no breakpoint's pages must all be in).
        ClientInChromiumTests.checkRequests(browser, served: served, id: id, scrolledPart: -1)
    }

    /// An Atom feed whose XHTML title and content hold escaped markup, and whose photo has a description.
    static let atomWithEscapedMarkup = #"""
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/">
          <title>Markup as text</title><id>urn:feed:markup</id><updated>2026-11-28T00:00:00Z</updated>
          <entry>
            <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">History of the &lt;blink&gt; tag</div></title>
            <id>urn:entry:blink</id><updated>2026-11-28T00:00:00Z</updated><link href="https://example.com/blink"/>
            <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Also &lt;marquee&gt; &amp; <b>bold</b></div></content>
            <media:content url="photos/espresso.jpg" medium="image">
              <media:description>An espresso cup on a  saucer</media:description>
            </media:content>
          </entry>
        </feed>
        """#

    /// Escaped markup inside XHTML text is text for every consumer: `ingest`'s record, the page, and the DOM the
    /// module makes (as `textContent`; no element is made of it). The photo's alternative text comes through too,
    /// and a JSON Feed attachment's title is its image's `alt` in the ingest record.
    @Test func escapedMarkupIsTextForEveryConsumer() async throws {
        let folder = try CommandRunner.temporaryDirectory()
        let atom = folder.appendingPathComponent("markup.atom")
        try Self.atomWithEscapedMarkup.write(to: atom, atomically: true, encoding: .utf8)
        let ingested = try await CommandRunner.run(["ingest", atom.path])
        #expect(ingested.status == 0, "\(ingested.stderr)")
        let record = try #require(
            try JSONSerialization.jsonObject(with: Data(ingested.stdoutText.split(separator: "\n").first.map(String.init)?.utf8 ?? "".utf8))
                as? [String: Any])
        #expect(record["title"] as? String == "History of the <blink> tag")
        #expect(record["text"] as? String == "Also <marquee> & bold")
        #expect((record["image"] as? [String: Any])?["alt"] as? String == "An espresso cup on a saucer", "\(record)")

        let json = folder.appendingPathComponent("attachments.json")
        try #"""
            {"version": "https://jsonfeed.org/version/1.1", "title": "Attachments", "items": [
              {"id": "1", "title": "Titled", "attachments": [{"url": "https://example.com/a.jpg", "mime_type": "image/jpeg", "title": "A lighthouse at night"}]},
              {"id": "2", "title": "Untitled", "attachments": [{"url": "https://example.com/b.jpg", "mime_type": "image/jpeg"}]}]}
            """#.write(to: json, atomically: true, encoding: .utf8)
        let jsonIngested = try await CommandRunner.run(["ingest", json.path])
        #expect(jsonIngested.status == 0, "\(jsonIngested.stderr)")
        let images = try jsonIngested.stdoutText.split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }.map { $0["image"] as? [String: Any] ?? [:] }
        #expect(images.count == 2 && images[0]["alt"] as? String == "A lighthouse at night" && images[1]["alt"] == nil, "\(images)")

        let store = folder.appendingPathComponent("store.sqlite").path
        let sample = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed").path
        let service = try await ServeEndToEndTests.ServeProcess(store: store, arguments: ["--image-root", sample])
        defer { _ = service.signal(SIGKILL) }
        let posted = try await service.post(["feedText": Self.atomWithEscapedMarkup, "options": ["width": 600, "columns": 2]])
        let id = try #require((try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
        _ = try await service.waitUntilDone(id)
        let page = try await service.json("/v1/layouts/\(id)/pages/0")
        let item = try #require((page["items"] as? [[String: Any]])?.first)
        let annotation = item["annotation"] as? [String: Any] ?? [:]
        #expect((annotation["title"] as? [String: Any])?["text"] as? String == "History of the <blink> tag")
        #expect((annotation["text"] as? [String: Any])?["text"] as? String == "Also <marquee> & bold")
        #expect((item["photo"] as? [String: Any])?["alt"] as? String == "An espresso cup on a saucer")

        let browser = try DevToolsBrowser()
        defer { browser.quit() }
        let tab = try await browser.openTab(width: 600, height: 800, script: ClientInChromiumTests.observers)
        try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/view/\(id)")
        let dom = try await browser.evaluate(
            #"""
            feedlayout.settled().then(() => ({
              title: document.querySelector('[data-index="0"] .feedlayout-title')?.textContent,
              caption: document.querySelector('[data-index="0"] .feedlayout-caption')?.textContent,
              alt: document.querySelector('[data-index="0"] img')?.alt,
              made: document.querySelectorAll('blink, marquee, b').length,
            }))
            """#, in: tab) as? [String: Any] ?? [:]
        #expect(dom["title"] as? String == "History of the <blink> tag", "\(dom)")
        #expect(dom["caption"] as? String == "Also <marquee> & bold", "\(dom)")
        #expect(dom["alt"] as? String == "An espresso cup on a saucer", "\(dom)")
        #expect(dom["made"] as? Int == 0, "\(dom)")
    }

    struct AXNode {
        var role: String
        var name: String
        var properties: [String: Bool]
    }

    /// Chromium's accessibility tree of the tab (`Accessibility.getFullAXTree`), the ignored nodes left out.
    static func accessibilityTree(_ browser: DevToolsBrowser, tab: String) async throws -> [AXNode] {
        let tree = try await browser.send("Accessibility.getFullAXTree", session: tab)
        return (tree["nodes"] as? [[String: Any]] ?? []).compactMap { node in
            if node["ignored"] as? Bool == true { return nil }
            let role = (node["role"] as? [String: Any])?["value"] as? String ?? ""
            let name = (node["name"] as? [String: Any])?["value"] as? String ?? ""
            var properties: [String: Bool] = [:]
            for property in node["properties"] as? [[String: Any]] ?? [] {
                if let name = property["name"] as? String,
                    let value = (property["value"] as? [String: Any])?["value"] as? Bool
                {
                    properties[name] = value
                }
            }
            return AXNode(role: role, name: name, properties: properties)
        }
    }

    /// Evaluates with DevTools' command line API (`getEventListeners`), returning the value as JSON values.
    static func evaluateWithCommandLine(_ expression: String, browser: DevToolsBrowser, tab: String) async throws
        -> NSDictionary
    {
        let result = try await browser.send(
            "Runtime.evaluate",
            ["expression": expression, "includeCommandLineAPI": true, "returnByValue": true], session: tab)
        let value = (result["result"] as? [String: Any])?["value"] as? [String: Any]
        return try #require(value.map { NSDictionary(dictionary: $0) }, "no value: \(result)")
    }

    /// The module's types (`clients/js/feedlayout.d.ts`) hold every golden and fixture page and the service's
    /// layout statuses, and refuse wrong ones (`scripts/check-js-types`, `tsc --noEmit`).
    @Test func theTypesHoldThePages() async throws {
        let check = try await CommandRunner.runTool(
            CommandRunner.repositoryRoot.appendingPathComponent("scripts/check-js-types").path, [], timeout: 300)
        #expect(
            check.status == 0,
            "\(check.stdoutText)\(check.stderr)")
    }
}
