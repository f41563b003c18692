import FeedIngest
import FeedLayout
import Foundation
import ImageProbe
import LocalFileAccess
import Synchronization
import TextMeasure
import WaterfallLayout

/// How much of a layout `preview.png` shows.
public struct PNGPreviewOptions: Sendable, Equatable {
    /// The canvas is at most this many device pixels tall.
    public var maximumHeight: Int
    /// At most this many pages are drawn.
    public var maximumPages: Int

    /// The most pixels the canvas holds (3 bytes each, 192 MiB): a layout so wide that `maximumHeight` rows would
    /// take more shows fewer rows.
    public static let maximumCanvasPixels = 1 << 26

    public init(maximumHeight: Int = 4000, maximumPages: Int = 10) {
        self.maximumHeight = maximumHeight
        self.maximumPages = maximumPages
    }
}

/// What one rendering drew.
public struct PNGPreviewSummary: Sendable, Equatable {
    public var width = 0
    public var height = 0
    public var pages = 0
    public var items = 0
    /// Photos decoded and drawn.
    public var photosDrawn = 0
    /// Local photos that could not be read or decoded, or that the layout did not read (refused, missing, not an
    /// image), each as its reference and the reason: their slots carry a cross.
    public var photoFailures: [String] = []
    /// Remote photos, not fetched: their slots show the placeholder only.
    public var remotePhotos = 0
}

/// Renders the first pages of a layout to `preview.png`: cells at their frames, photos decoded and scaled
/// into their photo frames, titles and captions rasterised with the fonts and line breaks measurement used,
/// page boundaries marked. Collects pages as the pipeline hands them over (only those that fit the limits),
/// draws on ``write()``.
public struct PNGPreview {
    private let options: LayoutOptions
    private let grid: WaterfallGrid
    private let limits: PNGPreviewOptions
    /// Local photos are opened only through the run's gate, and only from the path the layout read.
    private let fileGate: LocalFileGate
    private let outputDirectory: URL
    private var items: [LaidOutItem] = []
    /// Section headers, footers and decorations, moved like the items.
    private var sectionBands: [(rect: DeviceRect, isDecoration: Bool)] = []
    /// The top of each collected page's first item, and its number.
    private var pageMarks: [(y: Int, number: Int)] = []
    private var contentHeight = 0
    private var isFull = false
    /// The layout's position on the scroll axis that is the canvas's top (left edge on the horizontal axis).
    private var origin = 0
    private var horizontal: Bool { grid.axis == .horizontal }

    /// A frame's position on the scroll axis.
    private func scrollPosition(_ rect: DeviceRect) -> Int { horizontal ? rect.x : rect.y }

    /// The colours the HTML preview uses, so the two look alike.
    static let cardColor = RGBColor(hex: 0xFAFAFA)
    static let slotColor = RGBColor(hex: 0xCFD8DC)
    static let crossColor = RGBColor(hex: 0x78909C)
    static let titleColor = RGBColor(hex: 0x212121)
    static let captionColor = RGBColor(hex: 0x546E7A)
    static let pageMarkColor = RGBColor(hex: 0xE53935)
    static let decorationColor = RGBColor(hex: 0xF3F6F8)
    static let sectionBandColor = RGBColor(hex: 0xECEFF1)

    /// - Parameters:
    ///   - options: The layout's options (fonts, styles, scale).
    ///   - grid: The resolved grid.
    ///   - fileGate: The gate the layout read the feed's images through (``LayoutPipeline/fileGate(forFeed:)``):
    ///     photos are read again through it, from ``ResolvedPhoto/localPath``.
    ///   - outputDirectory: Where `preview.png` goes.
    ///   - limits: How many pages and pixels to draw.
    public init(
        options: LayoutOptions, grid: WaterfallGrid, fileGate: LocalFileGate, outputDirectory: String,
        limits: PNGPreviewOptions = PNGPreviewOptions()
    ) {
        self.options = options
        self.grid = grid
        self.limits = limits
        self.fileGate = fileGate
        self.outputDirectory = URL(fileURLWithPath: outputDirectory, isDirectory: true).standardizedFileURL
    }

    /// The file ``write()`` writes.
    public var outputPath: String { outputDirectory.appendingPathComponent("preview.png").path }

