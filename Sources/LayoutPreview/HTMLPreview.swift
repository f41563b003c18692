import Foundation
import ImageProbe
import LayoutPages
import TextMeasure
import WaterfallLayout

/// Writes `index.html`: every pin absolutely positioned at its computed frames, so a person can look at the
/// layout in a browser, offline from `file://`.
///
/// Contract for tools that check it: each card carries `data-index`; inside it, the element with
/// `data-role="annotation"` has its height set to the precomputed annotation height and holds the title and
/// caption blocks (each with `data-height`, its precomputed height), styled with the same font files (copied to
/// `fonts/` and loaded with `@font-face`), size, weight and line height the measurement used. The title sits at
/// the annotation's top and the caption at its frame's offset, as a client places them from the page JSON.
///
/// A vertical waterfall without sections, previewed from its first item, can also be shown natively: a toggle
/// turns the container into a CSS `display: grid-lanes` grid with the layout's tracks, gaps, insets, direction and
/// `flow-tolerance`, and the browser places the same cards itself (they keep only their sizes and spans). With
/// `--placement grid-lanes` both views agree.
public struct HTMLPreview {
    private let options: LayoutOptions
    private let grid: WaterfallGrid
    private let outputDirectory: URL
    private var cards = ""
    private var pageMarks = ""
    /// Section headers, footers and decorations (drawn behind the pins).
    private var sectionMarks = ""
    private var sectionKeys: [Int: String] = [:]
    private var contentHeight = 0
    private var itemCount = 0
    private var isFlow = false
    /// Whether a `display: grid-lanes` container can lay these cards out as the engine did: a vertical waterfall
    /// without sections, from its first item (the browser starts every lane at the top).
    private var nativeGridLanesFits = true
    private var horizontal: Bool { grid.axis == .horizontal }

    /// Photos are linked when they are http(s) URLs or local files the layout read (``ResolvedPhoto/localPath``,
    /// let through by the run's file gate); a local reference the layout refused or could not read keeps its slot
    /// only, so opening the page never makes the browser load a file the feed had no right to name.
    public init(options: LayoutOptions, grid: WaterfallGrid, outputDirectory: String) {
        self.options = options
        self.grid = grid
        self.outputDirectory = URL(fileURLWithPath: outputDirectory, isDirectory: true).standardizedFileURL
    }

