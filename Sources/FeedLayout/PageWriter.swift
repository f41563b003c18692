import Foundation
import WaterfallLayout

/// Writes pages as they complete: `DIR/page-0001.json` … or NDJSON lines on standard output.
///
/// With breakpoints, each layout's pages go to a folder of its own named after its width (`DIR/375/…`); on
/// standard output every page says which layout it belongs to in its `layout` object. A folder only ever holds
/// one whole run's pages: they are staged beside it and swapped in by ``finish()`` (see `OutputFolder`).
public final class PageWriter {
    /// The output folder; nil for standard output.
    private let folder: OutputFolder?
    /// Each layout's subfolder: "" for one layout, the breakpoint's width otherwise.
    private let subfolders: [String]
    private var json: JSONWriter
    /// Written into every page when one run lays out several feeds.
    private let feed: String?
    /// Whether each layout's staging folder exists yet.
    private var preparedLayouts: [Bool]

    /// - Parameters:
    ///   - directory: The folder for page files, created if needed; `nil` for NDJSON on standard output.
    ///   - pretty: Indent page files (standard output always gets one page per line).
    ///   - breakpoints: The run's breakpoints; each gets a subfolder. Empty for one layout.
    ///   - feed: The feed's name, written into every page (batch runs), or `nil`.
    /// - Throws: `LayoutError.outputFailed` naming the folder when another run is writing it or it cannot be
    ///   prepared.
    public init(directory: String?, pretty: Bool, breakpoints: [Breakpoint] = [], feed: String? = nil)
        throws(LayoutError)
    {
        self.feed = feed
        json = JSONWriter(indentWidth: pretty && directory != nil ? 2 : 0, reservingCapacity: 1 << 16)
        folder = try directory.map { path throws(LayoutError) in try OutputFolder(path) }
        subfolders = breakpoints.isEmpty ? [""] : breakpoints.map(Self.folderName(for:))
        preparedLayouts = Array(repeating: false, count: subfolders.count)
    }

    /// The folder of a breakpoint's pages: its width (`375`, `767.5`).
    public static func folderName(for breakpoint: Breakpoint) -> String { cssNumber(breakpoint.width) }

    /// The file name of a page: numbered from 1, four digits, so that names sort in page order.
    public static func fileName(forPageIndex index: Int) -> String {
        let number = String(index + 1)
        return "page-" + String(repeating: "0", count: max(0, 4 - number.count)) + number + ".json"
    }

    /// Whether a file name is a page's (`page-0001.json`).
    static func isPageFileName(_ name: String) -> Bool { pageNumber(ofFileName: name) != nil }

    /// The number in a page file's name (1 for `page-0001.json`), or nil for any other name.
    static func pageNumber(ofFileName name: String) -> Int? {
        guard name.hasPrefix("page-"), name.hasSuffix(".json") else { return nil }
        return Int(name.dropFirst(5).dropLast(5))
    }

    /// Writes one page into the run's staging folder (the whole folder appears at ``finish()``), or to standard output.
    public func write(_ page: LayoutPage) throws(LayoutError) {
        Records.write(page, feed: feed, into: &json)
        json.appendRaw("\n")
        // The page goes out from the writer's own buffer, which the next page reuses.
        defer { json.removeAll() }
        guard let folder else {
            do {
                try json.withUnsafeBytes { bytes in try Self.writeAll(bytes, to: STDOUT_FILENO) }
            } catch {
                throw LayoutError(.outputFailed, "standard output: cannot write a page: \(OutputFolder.reason(error))")
            }
            return
        }
        let subfolder = subfolders[page.layoutIndex]
        if !preparedLayouts[page.layoutIndex] {
            try folder.prepareLayout(subfolder, firstPageIndex: page.index)
            preparedLayouts[page.layoutIndex] = true
        }
        let directory = subfolder.isEmpty ? folder.staging : folder.staging + "/" + subfolder
        let path = directory + "/" + Self.fileName(forPageIndex: page.index)
        do {
            try json.withUnsafeBytes { bytes in try Self.writeFile(bytes, to: path) }
        } catch {
            let shown = (subfolder.isEmpty ? folder.target : folder.target + "/" + subfolder) + "/"
                + Self.fileName(forPageIndex: page.index)
            throw LayoutError(.outputFailed, "\(shown): cannot write the page: \(OutputFolder.reason(error))")
        }
    }

    /// Writes a page file into the run's staging folder. No temporary file and rename: nobody reads the staging
    /// folder before the run swaps it in whole, and a killed run's folder is discarded. No fsync either: a page is
    /// cheap to write again, and syncing each of thousands of pages costs more than laying them out.
    static func writeFile(_ bytes: UnsafeRawBufferPointer, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        do {
            try writeAll(bytes, to: descriptor)
        } catch {
            close(descriptor)
            throw error
        }
        guard close(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Writes every byte to a descriptor, in as few calls as the kernel allows (one for a page, normally).
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) throws {
        var written = 0
        while written < bytes.count {
            let result = Glibc.write(descriptor, bytes.baseAddress! + written, bytes.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
            written += result
        }
    }

    /// Puts the run's pages in place of the folder's previous contents, in one step. A run that wrote no page
    /// leaves the folder as it was.
    public func finish() throws(LayoutError) {
        try folder?.commit()
    }
}
