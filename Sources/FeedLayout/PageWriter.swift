import Foundation
import WaterfallLayout

/// Writes pages as they complete: `DIR/page-0001.json` … or NDJSON lines on standard output.
public final class PageWriter {
    private let directory: URL?
    private let grid: WaterfallGrid
    private var json: JSONWriter
    private var lastPageNumber = 0
    private var reachedEnd = false

    /// - Parameters:
    ///   - directory: The folder for page files, created if needed; `nil` for NDJSON on standard output.
    ///   - pretty: Indent page files (standard output always gets one page per line).
    ///   - grid: The resolved grid, written into every page.
    /// - Throws: `LayoutError.outputFailed` naming the folder when it cannot be created.
    public init(directory: String?, pretty: Bool, grid: WaterfallGrid) throws(LayoutError) {
        self.grid = grid
        json = JSONWriter(indentWidth: pretty && directory != nil ? 2 : 0, reservingCapacity: 1 << 16)
        guard let directory else {
            self.directory = nil
            return
        }
        let url = URL(fileURLWithPath: directory, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            throw LayoutError(.outputFailed, "--out \(directory): cannot create the folder: \(error.localizedDescription)")
        }
        self.directory = url
    }

    /// The file name of a page: numbered from 1, four digits, so that names sort in page order.
    public static func fileName(forPageIndex index: Int) -> String {
        let number = String(index + 1)
        return "page-" + String(repeating: "0", count: max(0, 4 - number.count)) + number + ".json"
    }

    /// Writes one page; a page file appears whole or not at all (temporary file, then rename).
    public func write(_ page: LayoutPage) throws(LayoutError) {
        Records.write(page, grid: grid, into: &json)
        json.appendRaw("\n")
        let bytes = json.takeBytes()
        lastPageNumber = page.index + 1
        reachedEnd = page.cursor == nil
        guard let directory else {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        let file = directory.appendingPathComponent(Self.fileName(forPageIndex: page.index))
        do {
            try Data(bytes).write(to: file, options: .atomic)
        } catch {
            throw LayoutError(.outputFailed, "\(file.path): cannot write the page: \(error.localizedDescription)")
        }
    }

    /// After a run that reached the end of the feed, removes page files a longer earlier run left behind, so the
    /// folder holds exactly this layout's pages.
    public func finish() throws(LayoutError) {
        guard let directory, reachedEnd else { return }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix("page-") && name.hasSuffix(".json") {
            guard let number = Int(name.dropFirst(5).dropLast(5)), number > lastPageNumber else { continue }
            do {
                try FileManager.default.removeItem(at: directory.appendingPathComponent(name))
            } catch {
                throw LayoutError(.outputFailed, "\(name): cannot remove a stale page: \(error.localizedDescription)")
            }
        }
    }
}

extension LayoutSummary {
    /// The one-line summary printed on standard error after a run.
    public func line(grid: WaterfallGrid, destination: String?, elapsed: Duration) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var text = "laid out \(items) items in \(pages) page\(pages == 1 ? "" : "s")"
        text += " (\(grid.columnCount) columns of \(cssNumber(Double(grid.columnWidth) / grid.scale)) px)"
        text += ": \(imagesProbed) images probed, \(imageFailures) failed"
        if !warningsByCode.isEmpty {
            text += "; warnings: " + warningsByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        }
        text += "; " + String(Int((seconds * 1000).rounded())) + " ms"
        if let destination { text += " → \(destination)" }
        return text
    }
}