    /// Adds a page's cards and a mark where the page starts.
    public mutating func add(_ page: LayoutPage) {
        let scale = grid.scale
        func px(_ value: Int) -> String { cssNumber(Double(value) / scale) + "px" }
        isFlow = page.flowGrid != nil
        if isFlow || horizontal || !page.sections.isEmpty || (itemCount == 0 && page.items.first?.index != 0) {
            nativeGridLanesFits = false
        }
        if let first = page.items.first {
            let position = horizontal ? "left:\(px(first.placed.frame.x))" : "top:\(px(first.placed.frame.y))"
            pageMarks += "<div class=\"page-mark\" style=\"\(position)\">page \(page.index + 1)</div>\n"
        }
        func place(_ rect: DeviceRect) -> String {
            "left:\(px(rect.x));top:\(px(rect.y));width:\(px(rect.width));height:\(px(rect.height))"
        }
        for event in page.sections {
            switch event {
            case .start(let index, let key, let header, _):
                sectionKeys[index] = key
                if let header {
                    sectionMarks +=
                        "<div class=\"section-header\" data-section=\"\(index)\" style=\"\(place(header))\">"
                    sectionMarks += "\(escape(key))</div>\n"
                }
            case .end(let frames):
                if let decoration = frames.decoration {
                    sectionMarks +=
                        "<div class=\"decoration\" data-section=\"\(frames.index)\" style=\"\(place(decoration))\"></div>\n"
                }
                if let footer = frames.footer {
                    sectionMarks +=
                        "<div class=\"section-footer\" data-section=\"\(frames.index)\" style=\"\(place(footer))\">"
                    sectionMarks +=
                        "end of \(escape(sectionKeys[frames.index] ?? "section \(frames.index + 1)"))</div>\n"
                }
            }
        }
        for item in page.items {
            if item.section != nil { nativeGridLanesFits = false }
            let frame = item.placed.frame
            func box(_ rect: DeviceRect) -> String {
                "left:\(px(rect.x - frame.x));top:\(px(rect.y - frame.y));width:\(px(rect.width));height:\(px(rect.height))"
            }
            cards +=
                "<article class=\"pin\" data-index=\"\(item.index)\" style=\"left:\(px(frame.x));top:\(px(frame.y));"
            cards += "width:\(px(frame.width));height:\(px(frame.height))"
            // Only the native grid-lanes view reads the span; positioned cards ignore it.
            if item.placed.columnSpan > 1 { cards += ";grid-column:span \(item.placed.columnSpan)" }
            cards += "\">"
            // The slot shows the placeholder colour until the photo arrives, as a client would paint it.
            let paint = item.photo.placeholder.map { ";background:\($0.averageColor.hexString)" } ?? ""
            cards += "<div class=\"slot\" style=\"\(box(item.placed.photoSlot))\(paint)\"></div>"
            if let source = photoSource(item.photo) {
                cards +=
                    "<img class=\"photo\" alt=\"\" src=\"\(escape(source))\" style=\"\(box(item.placed.photoFrame))\">"
            }
            let annotation = item.placed.annotationFrame
            cards += "<div class=\"annotation\" data-role=\"annotation\" style=\"\(box(annotation))\">"
            for (role, block) in [("title", item.title), ("text", item.text)] {
                guard let block else { continue }
                // data-height: the block's precomputed height, for tools that check the browser agrees.
                cards += "<div class=\"\(role)\" data-height=\"\(cssNumber(Double(block.frame.height) / scale))\" "
                cards += "style=\"top:\(px(block.frame.y - annotation.y))\">\(escape(block.text))</div>"
            }
            cards += "</div></article>\n"
            itemCount += 1
        }
        contentHeight = page.contentHeight
    }

    /// What an `<img>` loads: an http(s) URL as it is, a local photo the layout read relative to the output folder;
    /// `nil` for anything else.
    private func photoSource(_ photo: ResolvedPhoto) -> String? {
        guard let url = photo.url else { return nil }
        if ImageProber.isRemote(url) { return url }
        guard let path = photo.localPath else { return nil }
        let file = URL(fileURLWithPath: path)
        return relativePath(from: outputDirectory, to: file.deletingLastPathComponent()) + file.lastPathComponent
    }

