import FeedLayout
import Foundation
import ImageProbe
import LocalFileAccess
import Testing
import TextMeasure
import WaterfallLayout

@testable import LayoutPreview

/// A small layout built the way the pipeline builds one, drawn and read back pixel by pixel.
@Suite struct PNGPreviewTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The fixtures' solid colours.
    static let blue = RGBColor(hex: 0x1E90C8)
    static let amber = RGBColor(hex: 0xE0A010)
    static let placeholderRed = PlaceholderColor(red: 200, green: 40, blue: 30)

    /// One pin of the synthetic feed.
    struct Pin {
        var url: String?
        var size: Size
        var placeholder: PlaceholderColor? = nil
        var title: String? = nil
        var caption: String? = nil
    }

    static let options = LayoutOptions(
        waterfall: WaterfallConfiguration(
            containerWidth: 400, columns: .fixed(2), insets: Insets(all: 16), columnGap: 16, rowGap: 16,
            annotationSpacing: 8))

    /// The gate the tests' photos are read through: the fixtures, and the temporary folder some tests write to.
    static let fileGate = LocalFileGate(roots: [fixtures.path, FileManager.default.temporaryDirectory.path])

    /// Places the pins with the engine and measures their text as the pipeline does; a relative photo reference
    /// names a file in the fixtures, as the feed reader resolves it.
    static func page(_ pins: [Pin], options: LayoutOptions = options) throws -> (LayoutPage, WaterfallGrid) {
        let grid = try WaterfallGrid(options.waterfall)
        var engine = try WaterfallEngine(configuration: options.waterfall)
        let title = try TextMeasurer(style: options.annotation.title)
        let caption = try TextMeasurer(style: options.annotation.text)
        let width = Double(grid.contentWidth) / grid.scale
        let gap = grid.deviceLengthRoundingUp(options.annotation.titleTextGap)
        var items: [LaidOutItem] = []
        for (index, pin) in pins.enumerated() {
            func measured(_ text: String?, _ measurer: TextMeasurer, _ lines: Int?) -> MeasuredText? {
                guard let text else { return nil }
                let measurement = measurer.measure(text, width: width, maxLines: lines)
                return MeasuredText(
                    text: text, measurement: measurement, deviceHeight: grid.deviceLengthRoundingUp(measurement.height))
            }
            var titleText = measured(pin.title, title, options.annotation.titleLines)
            var captionText = measured(pin.caption, caption, options.annotation.textLines)
            let titleHeight = titleText?.deviceHeight ?? 0
            let captionHeight = captionText?.deviceHeight ?? 0
            let annotationHeight = titleHeight + captionHeight + (titleHeight > 0 && captionHeight > 0 ? gap : 0)
            let placed = engine.place(
                WaterfallItem(photoSize: pin.size, annotationHeight: Double(annotationHeight) / grid.scale))
            let annotation = placed.annotationFrame
            titleText?.frame = DeviceRect(
                x: annotation.x, y: annotation.y, width: annotation.width, height: titleHeight)
            captionText?.frame = DeviceRect(
                x: annotation.x, y: annotation.maxY - captionHeight, width: annotation.width, height: captionHeight)
            let placeholder = pin.placeholder.map { ImagePlaceholder(averageColor: $0, thumbHash: []) }
            let localPath = pin.url.map { $0.hasPrefix("/") ? $0 : fixtures.appendingPathComponent($0).path }
            let photo = ResolvedPhoto(
                url: pin.url, size: pin.size, sizeSource: .header, info: nil, placeholder: placeholder,
                localPath: localPath)
            items.append(
                LaidOutItem(
                    index: index, id: "pin-\(index)", link: nil, placed: placed, photo: photo, title: titleText,
                    text: captionText, warnings: []))
        }
        let state = engine.state
        let page = LayoutPage(
            grid: grid, fonts: try LayoutFonts(options.annotation), index: 0, items: items,
            columnHeights: state.columnHeights,
            contentHeight: state.contentBottom + grid.insets.bottom, cursor: nil,
            quality: LayoutQuality(items: items.map(\.placed), columnHeights: state.columnHeights, grid: grid),
            totals: LayoutQualityTotals())
        return (page, grid)
    }

    static func render(_ pins: [Pin], fileGate: LocalFileGate = fileGate, limits: PNGPreviewOptions = PNGPreviewOptions())
        throws -> (Canvas, LayoutPage)
    {
        let (page, grid) = try page(pins)
        var preview = PNGPreview(
            options: options, grid: grid, fileGate: fileGate, outputDirectory: NSTemporaryDirectory(), limits: limits)
        preview.add(page)
        return (try preview.render(), page)
    }

    static func close(_ a: RGBColor, _ b: RGBColor, within tolerance: Int = 6) -> Bool {
        abs(Int(a.red) - Int(b.red)) <= tolerance && abs(Int(a.green) - Int(b.green)) <= tolerance
            && abs(Int(a.blue) - Int(b.blue)) <= tolerance
    }

    static func isDark(_ color: RGBColor) -> Bool { Int(color.red) + Int(color.green) + Int(color.blue) < 3 * 160 }

    @Test func missingImageKeepsThePlaceholderColourAndGetsACross() throws {
        let (canvas, page) = try Self.render([
            Pin(url: "no-such-photo.jpg", size: Size(width: 300, height: 200), placeholder: Self.placeholderRed)
        ])
        let frame = page.items[0].placed.photoFrame
        let expected = RGBColor(red: 200, green: 40, blue: 30)
        // Corners of the slot: the placeholder, untouched.
        for (x, y) in [(frame.x + 2, frame.y + 2), (frame.maxX - 3, frame.maxY - 3), (frame.x + 2, frame.maxY - 3)] {
            #expect(canvas.pixel(x: x, y: y) == expected, "(\(x), \(y))")
        }
        // The middle: the cross (anti-aliased, so nearly its colour).
        let centre = canvas.pixel(x: frame.x + frame.width / 2, y: frame.y + frame.height / 2)
        #expect(Self.close(centre, PNGPreview.crossColor))
    }

    @Test func solidJPEGAndPNGPhotosFillTheirFrames() throws {
        let pngPath = FileManager.default.temporaryDirectory.appendingPathComponent("amber-\(UUID().uuidString).png")
            .path
        defer { try? FileManager.default.removeItem(atPath: pngPath) }
        // The PNG is written with the preview's own writer, so this also checks that the writer's pixels decode.
        let amber = Canvas(width: 30, height: 45, background: Self.amber)
        try amber.writePNG(to: pngPath)

        let (canvas, page) = try Self.render([
            Pin(url: "solid-blue-48x32.jpg", size: Size(width: 48, height: 32)),
            Pin(url: pngPath, size: Size(width: 30, height: 45)),
        ])
        for (item, colour) in zip(page.items, [Self.blue, Self.amber]) {
            let frame = item.placed.photoFrame
            #expect(frame.width > 100 && frame.height > 100)
            var matching = 0
            for y in frame.y..<frame.maxY {
                for x in frame.x..<frame.maxX where Self.close(canvas.pixel(x: x, y: y), colour) { matching += 1 }
            }
            #expect(matching == frame.width * frame.height, "\(item.photo.url ?? "")")
            // Just outside the frame: the card or the background, never the photo.
            #expect(!Self.close(canvas.pixel(x: frame.x - 1, y: frame.y + 5), colour))
            #expect(!Self.close(canvas.pixel(x: frame.x + 5, y: frame.maxY), colour))
        }
    }

    @Test func textIsDrawnInsideAnnotationsAndNothingOutsideCells() throws {
        let (canvas, page) = try Self.render([
            Pin(
                url: "solid-blue-48x32.jpg", size: Size(width: 48, height: 32), title: "Espresso at the café",
                caption: "A double espresso in a red cup on a worn wooden table, long enough to wrap twice over."),
            Pin(url: nil, size: Size(width: 1, height: 1), title: "Feierabend 🍷", caption: "العربية and English"),
        ])
        for item in page.items {
            let annotation = item.placed.annotationFrame
            var dark = 0
            for y in annotation.y..<annotation.maxY {
                for x in annotation.x..<annotation.maxX where Self.isDark(canvas.pixel(x: x, y: y)) { dark += 1 }
            }
            #expect(dark > 100, "item \(item.index): \(dark) dark pixels")
            // Every line the measurement made is drawn: dark pixels in each line's band of the caption.
            if let caption = item.text {
                let lineHeight = caption.deviceHeight / caption.measurement.lines
                for line in 0..<caption.measurement.lines {
                    let top = caption.frame.y + line * lineHeight
                    let hasInk = (top..<(top + lineHeight)).contains { y in
                        (annotation.x..<annotation.maxX).contains { x in Self.isDark(canvas.pixel(x: x, y: y)) }
                    }
                    #expect(hasInk, "item \(item.index), caption line \(line)")
                }
            }
        }
        // Outside the cells (and above the first page's mark) the canvas stays white.
        let cells = page.items.map(\.placed.frame)
        let markTop = cells.map(\.y).min()! - 16
        var stray = 0
        for y in 0..<canvas.height where y < markTop || y >= markTop + 16 {
            for x in 0..<canvas.width
            where !cells.contains(where: { x >= $0.x && x < $0.maxX && y >= $0.y && y < $0.maxY }) {
                if canvas.pixel(x: x, y: y) != RGBColor(hex: 0xFFFFFF) { stray += 1 }
            }
        }
        #expect(stray == 0)
    }

    @Test func pageStartIsMarkedWithARedLine() throws {
        let (canvas, page) = try Self.render([Pin(url: nil, size: Size(width: 4, height: 3))])
        let y = page.items[0].placed.frame.y - 1
        #expect(canvas.pixel(x: 1, y: y) == PNGPreview.pageMarkColor)
        #expect(canvas.pixel(x: canvas.width / 2, y: y) == PNGPreview.pageMarkColor)
    }

    /// djembe-and-wine.jpg is stored 900×600 with EXIF orientation 6: shown, it is turned a quarter
    /// clockwise. At 1/8 the decode is 113×75, exactly the stored size of a 75×113 thumbnail, so the
    /// thumbnail must be the decode turned clockwise, pixel for pixel.
    @Test func orientationSixPhotoComesOutUpright() throws {
        let path = Self.repositoryRoot.appendingPathComponent("sample-feed/photos/djembe-and-wine.jpg").path
        let thumbnail = try PhotoThumbnail.load(path: path, width: 75, height: 113)
        #expect(thumbnail.scaleDenominator == 8)
        #expect((thumbnail.width, thumbnail.height) == (75, 113))

        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var storedPixels: [UInt8] = []
        let report = try data.withUnsafeBytes { bytes in
            try ImagePixelDecoder.forEachRow(bytes, options: PixelDecodeOptions(jpegScaleDenominator: 8)) { row in
                storedPixels += UnsafeBufferPointer(start: row.pixels, count: row.count * 4)
            }
        }
        let (storedWidth, storedHeight) = (report.decodedWidth, report.decodedHeight)
        #expect((storedWidth, storedHeight) == (113, 75))
        func stored(_ x: Int, _ y: Int) -> [UInt8] {
            let index = (y * storedWidth + x) * 4
            return Array(storedPixels[index..<index + 3])
        }
        var clockwise = 0
        var counterClockwise = 0
        for y in 0..<113 {
            for x in 0..<75 {
                let index = (y * 75 + x) * 4
                let shown = Array(thumbnail.pixels[index..<index + 3])
                if shown == stored(y, storedHeight - 1 - x) { clockwise += 1 }
                if shown == stored(storedWidth - 1 - y, x) { counterClockwise += 1 }
            }
        }
        #expect(clockwise == 75 * 113)
        #expect(counterClockwise < 75 * 113 / 2)
    }

    @Test func writtenPNGDecodesToTheCanvasSize() throws {
        var pins: [Pin] = []
        for index in 0..<6 {
            let url: String? = index % 2 == 0 ? "solid-blue-48x32.jpg" : nil
            pins.append(Pin(url: url, size: Size(width: 40, height: Double(30 + index * 10)), title: "Pin \(index)"))
        }
        let (page, grid) = try Self.page(pins)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("png-preview-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        for limit in [4000, 120] {
            var preview = PNGPreview(
                options: Self.options, grid: grid, fileGate: Self.fileGate,
                outputDirectory: folder.path, limits: PNGPreviewOptions(maximumHeight: limit))
            preview.add(page)
            let summary = try preview.write()
            let expectedHeight = min(limit, page.contentHeight)
            #expect((summary.width, summary.height) == (400, expectedHeight))
            let shown = page.items.filter { $0.placed.frame.y < limit && $0.photo.url != nil }
            #expect(summary.photosDrawn == shown.count)
            #expect(limit < 4000 || shown.count == 3)

            let data = try Data(contentsOf: URL(fileURLWithPath: preview.outputPath))
            let report = try data.withUnsafeBytes { try ImagePixelDecoder.verifyDecodable($0) }
            #expect((report.width, report.height) == (400, expectedHeight))
            // No temporary file is left beside it.
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(names == ["preview.png"])
        }
    }

    /// A page from a resumed run sits deep in the layout; the picture starts at it.
    @Test func resumedPagesStartAtTheTop() throws {
        let (page, grid) = try Self.page([Pin(url: "solid-blue-48x32.jpg", size: Size(width: 48, height: 32))])
        var deep = page
        deep.index = 7
        let distance = 20_000
        deep.contentHeight += distance
        deep.items = page.items.map { item in
            var item = item
            item.placed.frame.y += distance
            item.placed.photoSlot.y += distance
            item.placed.photoFrame.y += distance
            item.placed.annotationFrame.y += distance
            return item
        }
        var preview = PNGPreview(
            options: Self.options, grid: grid, fileGate: Self.fileGate,
            outputDirectory: NSTemporaryDirectory())
        preview.add(deep)
        let canvas = try preview.render()
        #expect(canvas.height == page.contentHeight)
        let frame = page.items[0].placed.photoFrame
        #expect(Self.close(canvas.pixel(x: frame.x + frame.width / 2, y: frame.y + frame.height / 2), Self.blue))
        #expect(canvas.pixel(x: 2, y: frame.y - 1) == PNGPreview.pageMarkColor)
    }

    @Test func writeFailureNamesTheFile() {
        let path = "/nonexistent-folder-\(UUID().uuidString)/preview.png"
        do {
            try Canvas(width: 4, height: 4).writePNG(to: path)
            Issue.record("writing into a missing folder succeeded")
        } catch {
            #expect(error.message.hasPrefix(path))
            #expect(error.message.contains("No such file or directory"))
        }
    }

    @Test func corruptPhotoIsReportedNotDrawn() throws {
        let path = Self.repositoryRoot.appendingPathComponent("sample-feed/photos/corrupt.jpg").path
        #expect(throws: PreviewError.self) { try PhotoThumbnail.load(path: path, width: 50, height: 50) }
        do {
            _ = try PhotoThumbnail.load(path: path, width: 50, height: 50)
        } catch {
            #expect(error.message.hasPrefix(path))
        }
    }
}