    /// Keeps a page's items when the page starts within the limits.
    ///
    /// A run resumed from a cursor starts deep into the layout: the picture then starts at its first page
    /// (less the top inset), not at the top of the whole layout.
    public mutating func add(_ page: LayoutPage) {
        guard !isFull, let first = page.items.first else { return }
        if pageMarks.isEmpty {
            origin = max(0, (page.items.map { scrollPosition($0.placed.frame) }.min() ?? 0) - grid.scrollStartInset)
        }
        let top = scrollPosition(first.placed.frame) - origin
        guard pageMarks.count < limits.maximumPages, top < limits.maximumHeight else {
            isFull = true
            return
        }
        pageMarks.append((top, page.index + 1))
        let (dx, dy) = horizontal ? (origin, 0) : (0, origin)
        for item in page.items where scrollPosition(item.placed.frame) - origin < limits.maximumHeight {
            items.append(item.moved(dx: dx, dy: dy))
        }
        for event in page.sections {
            switch event {
            case .start(_, _, let header, _):
                if let header { sectionBands.append((header.moved(dx: dx, dy: dy), false)) }
            case .end(let frames):
                if let decoration = frames.decoration { sectionBands.append((decoration.moved(dx: dx, dy: dy), true)) }
                if let footer = frames.footer { sectionBands.append((footer.moved(dx: dx, dy: dy), false)) }
            }
        }
        contentHeight = page.contentHeight - origin
    }

    /// Draws the collected pages and writes `preview.png` (atomically).
    ///
    /// - Returns: What was drawn.
    /// - Throws: `LayoutError.outputFailed` naming the file, or `.fontUnavailable` when a font cannot be
    ///   loaded.
    @discardableResult
    public func write() throws(LayoutError) -> PNGPreviewSummary {
        var summary = PNGPreviewSummary()
        let canvas = try render(summary: &summary)
        do {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        } catch {
            throw LayoutError(
                .outputFailed, "\(outputDirectory.path): cannot create the folder: \(error.localizedDescription)")
        }
        do {
            try canvas.writePNG(to: outputPath)
        } catch {
            throw LayoutError(.outputFailed, error.message)
        }
        return summary
    }

    /// Draws the collected pages.
    public func render() throws(LayoutError) -> Canvas {
        var summary = PNGPreviewSummary()
        return try render(summary: &summary)
    }

    private func render(summary: inout PNGPreviewSummary) throws(LayoutError) -> Canvas {
        // `maximumHeight` limits the scroll axis: the width on the horizontal axis.
        let across = horizontal ? grid.containerHeight ?? grid.containerWidth : grid.containerWidth
        let extent = max(
            1, min(limits.maximumHeight, contentHeight, PNGPreviewOptions.maximumCanvasPixels / max(1, across)))
        var canvas = horizontal ? Canvas(width: extent, height: across) : Canvas(width: across, height: extent)
        summary.width = canvas.width
        summary.height = canvas.height
        summary.pages = pageMarks.count
        summary.items = items.count

        let photos = decodePhotos()
        let text = try TextPainter(options: options, scale: grid.scale)
        // Decorations behind everything, then header and footer bands, then the pins.
        for band in sectionBands.filter(\.isDecoration) + sectionBands.filter({ !$0.isDecoration }) {
            let rect = band.rect
            canvas.fill(
                x: rect.x, y: rect.y, width: rect.width, height: rect.height,
                color: band.isDecoration ? Self.decorationColor : Self.sectionBandColor)
        }
        for (position, item) in items.enumerated() {
            let placed = item.placed
            canvas.fill(
                x: placed.frame.x, y: placed.frame.y, width: placed.frame.width, height: placed.frame.height,
                color: Self.cardColor)
            let slot = placed.photoSlot
            canvas.fill(x: slot.x, y: slot.y, width: slot.width, height: slot.height, color: slotColor(item.photo))
            let frame = placed.photoFrame
            switch photos[position] {
            case .drawn(let thumbnail):
                canvas.composite(
                    premultiplied: thumbnail.pixels, imageWidth: thumbnail.width, imageHeight: thumbnail.height,
                    x: frame.x, y: frame.y, clip: clipRect(frame))
                summary.photosDrawn += 1
            case .failed(let reason):
                drawCross(in: frame, on: &canvas)
                summary.photoFailures.append(reason)
            case .remote:
                summary.remotePhotos += 1
            case .none:
                break
            }
            text.draw(item, on: &canvas)
        }
        for mark in pageMarks {
            if horizontal {
                let thickness = max(1, Int(grid.scale.rounded()))
                canvas.fill(
                    x: mark.y - thickness, y: 0, width: thickness, height: canvas.height, color: Self.pageMarkColor)
            } else {
                text.drawPageMark(number: mark.number, y: mark.y, on: &canvas)
            }
        }
        return canvas
    }

