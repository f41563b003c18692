import FeedLayoutTestSupport
import Foundation
import Testing

/// The reference web client (`GET /view/{id}` of `feedlayout serve`) in headless Chromium, driven through the
/// DevTools protocol: as it scrolls a 5,000-pin layout to the end and back, and switches breakpoints on a resize,
/// every card in the DOM sits exactly at its pin's frame, no layout shift is ever reported, the DOM stays small,
/// every page is fetched once, and nothing fails.
///
/// Artifacts (in `.build/test-artifacts/`): screenshots of the views at 1280 px (the sample feed's is the README's,
/// `docs/client-sample-1280.jpg`). How soon the first cards appear is a benchmark's business
/// (`Benchmarks/peers/client-first-card`), not this test's: a time taken here would measure the test run.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct ClientInChromiumTests {
    /// Runs in every document before its own scripts: observers whose findings the test reads back, and the
    /// steps it takes.
    static let observers = #"""
        window.__test = { cls: 0, shifts: [], maxCards: 0 };
        new PerformanceObserver(list => {
          for (const entry of list.getEntries()) {
            if (entry.hadRecentInput) continue;
            __test.cls += entry.value;
            __test.shifts.push({ value: entry.value, sources: (entry.sources || []).map(source =>
              (source.node && source.node.outerHTML || '').slice(0, 160)) });
          }
        }).observe({ type: 'layout-shift', buffered: true });
        new MutationObserver(() => {
          __test.maxCards = Math.max(__test.maxCards, document.querySelectorAll('[data-index]').length);
        }).observe(document, { childList: true, subtree: true });
        __test.cards = () => {
          const origin = document.querySelector('[data-layout-origin]').getBoundingClientRect();
          return {
            scrollY, innerHeight, originTop: origin.top + scrollY,
            scrollMax: document.documentElement.scrollHeight - innerHeight,
            complete: feedlayout.complete, breakpoint: feedlayout.breakpoint,
            cards: [...document.querySelectorAll('[data-index]')].map(card => {
              const box = card.getBoundingClientRect();
              return [+card.dataset.index, box.left - origin.left, box.top - origin.top, box.width, box.height];
            }),
          };
        };
        __test.step = async y => {
          scrollTo(0, y);
          await new Promise(resolve => requestAnimationFrame(resolve));
          await feedlayout.settled();
          return __test.cards();
        };
        """#

    struct Frame {
        var x, y, width, height: Double
    }

    /// A layout's pages as the service serves them: every pin's frame, and which page each cursor leads to.
    struct ServedLayout {
        var frames: [[Int: Frame]] = []
        /// Each pin's `key`, by breakpoint and index.
        var keys: [[Int: String]] = []
        /// Lines of each pin's title and caption, as measured ("title 12" → 2).
        var lines: [[String: Int]] = []
        var pageCounts: [Int] = []
        /// A page's cursor → the page it leads to (breakpoint, page index).
        var nextPage: [String: (part: Int, page: Int)] = [:]
        var contentHeights: [Double] = []
    }

    @Test func fiveThousandPinsScrollWithoutAShift() async throws {
        let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
        let sample = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed").path
        let service = try await ServeEndToEndTests.ServeProcess(store: store, arguments: ["--image-root", sample])
        defer { _ = service.signal(SIGKILL) }
        let posted = try await service.post(["feedText": try Self.generatedFeed(pins: 5_000), "options": ["breakpoints": "600:2,1280:5"]])
        let id = try #require(
            (try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String,
            "POST answered \(posted.status): \(String(decoding: posted.body, as: UTF8.self))")
        let status = try await service.waitUntilDone(id)
        try #require(status["status"] as? String == "done", "\(status)")
        let served = try await Self.served(service, id: id, status: status)
        try #require(served.frames.count == 2 && served.frames.allSatisfy { $0.count == 5_000 }, "\(status)")

        let browser = try DevToolsBrowser()
        defer { browser.quit() }
        let tab = try await browser.openTab(width: 1280, height: 800, script: Self.observers)
        // As a reader arrives: from the service's form (a warm browser, fonts not yet cached), then the view.
        try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/")
        try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/view/\(id)")
        var view = try await Self.view(try browser.evaluate("feedlayout.settled().then(__test.cards)", in: tab))
        try await Self.keepArtifact("client-1280.png", try browser.screenshot(tab))
        #expect(view.breakpoint == 1280)
        Self.check(view, against: served.frames[1], step: "first view")

        // To the end in steps of most of a viewport, then back to the top.
        var steps = 0
        var y = 0.0
        while !(view.complete && view.scrollY >= view.scrollMax - 1), steps < 2_000 {
            y += 800
            view = try await Self.view(try browser.evaluate("__test.step(\(y))", in: tab))
            Self.check(view, against: served.frames[1], step: "down to \(y)")
            steps += 1
        }
        #expect(view.complete && view.scrollY >= view.scrollMax - 1, "the end was not reached in \(steps) steps")
        #expect(abs(view.scrollMax + 800 - view.originTop - served.contentHeights[1]) <= 1, "the content's height")
        while y > 0 {
            y = max(0, y - 800)
            view = try await Self.view(try browser.evaluate("__test.step(\(y))", in: tab))
            Self.check(view, against: served.frames[1], step: "up to \(y)")
            steps += 1
        }

        // Half way down, the window narrows to the other breakpoint: the pin at the top stays in view.
        view = try await Self.view(try browser.evaluate("__test.step(\(served.contentHeights[1] / 2))", in: tab))
        let top = view.scrollY - view.originTop
        let anchor = try #require(
            served.frames[1].filter { $0.value.y < top + 800 && $0.value.y + $0.value.height > max(0, top) }.keys.min())
        try await browser.resize(tab, width: 600, height: 800)
        view = try await Self.view(
            try browser.evaluate(
                "new Promise(r => requestAnimationFrame(r)).then(() => feedlayout.settled()).then(__test.cards)",
                in: tab))
        #expect(view.breakpoint == 600)
        Self.check(view, against: served.frames[0], step: "after the resize to 600 px")
        let anchorFrame = try #require(served.frames[0][anchor])
        let newTop = view.scrollY - view.originTop
        #expect(
            anchorFrame.y < newTop + 800 && anchorFrame.y + anchorFrame.height > newTop,
            "pin \(anchor), at the top before the resize, is out of view after it")
        for offset in [800.0, 1_600, 2_400] {
            view = try await Self.view(try browser.evaluate("__test.step(\(view.originTop + newTop + offset))", in: tab))
            Self.check(view, against: served.frames[0], step: "600 px, \(offset) px further")
        }

        let cls = try await browser.evaluate("__test.cls", in: tab) as? Double
        let shifts = try await browser.evaluate("__test.shifts", in: tab)
        #expect(cls == 0, "cumulative layout shift \(cls ?? -1): \(shifts ?? "")")
        let maxCards = try await browser.evaluate("__test.maxCards", in: tab) as? Int ?? .max
        #expect(maxCards <= 300, "the DOM held \(maxCards) cards at once")
        Self.checkRequests(browser, served: served, id: id)
    }

    /// The sample feed (English, German, Japanese and Arabic captions, emoji) at both breakpoints: every text
    /// wraps into the lines the service measured, in the fonts its style sheet names, each fallback font loaded
    /// only for the texts that need it. Its screenshot is the README's.
    @Test func theSampleFeedWrapsAsMeasuredInTheLayoutsFonts() async throws {
        let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
        let sample = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed")
        let service = try await ServeEndToEndTests.ServeProcess(store: store, arguments: ["--image-root", sample.path])
        defer { _ = service.signal(SIGKILL) }
        let feed = try String(contentsOf: sample.appendingPathComponent("feed.xml"), encoding: .utf8)
        let posted = try await service.post(["feedText": feed, "options": ["breakpoints": "600:2,1280:5"]])
        let id = try #require((try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)
        let served = try await Self.served(service, id: id, status: try service.waitUntilDone(id))

        let browser = try DevToolsBrowser()
        defer { browser.quit() }
        let tab = try await browser.openTab(width: 1280, height: 800, script: Self.observers)
        try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/view/\(id)")
        for (width, part) in [(1280, 1), (600, 0)] {
            try await browser.resize(tab, width: width, height: 800)
            var view = try await Self.view(try browser.evaluate(
                "new Promise(r => requestAnimationFrame(r)).then(() => feedlayout.settled()).then(__test.cards)", in: tab))
            #expect(view.breakpoint == width)
            var wrapped: [String: Int] = [:]
            // Down the whole feed, reading how many lines each text takes in the browser.
            var y = 0.0
            repeat {
                view = try await Self.view(try browser.evaluate("__test.step(\(y))", in: tab))
                Self.check(view, against: served.frames[part], step: "sample at \(width) px, \(y)")
                let lines = try await browser.evaluate(Self.renderedLines, in: tab) as? [String: Int] ?? [:]
                wrapped.merge(lines) { first, _ in first }
                if width == 1280 && y == 0 {
                    // The README's picture, once the photos in view have arrived.
                    _ = try await browser.evaluate(
                        "Promise.all([...document.images].map(image => image.decode().catch(() => null)))", in: tab)
                    try await Self.keepArtifact("client-sample-1280.jpg", try browser.screenshot(tab, jpegQuality: 85))
                }
                y += 800
            } while !(view.complete && view.scrollY >= view.scrollMax - 1)
            let differ = served.lines[part].filter { wrapped[$0.key] != $0.value }
                .map { "\($0.key): measured \($0.value), wrapped \(wrapped[$0.key].map(String.init) ?? "-")" }
            #expect(differ.isEmpty, "\(width) px: \(differ.sorted())")
            #expect(wrapped.count == served.lines[part].count)
        }
        let faces = try await browser.evaluate(
            "[...document.fonts].map(face => face.family + ' ' + face.status)", in: tab) as? [String] ?? []
        // Every font of the lists is declared; the Japanese captions loaded the CJK collection, and no font failed.
        #expect(faces.count >= 6, "\(faces)")
        #expect(!faces.contains { $0.hasSuffix("error") }, "\(faces)")
        #expect(faces.filter { $0.hasSuffix("loaded") }.count >= 4, "\(faces)")
        await #expect(try browser.evaluate("__test.cls", in: tab) as? Double == 0)
        Self.checkRequests(browser, served: served, id: id, scrolledPart: nil)
    }

    /// A layout still being made when the view opens (its photos come slowly from a test server): the client
    /// shows the pages as they are made, asks the service again when it runs out of them, and ends with every
    /// page of the finished layout, each fetched once, every card at its frame.
    @Test func aLayoutStillRunningFillsInAsItsPagesAreMade() async throws {
        try await TestHTTPServer.with { photos in
            // Pin 250's photo is held back until the view has shown the pages before it: the layout is running
            // while the view opens, whatever the machine's speed.
            let gate = ResponseGate(holdingAt: .beforeHead)
            let feed = try ServeEndToEndTests.serveSlowFeed(photos, items: 400, delay: 5, gate: gate, gatedItem: 250)
            let store = try CommandRunner.temporaryDirectory().appendingPathComponent("store.sqlite").path
            let service = try await ServeEndToEndTests.ServeProcess(store: store)
            defer { _ = service.signal(SIGKILL) }
            let posted = try await service.post(["feed": feed, "options": ["width": 1280, "columns": 5, "pageSize": 20]])
            let id = try #require(
                (try JSONSerialization.jsonObject(with: posted.body) as? [String: Any])?["id"] as? String)

            let browser = try DevToolsBrowser()
            defer { browser.quit() }
            let tab = try await browser.openTab(width: 1280, height: 800, script: Self.observers)
            try await browser.navigate(tab, to: "http://127.0.0.1:\(service.port)/view/\(id)")
            var view = try await Self.view(try browser.evaluate("feedlayout.settled().then(__test.cards)", in: tab))
            await #expect(try browser.evaluate("feedlayout.layoutStatus", in: tab) as? String == "running")
            #expect(!view.cards.isEmpty, "the pages made so far are not shown")
            gate.open()
            var steps = 0
            while !(view.complete && view.scrollY >= view.scrollMax - 1), steps < 400 {
                view = try await Self.view(try browser.evaluate("__test.step(\(view.scrollY + 800))", in: tab))
                steps += 1
            }
            #expect(view.complete, "the view never reached the layout's end in \(steps) steps")
            let served = try await Self.served(service, id: id, status: try service.waitUntilDone(id))
            Self.check(view, against: served.frames[0], step: "the end of the finished layout")
            await #expect(try browser.evaluate("__test.cls", in: tab) as? Double == 0)
            Self.checkRequests(browser, served: served, id: id, scrolledPart: 0)
        }
    }

    /// For every text block in the DOM: how many lines the browser wrapped it into (clamped as the style sheet
    /// clamps it), by "title 12" / "caption 12".
    static let renderedLines = #"""
        (() => {
          const lines = {};
          for (const block of document.querySelectorAll('.feedlayout-title, .feedlayout-caption')) {
            const range = document.createRange();
            range.selectNodeContents(block);
            const tops = new Set([...range.getClientRects()].filter(rect => rect.width > 0)
              .map(rect => Math.round(rect.top)));
            const clamp = parseInt(getComputedStyle(block).webkitLineClamp) || Infinity;
            const role = block.classList.contains('feedlayout-title') ? 'title' : 'caption';
            lines[role + ' ' + block.closest('[data-index]').dataset.index] = Math.min(tops.size, clamp);
          }
          return lines;
        })()
        """#

    // MARK: Checks

    struct View {
        var scrollY, scrollMax, originTop: Double
        var complete: Bool
        var breakpoint: Int
        var cards: [(index: Int, frame: Frame)]
    }

    static func view(_ value: Any?) throws -> View {
        let object = try #require(value as? [String: Any], "the page gave no view: \(value ?? "nil")")
        let cards = (object["cards"] as? [[NSNumber]] ?? []).map { card in
            (index: card[0].intValue, frame: Frame(
                x: card[1].doubleValue, y: card[2].doubleValue, width: card[3].doubleValue, height: card[4].doubleValue))
        }
        return View(
            scrollY: number(object["scrollY"]), scrollMax: number(object["scrollMax"]),
            originTop: number(object["originTop"]), complete: object["complete"] as? Bool ?? false,
            breakpoint: (object["breakpoint"] as? [String: Any])?["width"] as? Int ?? 0, cards: cards)
    }

    /// Every card at its frame (±0.5 px), in index order, at most 300, and every pin the viewport shows present.
    static func check(_ view: View, against frames: [Int: Frame], step: String) {
        var wrong: [String] = []
        for card in view.cards {
            guard let frame = frames[card.index] else {
                wrong.append("card \(card.index) is no pin of this breakpoint")
                continue
            }
            let box = card.frame
            if abs(box.x - frame.x) > 0.5 || abs(box.y - frame.y) > 0.5 || abs(box.width - frame.width) > 0.5
                || abs(box.height - frame.height) > 0.5
            {
                wrong.append("card \(card.index) at \(box), its frame is \(frame)")
            }
        }
        #expect(wrong.isEmpty, "\(step): \(wrong.prefix(5))")
        let indices = view.cards.map(\.index)
        #expect(indices == indices.sorted(), "\(step): the cards are not in reading order")
        #expect(view.cards.count <= 300, "\(step): \(view.cards.count) cards in the DOM")
        let top = view.scrollY - view.originTop
        let present = Set(indices)
        let missing = frames.filter { $0.value.y < top + 800 && $0.value.y + $0.value.height > top }.keys
            .filter { !present.contains($0) }
        #expect(missing.isEmpty, "\(step): pins in view without a card: \(missing.sorted().prefix(10))")
    }

    /// Each page fetched at most once (and every page of the breakpoint scrolled to its end), no request failed,
    /// no console error.
    static func checkRequests(_ browser: DevToolsBrowser, served: ServedLayout, id: String, scrolledPart: Int? = 1) {
        var fetched: [String: Int] = [:]
        for request in browser.events("Network.requestWillBeSent") {
            guard let url = (request["request"] as? [String: Any])?["url"] as? String,
                let components = URLComponents(string: url)
            else { continue }
            let query = Dictionary(
                (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
            var page: (part: Int, page: Int)?
            if components.path.hasPrefix("/v1/layouts/\(id)/pages/") {
                page = (Int(query["layout"] ?? "0") ?? -1, Int(components.path.split(separator: "/").last ?? "") ?? -1)
            } else if components.path == "/v1/pages" {
                page = served.nextPage[query["cursor"] ?? ""] ?? (-1, -1)
            }
            if let page { fetched["\(page.part)/\(page.page)", default: 0] += 1 }
        }
        #expect(fetched["-1/-1"] == nil, "a page request named no page of the layout")
        #expect(fetched.values.allSatisfy { $0 == 1 }, "pages fetched more than once: \(fetched.filter { $0.value > 1 })")
        for part in served.pageCounts.indices {
            let pages = (0..<served.pageCounts[part]).filter { fetched["\(part)/\($0)"] != nil }
            if part == scrolledPart || scrolledPart == nil {
                #expect(pages.count == served.pageCounts[part], "breakpoint \(part) scrolled to its end, fetched \(pages)")
            }
            #expect(pages == Array(0..<pages.count), "breakpoint \(part)'s pages were not fetched in order: \(pages)")
        }

        let failed = browser.events("Network.loadingFailed").filter { $0["canceled"] as? Bool != true }
        #expect(failed.isEmpty, "failed requests: \(failed.prefix(3))")
        let refused = browser.events("Network.responseReceived").compactMap { $0["response"] as? [String: Any] }
            .filter { ($0["status"] as? Int ?? 0) >= 400 }.map { "\($0["status"] ?? "") \($0["url"] ?? "")" }
        #expect(refused.isEmpty, "requests answered with an error: \(refused.prefix(3))")
        let errors =
            browser.events("Runtime.consoleAPICalled").filter { $0["type"] as? String == "error" }.map { "\($0)" }
            + browser.events("Runtime.exceptionThrown").map { "\($0)" }
            + browser.events("Log.entryAdded").compactMap { $0["entry"] as? [String: Any] }
            .filter { $0["level"] as? String == "error" }.map { "\($0)" }
        #expect(errors.isEmpty, "console errors: \(errors.prefix(3))")
    }

    // MARK: Inputs and artifacts

    /// The pages of every breakpoint of a finished layout, as the service serves them.
    static func served(_ service: ServeEndToEndTests.ServeProcess, id: String, status: [String: Any]) async throws
        -> ServedLayout
    {
        var served = ServedLayout()
        for part in status["layouts"] as? [[String: Any]] ?? [] {
            let partIndex = part["index"] as? Int ?? 0
            let pages = part["pages"] as? Int ?? 0
            var frames: [Int: Frame] = [:]
            var keys: [Int: String] = [:]
            var lines: [String: Int] = [:]
            for index in 0..<pages {
                let page = try await service.json("/v1/layouts/\(id)/pages/\(index)?layout=\(partIndex)")
                for item in page["items"] as? [[String: Any]] ?? [] {
                    let frame = item["frame"] as? [String: Any] ?? [:]
                    frames[item["index"] as? Int ?? -1] = Frame(
                        x: number(frame["x"]), y: number(frame["y"]), width: number(frame["width"]),
                        height: number(frame["height"]))
                    keys[item["index"] as? Int ?? -1] = item["key"] as? String
                    let annotation = item["annotation"] as? [String: Any] ?? [:]
                    for (role, key) in [("title", "title"), ("caption", "text")] {
                        if let block = annotation[key] as? [String: Any], let count = block["lines"] as? Int {
                            lines["\(role) \(item["index"] as? Int ?? -1)"] = count
                        }
                    }
                }
                if let cursor = page["cursor"] as? String { served.nextPage[cursor] = (partIndex, index + 1) }
            }
            served.frames.append(frames)
            served.keys.append(keys)
            served.lines.append(lines)
            served.pageCounts.append(pages)
            served.contentHeights.append(number(part["contentHeight"]))
        }
        return served
    }

    /// An RSS feed of `pins` pins whose photos are the sample feed's (a corrupt one and a missing one among
    /// them, so that some cards have no photo), with titles and captions of every length, a few in Thai and
    /// Hindi (their fonts load only when those pins come near).
    static func generatedFeed(pins: Int) throws -> String {
        let folder = CommandRunner.repositoryRoot.appendingPathComponent("sample-feed/photos").path
        let photos = try FileManager.default.contentsOfDirectory(atPath: folder).sorted() + ["does-not-exist.jpg"]
        let words = """
            light morning harbour stone quiet market river bridge winter garden window coffee mountain street \
            evening lantern orchard meadow cliff shadow autumn balcony ferry island village station
            """.split(separator: " ")
        let scripts = ["ตลาดน้ำยามเช้า เรือเล็กเต็มไปด้วยผลไม้", "सुबह की धूप में पुराना बाज़ार"]
        var random = SplitMix64(seed: 20)
        func phrase(_ count: Int) -> String {
            (0..<count).map { _ in String(words[Int(random.next() % UInt64(words.count))]) }.joined(separator: " ")
        }
        var feed = #"<?xml version="1.0" encoding="UTF-8"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>5,000 pins</title>"#
        for index in 0..<pins {
            let title = index % 97 == 0 ? scripts[index % 2] : phrase(1 + Int(random.next() % 6)).capitalized
            let caption = phrase(Int(random.next() % 24))
            feed += "<item><guid>pin-\(index)</guid><link>https://example.com/pins/\(index)</link>"
            feed += "<title>\(title)</title><description>\(caption)</description>"
            feed += "<media:content url=\"photos/\(photos[index % photos.count])\" medium=\"image\"/></item>\n"
        }
        return feed + "</channel></rss>\n"
    }

    /// Keeps a file in `.build/test-artifacts/`.
    static func keepArtifact(_ name: String, _ data: Data) throws {
        let folder = CommandRunner.repositoryRoot.appendingPathComponent(".build/test-artifacts")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try data.write(to: folder.appendingPathComponent(name))
    }
}
