import Foundation
import TextMeasure
import WaterfallLayout

/// Writes `index.html`: every pin absolutely positioned at its computed frames, so a person can look at the
/// layout in a browser, offline from `file://`.
///
/// Contract for tools that check it: each card carries `data-index`; inside it, the element with
/// `data-role="annotation"` has its height set to the precomputed annotation height and holds the title and
/// caption, styled with the same font, size, weight and line height the measurement used.
public struct HTMLPreview {
    private let options: LayoutOptions
    private let grid: WaterfallGrid
    private let outputDirectory: URL
    /// Where relative image references point, as seen from the output folder.
    private let imagePrefix: String
    private var cards = ""
    private var pageMarks = ""
    private var contentHeight = 0
    private var itemCount = 0

    public init(options: LayoutOptions, grid: WaterfallGrid, feedPath: String, outputDirectory: String) {
        self.options = options
        self.grid = grid
        self.outputDirectory = URL(fileURLWithPath: outputDirectory, isDirectory: true).standardizedFileURL
        let feedDirectory = URL(fileURLWithPath: feedPath).standardizedFileURL.deletingLastPathComponent()
        imagePrefix = relativePath(from: self.outputDirectory, to: feedDirectory)
    }

    /// Adds a page's cards and a mark where the page starts.
    public mutating func add(_ page: LayoutPage) {
        let scale = grid.scale
        func px(_ value: Int) -> String { cssNumber(Double(value) / scale) + "px" }
        if let first = page.items.first {
            pageMarks += "<div class=\"page-mark\" style=\"top:\(px(first.placed.frame.y))\">page \(page.index + 1)</div>\n"
        }
        for item in page.items {
            let frame = item.placed.frame
            func box(_ rect: DeviceRect) -> String {
                "left:\(px(rect.x - frame.x));top:\(px(rect.y - frame.y));width:\(px(rect.width));height:\(px(rect.height))"
            }
            cards += "<article class=\"pin\" data-index=\"\(item.index)\" style=\"left:\(px(frame.x));top:\(px(frame.y));"
            cards += "width:\(px(frame.width));height:\(px(frame.height))\">"
            cards += "<div class=\"slot\" style=\"\(box(item.placed.photoSlot))\"></div>"
            if let url = item.photo.url {
                let source = url.contains("://") ? url : imagePrefix + url
                cards += "<img class=\"photo\" alt=\"\" src=\"\(escape(source))\" style=\"\(box(item.placed.photoFrame))\">"
            }
            let annotation = item.placed.annotationFrame
            cards += "<div class=\"annotation\" data-role=\"annotation\" style=\"\(box(annotation))\">"
            if let title = item.title {
                cards += "<div class=\"title\">\(escape(title.text))</div>"
            }
            if let text = item.text {
                let gap = item.title == nil ? "" : " style=\"margin-top:\(cssNumber(options.annotation.titleTextGap))px\""
                cards += "<div class=\"text\"\(gap)>\(escape(text.text))</div>"
            }
            cards += "</div></article>\n"
            itemCount += 1
        }
        contentHeight = page.contentHeight
    }

    /// Writes `index.html` into the output folder.
    ///
    /// - Throws: `LayoutError.outputFailed` naming the file.
    public func write(title: String) throws(LayoutError) {
        let annotation = options.annotation
        let html = """
            <!doctype html>
            <html lang="und"><head><meta charset="utf-8">
            <title>\(escape(title)) — feedlayout preview</title>
            <style>
            body { margin: 0; background: #eceff1; font-family: sans-serif; }
            header { padding: 8px 16px; font-size: 13px; color: #37474f; }
            #feed { position: relative; margin: 0 auto; background: #fff; width: \(cssNumber(Double(grid.containerWidth) / grid.scale))px; height: \(cssNumber(Double(contentHeight) / grid.scale))px; }
            .pin { position: absolute; box-sizing: border-box; background: #fafafa; }
            .slot { position: absolute; background: #cfd8dc; }
            .photo { position: absolute; display: block; }
            .annotation { position: absolute; overflow: hidden; }
            .title, .text { white-space: normal; overflow-wrap: break-word; display: -webkit-box; -webkit-box-orient: vertical; overflow: hidden; }
            .title { \(fontCSS(annotation.title)) \(clampCSS(annotation.titleLines)) color: #212121; }
            .text { \(fontCSS(annotation.text)) \(clampCSS(annotation.textLines)) color: #546e7a; }
            .page-mark { position: absolute; left: 0; right: 0; border-top: 1px dashed #e53935; font: 10px sans-serif; color: #e53935; pointer-events: none; z-index: 1; }
            body.frames .pin { outline: 1px solid rgba(33,150,243,.8); }
            body.frames .annotation { background: rgba(255,193,7,.25); }
            </style></head>
            <body>
            <header>\(escape(title)): \(itemCount) pins, \(grid.columnCount) columns —
            <label><input type="checkbox" onchange="document.body.classList.toggle('frames', this.checked)"> show frames</label></header>
            <div id="feed">
            \(pageMarks)\(cards)</div>
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

    private func fontCSS(_ style: TextStyle) -> String {
        let lineHeight =
            switch style.lineHeight {
            case .normal: "normal"
            case .pixels(let pixels): cssNumber(pixels) + "px"
            case .multiple(let multiple): cssNumber(multiple)
            }
        let family = style.font.contains("/") ? "'\(URL(fileURLWithPath: style.font).deletingPathExtension().lastPathComponent)'" : "'\(style.font)'"
        return "font: \(style.weight) \(cssNumber(style.size))px/\(lineHeight) \(family);"
    }

    private func clampCSS(_ lines: Int?) -> String {
        guard let lines else { return "" }
        return "-webkit-line-clamp: \(lines);"
    }
}

/// A length as CSS writes it: whole numbers without a fraction.
func cssNumber(_ value: Double) -> String {
    value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
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