    private enum PhotoOutcome: Sendable {
        case drawn(PhotoThumbnail)
        case failed(String)
        case remote
        case none
    }

    /// What drawing one photo takes.
    private enum PhotoJob {
        /// No image, or a frame with no area.
        case none
        /// An http(s) photo: not fetched.
        case remote
        /// A local file the layout read: read again through the gate and decoded.
        case local(path: String, reference: String)
        /// A local reference the layout did not read, and why.
        case unread(String)
    }

    /// Decodes every photo at its frame size, two at a time or as many as there are cores.
    private func decodePhotos() -> [PhotoOutcome] {
        let jobs: [(job: PhotoJob, frame: DeviceRect)] = items.map { item in
            let frame = item.placed.photoFrame
            guard let url = item.photo.url else { return (.none, frame) }
            if ImageProber.isRemote(url) { return (.remote, frame) }
            guard frame.width > 0, frame.height > 0 else { return (.none, frame) }
            guard let path = item.photo.localPath else { return (.unread(Self.unreadReason(url, item)), frame) }
            return (.local(path: path, reference: url), frame)
        }
        let fileGate = fileGate
        let outcomes = Mutex([PhotoOutcome](repeating: .none, count: jobs.count))
        DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
            let (job, frame) = jobs[index]
            let outcome: PhotoOutcome
            switch job {
            case .none: outcome = .none
            case .remote: outcome = .remote
            case .unread(let reason): outcome = .failed(reason)
            case .local(let path, let reference):
                do throws(PreviewError) {
                    outcome = .drawn(
                        try PhotoThumbnail.load(
                            path: path, source: reference, gate: fileGate, width: frame.width, height: frame.height))
                } catch {
                    outcome = .failed(error.message)
                }
            }
            outcomes.withLock { $0[index] = outcome }
        }
        return outcomes.withLock { $0 }
    }

    /// Why the layout did not read a local photo: its warning about the reference (the reader's refusal or the
    /// probe's failure, both without the file's bytes), else a plain statement.
    private static func unreadReason(_ reference: String, _ item: LaidOutItem) -> String {
        item.warnings.first { $0.message.contains(reference) }?.message
            ?? "\(reference): not read by the layout (a local file named by a feed on standard input or from a URL)"
    }

    private func slotColor(_ photo: ResolvedPhoto) -> RGBColor {
        guard let color = photo.placeholder?.averageColor else { return Self.slotColor }
        // A translucent placeholder is painted over the card, as a browser would.
        let alpha = Int(color.alpha)
        func over(_ channel: UInt8, _ under: UInt8) -> UInt8 {
            let mixed: Int = Int(channel) * alpha + Int(under) * (255 - alpha)
            return UInt8((mixed + 127) / 255)
        }
        return RGBColor(
            red: over(color.red, Self.cardColor.red), green: over(color.green, Self.cardColor.green),
            blue: over(color.blue, Self.cardColor.blue))
    }

    /// A small cross in the middle of a photo that could not be drawn.
    private func drawCross(in frame: DeviceRect, on canvas: inout Canvas) {
        let half = min(8 * grid.scale, Double(min(frame.width, frame.height)) / 4)
        guard half >= 1 else { return }
        let centreX = Double(frame.x) + Double(frame.width) / 2
        let centreY = Double(frame.y) + Double(frame.height) / 2
        let thickness = max(1, 1.5 * grid.scale)
        let clip = clipRect(frame)
        canvas.strokeLine(
            from: (centreX - half, centreY - half), to: (centreX + half, centreY + half), thickness: thickness,
            color: Self.crossColor, clip: clip)
        canvas.strokeLine(
            from: (centreX - half, centreY + half), to: (centreX + half, centreY - half), thickness: thickness,
            color: Self.crossColor, clip: clip)
    }
}