    /// Writes `index.html` into the output folder.
    ///
    /// - Throws: `LayoutError.outputFailed` naming the file.
    public func write(title: String) throws(LayoutError) {
        let annotation = options.annotation
        let fonts = try copyFonts()
        let scale = grid.scale
        // Lanes to show with the frames: columns, rows on the horizontal axis, none for flow rows.
        let columnGuides = (isFlow ? [] : grid.columnX).map { position in
            let start = cssNumber(Double(position) / scale)
            let length = cssNumber(Double(grid.columnWidth) / scale)
            return horizontal
                ? "<div class=\"column row\" style=\"top:\(start)px;height:\(length)px\"></div>"
                : "<div class=\"column\" style=\"left:\(start)px;width:\(length)px\"></div>"
        }.joined()
        // The scroll axis is the width on the horizontal axis.
        let size =
            horizontal
            ? (width: Double(contentHeight), height: Double(grid.containerHeight ?? 0))
            : (width: Double(grid.containerWidth), height: Double(contentHeight))
        let lanes =
            isFlow
            ? "flow rows"
            : "\(grid.columnCount) \(horizontal ? "rows" : "columns") of \(cssNumber(Double(grid.columnWidth) / scale)) px"
        let html = """
            <!doctype html>
            <html lang="und"><head><meta charset="utf-8">
            <title>\(escape(title)) — feedlayout preview</title>
            <style>
            \(fonts.faces)
            body { margin: 0; background: #eceff1; font-family: sans-serif; }
            header { padding: 8px 16px; font-size: 13px; color: #37474f; }
            #feed { position: relative; margin: 0 auto; background: #fff; width: \(cssNumber(size.width / scale))px; height: \(cssNumber(size.height / scale))px; }
            .pin { position: absolute; box-sizing: border-box; background: #fafafa; }
            .slot { position: absolute; background: #cfd8dc; }
            .photo { position: absolute; display: block; }
            .annotation { position: absolute; overflow: hidden; }
            .title, .text { position: absolute; left: 0; right: 0; margin: 0; white-space: normal; overflow-wrap: break-word; display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; }
            .title { \(fontCSS(annotation.title, family: fonts.titleFamily)) \(clampCSS(annotation.titleLines)) color: #212121; }
            .text { \(fontCSS(annotation.text, family: fonts.textFamily)) \(clampCSS(annotation.textLines)) color: #546e7a; }
            .page-mark { position: absolute; left: 0; right: 0; border-top: 1px dashed #e53935; font: 10px sans-serif; color: #e53935; pointer-events: none; z-index: 2; }
            \(horizontal ? ".page-mark { left: auto; right: auto; top: 0; bottom: 0; border-top: none; border-left: 1px dashed #e53935; }" : "")
            .column { position: absolute; top: 0; bottom: 0; background: rgba(76,175,80,.12); display: none; pointer-events: none; z-index: 1; }
            .column.row { left: 0; right: 0; }
            .section-header, .section-footer { position: absolute; box-sizing: border-box; padding: 0 8px; display: flex; align-items: center; overflow: hidden; font: 600 14px sans-serif; color: #37474f; background: #eceff1; }
            .section-footer { font-weight: 400; font-size: 11px; color: #78909c; background: none; }
            .decoration { position: absolute; background: #f3f6f8; border-radius: 6px; }
            body.frames .pin { outline: 1px solid rgba(33,150,243,.8); }
            body.frames .slot { outline: 1px dashed rgba(156,39,176,.8); }
            body.frames .annotation { background: rgba(255,193,7,.25); }
            body.frames .column { display: block; }
            \(nativeGridLanesFits ? nativeGridLanesCSS() : "")
            </style></head>
            <body>
            <header>\(escape(title)): \(itemCount) pins, \(lanes) —
            <label><input type="checkbox" onchange="document.body.classList.toggle('frames', this.checked)"> show frames, columns and gaps</label>\(nativeGridLanesFits ? Self.nativeGridLanesToggle : "")</header>
            <div id="feed">
            \(sectionMarks)\(columnGuides)\(pageMarks)\(cards)</div>
            </body></html>

            """
        let file = outputDirectory.appendingPathComponent("index.html")
        do {
            try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            try Data(html.utf8).write(to: file, options: .atomic)
        } catch {
            throw LayoutError(.outputFailed, "\(file.path): cannot write the preview: \(error.localizedDescription)")
        }
    }

    /// The native view: `#feed` as a `display: grid-lanes` container with the layout's grid, the cards in its flow.
    /// Everything else in `#feed` is placed from computed positions, so it is hidden there.
    private func nativeGridLanesCSS() -> String {
        let scale = grid.scale
        func px(_ value: Int) -> String { cssNumber(Double(value) / scale) + "px" }
        // The first section's insets narrow the lanes and lower their start even in a feed without sections.
        let (insets, section) = (grid.insets, grid.sectionInsets)
        let direction = grid.direction == .rightToLeft ? "rtl" : "ltr"
        return """
            #feed.native { display: grid-lanes; box-sizing: border-box; height: auto; direction: \(direction); \
            padding: \(px(insets.top + section.top)) \(px(insets.right + section.right)) \
            \(px(insets.bottom + section.bottom)) \(px(insets.left + section.left)); \
            grid-template-columns: repeat(\(grid.columnCount), \(px(grid.columnWidth))); \
            column-gap: \(px(grid.columnGap)); row-gap: \(px(grid.rowGap)); \
            flow-tolerance: \(cssNumber(options.waterfall.orderTolerance))px; }
            #feed.native > .pin { position: relative; left: auto !important; top: auto !important; direction: ltr; }
            #feed.native > :not(.pin) { display: none; }
            """
    }

