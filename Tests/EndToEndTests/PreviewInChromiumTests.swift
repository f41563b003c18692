import Foundation
import Testing

/// The end-to-end proof that measurement matches a browser: `feedlayout preview` is opened in headless Chromium
/// (Debian's chromium package; `scripts/install-deps --test` installs it) and every annotation's rendered height
/// must equal its precomputed height within 1 px, and every readable local image must load.
@Suite(.serialized) struct PreviewInChromiumTests {
    /// Measures the preview in the page itself once fonts and images are done, and leaves the result in a
    /// `<pre id="check">` that `--dump-dom` prints.
    static let checkScript = """
        <script>
        // Every face is loaded, not only those the text needs: a fallback file the browser cannot read must fail here.
        window.addEventListener('load', () => Promise.allSettled([...document.fonts].map(face => face.load())).then(() => {
          const annotations = [];
          for (const annotation of document.querySelectorAll('[data-role=annotation]')) {
            const top = annotation.getBoundingClientRect().top;
            const blocks = [...annotation.children].map(block => {
              const box = block.getBoundingClientRect();
              return { role: block.className, expected: parseFloat(block.dataset.height), rendered: box.height,
                       bottom: box.bottom - top };
            });
            annotations.push({ index: +annotation.closest('[data-index]').dataset.index,
                               expected: parseFloat(annotation.style.height),
                               rendered: blocks.length ? Math.max(...blocks.map(b => b.bottom)) : 0, blocks });
          }
          const images = [...document.querySelectorAll('img')].map(image => ({
            index: +image.closest('[data-index]').dataset.index, loaded: image.complete && image.naturalWidth > 0 }));
          const fonts = [...document.fonts].map(face => ({ family: face.family, status: face.status }));
          const pre = document.createElement('pre');
          pre.id = 'check';
          pre.textContent = JSON.stringify({ annotations, images, fonts });
          document.body.appendChild(pre);
        }));
        </script>
        """

    struct Check: Decodable {
        struct Block: Decodable {
            var role: String
            var expected: Double
            var rendered: Double
        }
        struct Annotation: Decodable {
            var index: Int
            var expected: Double
            var rendered: Double
            var blocks: [Block]
        }
        struct Image: Decodable {
            var index: Int
            var loaded: Bool
        }
        struct Font: Decodable {
            var family: String
            var status: String
        }
        var annotations: [Annotation]
        var images: [Image]
        var fonts: [Font]
        /// How many `@font-face` rules the preview declares (one per entry of the title's and caption's font lists).
        var declaredFaces = 0

        private enum CodingKeys: String, CodingKey { case annotations, images, fonts }
    }

    /// Renders the preview of the sample feed with these options in Chromium.
    func renderInChromium(_ options: [String]) async throws -> (Check, readableImages: Set<Int>) {
        let directory = try CommandRunner.temporaryDirectory()
        let preview = try await CommandRunner.run(["preview", CommandRunner.sampleFeed, "--out", directory.path] + options)
        #expect(preview.status == 1, "the sample has a missing and a corrupt image; stderr: \(preview.stderr)")
        var html = try String(contentsOf: directory.appendingPathComponent("index.html"), encoding: .utf8)
        let declaredFaces = html.components(separatedBy: "@font-face").count - 1
        html = html.replacingOccurrences(of: "</body>", with: Self.checkScript + "</body>")
        guard
            let json = try await HeadlessChromium.checkResult(
                of: html, in: directory, flags: ["--allow-file-access-from-files", "--virtual-time-budget=20000"])
        else { return (Check(annotations: [], images: [], fonts: [], declaredFaces: declaredFaces), []) }
        var check = try JSONDecoder().decode(Check.self, from: Data(json.utf8))
        check.declaredFaces = declaredFaces

        // Which items have an image our prober could read: exactly those must load in the browser too.
        let layout = try await CommandRunner.run(["layout", CommandRunner.sampleFeed, "--quiet"] + options)
        var readable = Set<Int>()
        for line in String(decoding: layout.stdout, as: UTF8.self).split(separator: "\n") {
            for item in try PageFile(Data(line.utf8)).items {
                let photo = item["photo"] as! [String: Any]
                if photo["sizeFrom"] as? String == "header" { readable.insert(item["index"] as! Int) }
            }
        }
        return (check, readable)
    }

    @Test(arguments: [
        ["--width", "1024", "--columns", "4"],
        ["--width", "375", "--columns", "2", "--cell-padding", "6", "--line-height", "1.4x", "--title-lines", "3",
         "--font-size", "14"],
        ["--width", "900", "--min-column-width", "170", "--line-height", "19px", "--text-lines", "5", "--title-font-size", "17"],
        // A fallback face inside a collection that is not its first (the Korean face): the preview writes it out
        // as a font file of its own, which the browser must load and measure with.
        ["--width", "600", "--columns", "3", "--fallback-font", "Noto Sans CJK KR", "--fallback-font", "Noto Color Emoji"],
    ])
    func annotationsRenderAtTheirPrecomputedHeightsAndImagesLoad(options: [String]) async throws {
        let (check, readable) = try await renderInChromium(options + ["--placeholders"])
        #expect(check.annotations.count == LayoutEndToEndTests.sampleItemCount)
        // Every font of both lists is declared, and every one loads.
        #expect(check.declaredFaces >= 4 && check.fonts.count == check.declaredFaces, "\(check.fonts)")
        #expect(check.fonts.allSatisfy { $0.status == "loaded" }, "\(check.fonts)")
        var blocks = 0
        for annotation in check.annotations {
            #expect(abs(annotation.rendered - annotation.expected) <= 1, "item \(annotation.index): \(annotation)")
            for block in annotation.blocks {
                blocks += 1
                #expect(abs(block.rendered - block.expected) <= 1, "item \(annotation.index) \(block.role): \(block)")
            }
        }
        #expect(blocks > LayoutEndToEndTests.sampleItemCount, "most pins have a title and a caption")
        #expect(readable.count >= 48)
        for image in check.images {
            #expect(image.loaded == readable.contains(image.index), "item \(image.index)'s image")
        }
    }
}