extension LaidOutItem {
    /// The item with every frame moved `distance` device pixels up.
    /// The item moved left by `dx` and up by `dy`.
    fileprivate func moved(dx: Int, dy: Int) -> LaidOutItem {
        guard dx != 0 || dy != 0 else { return self }
        func moved(_ rect: DeviceRect) -> DeviceRect { rect.moved(dx: dx, dy: dy) }
        var item = self
        item.placed.frame = moved(placed.frame)
        item.placed.photoSlot = moved(placed.photoSlot)
        item.placed.photoFrame = moved(placed.photoFrame)
        item.placed.annotationFrame = moved(placed.annotationFrame)
        if let frame = title?.frame { item.title?.frame = moved(frame) }
        if let frame = text?.frame { item.text?.frame = moved(frame) }
        return item
    }
}

func clipRect(_ rect: DeviceRect) -> ClipRect {
    ClipRect(x: rect.x, y: rect.y, maxX: rect.maxX, maxY: rect.maxY)
}

/// Rasterises titles, captions and page labels with the measurers' own fonts.
private final class TextPainter {
    private let title: TextMeasurer
    private let caption: TextMeasurer
    private let label: TextMeasurer
    private let scale: Double
    private let rasterizer: GlyphRasterizer

    init(options: LayoutOptions, scale: Double) throws(LayoutError) {
        title = try .annotation(options.annotation.title, role: "title")
        caption = try .annotation(options.annotation.text, role: "caption")
        var labelStyle = options.annotation.text
        (labelStyle.size, labelStyle.lineHeight) = (10, .normal)
        label = try .annotation(labelStyle, role: "caption")
        self.scale = scale
        do {
            rasterizer = try GlyphRasterizer()
        } catch {
            throw LayoutError(.fontUnavailable, error.message)
        }
    }

    /// The title at the top of the annotation, the caption at its bottom, both clipped to it.
    func draw(_ item: LaidOutItem, on canvas: inout Canvas) {
        let clip = clipRect(item.placed.annotationFrame)
        if let text = item.title { draw(text, with: title, color: PNGPreview.titleColor, clip: clip, on: &canvas) }
        if let text = item.text { draw(text, with: caption, color: PNGPreview.captionColor, clip: clip, on: &canvas) }
    }

    private func draw(
        _ text: MeasuredText, with measurer: TextMeasurer, color: RGBColor, clip: ClipRect, on canvas: inout Canvas
    ) {
        for line in measurer.glyphLines(text.measurement) {
            rasterizer.draw(
                line, size: measurer.style.size, scale: scale, x: Double(text.frame.x),
                baseline: Double(text.frame.y) + line.baseline * scale, color: color, into: &canvas, clip: clip)
        }
    }

    /// A red line across the canvas where a page starts, with its number on a tab at the right.
    func drawPageMark(number: Int, y: Int, on canvas: inout Canvas) {
        let thickness = max(1, Int(scale.rounded()))
        canvas.fill(x: 0, y: y - thickness, width: canvas.width, height: thickness, color: PNGPreview.pageMarkColor)
        let measurement = label.measure("page \(number)", width: 1000)
        guard let line = label.glyphLines(measurement).first else { return }
        let padding = 3 * scale
        let tabWidth = Int((line.width * scale + 2 * padding).rounded(.up))
        let tabHeight = Int((line.height * scale).rounded(.up))
        let tabX = canvas.width - tabWidth - Int((4 * scale).rounded())
        let tabY = y - thickness - tabHeight
        canvas.fill(x: tabX, y: tabY, width: tabWidth, height: tabHeight, color: PNGPreview.pageMarkColor)
        rasterizer.draw(
            line, size: label.style.size, scale: scale, x: Double(tabX) + padding,
            baseline: Double(tabY) + line.baseline * scale, color: RGBColor(hex: 0xFFFFFF), into: &canvas,
            clip: ClipRect(x: tabX, y: tabY, maxX: tabX + tabWidth, maxY: tabY + tabHeight))
    }
}

extension DeviceRect {
    /// The rectangle moved left by `dx` and up by `dy`.
    fileprivate func moved(dx: Int, dy: Int) -> DeviceRect {
        DeviceRect(x: x - dx, y: y - dy, width: width, height: height)
    }
}