    /// The native view's switch, disabled where the browser has no `display: grid-lanes`.
    private static let nativeGridLanesToggle = """
         —
        <label title="The browser places the pins itself; the same places as the frames with --placement grid-lanes"><input type="checkbox" id="native-grid-lanes" onchange="document.getElementById('feed').classList.toggle('native', this.checked)"> native grid-lanes</label>
        <script>if (!CSS.supports('display', 'grid-lanes')) { const box = document.getElementById('native-grid-lanes'); box.disabled = true; box.parentElement.title = 'needs display: grid-lanes (Safari 26.4, or Chromium with experimental web platform features)'; }</script>
        """

    /// Copies every font file of the title's and the caption's font lists into `fonts/` and declares each with
    /// `@font-face`, in list order, so the browser walks the same fonts the measurement did, offline, wherever the
    /// folder is moved. A face inside a collection other than the first is written out as a font file of its own:
    /// `@font-face` can only load a collection's first face.
    private func copyFonts() throws(LayoutError) -> (faces: String, titleFamily: String, textFamily: String) {
        let folder = outputDirectory.appendingPathComponent("fonts", isDirectory: true)
        let fonts = try LayoutFonts(options.annotation)
        var faces = ""
        var families: [String] = []
        var written: Set<String> = []
        for (role, style, list) in [
            ("Title", options.annotation.title, fonts.title), ("Text", options.annotation.text, fonts.caption),
        ] {
            var names: [String] = []
            for (position, face) in list.enumerated() {
                let name =
                    face.faceIndex == 0
                    ? face.fileName : "\(face.fileName.split(separator: ".").first ?? "font")-face\(face.faceIndex).otf"
                if written.insert(name).inserted {
                    try copy(face, to: folder.appendingPathComponent(name))
                }
                // One family per list entry, declared at the block's weight, so the browser never synthesises bold
                // for a fallback face that has no bold of its own (the measurement does not either).
                let family = "FeedLayout \(role) \(position)"
                faces +=
                    "@font-face { font-family: '\(family)'; font-weight: \(style.weight); src: url('fonts/\(escape(name))'); }\n"
                names.append("'\(family)'")
            }
            families.append(names.joined(separator: ", "))
        }
        return (faces, families[0], families[1])
    }

    private func copy(_ face: FontFace, to target: URL) throws(LayoutError) {
        do {
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            if FileManager.default.fileExists(atPath: target.path) { return }
            if face.faceIndex == 0 {
                try FileManager.default.copyItem(at: URL(fileURLWithPath: face.path), to: target)
            } else {
                try Data(face.standaloneFontFile()).write(to: target)
            }
        } catch let error as TextMeasureError {
            throw LayoutError(.outputFailed, "\(target.path): cannot write the font: \(error.message)")
        } catch {
            throw LayoutError(
                .outputFailed, "\(target.path): cannot copy the font \(face.path): \(error.localizedDescription)")
        }
    }

    private func fontCSS(_ style: TextStyle, family: String) -> String {
        "font: \(style.cssFont(families: family));"
    }

    private func clampCSS(_ lines: Int?) -> String {
        guard let lines else { return "" }
        return "-webkit-line-clamp: \(lines);"
    }
}

private func escape(_ text: String) -> String {
    var escaped = ""
    escaped.reserveCapacity(text.utf8.count)
    for character in text {
        switch character {
        case "&": escaped += "&amp;"
        case "<": escaped += "&lt;"
        case ">": escaped += "&gt;"
        case "\"": escaped += "&quot;"
        default: escaped.append(character)
        }
    }
    return escaped
}

/// The path from one folder to another, with a trailing slash (`../sample-feed/`), so a page in the first
/// can link to files in the second.
private func relativePath(from source: URL, to target: URL) -> String {
    let from = source.pathComponents
    let to = target.pathComponents
    var common = 0
    while common < min(from.count, to.count), from[common] == to[common] { common += 1 }
    let ups = Array(repeating: "..", count: from.count - common)
    let parts = ups + to[common...]
    return parts.isEmpty ? "" : parts.joined(separator: "/") + "/"
}
