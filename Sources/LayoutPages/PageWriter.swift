import Foundation
import WaterfallLayout

/// Writes pages as they complete: `DIR/page-0001.json` … or NDJSON lines on standard output.
///
/// With breakpoints, each layout's pages go to a folder of its own named after its width (`DIR/375/…`); on
/// standard output every page says which layout it belongs to in its `layout` object.
public final class PageWriter {
    /// The folder of each layout (one, or one per breakpoint); empty for standard output.
    private let directories: [URL]
    /// The same folders as paths, so that naming a page file costs no URL work.
    private let directoryPaths: [String]
    private var json: JSONWriter
    private var lastPageNumbers: [Int]
    private var reachedEnds: [Bool]
    /// Written into every page when one run lays out several feeds.
    private let feed: String?

    /// - Parameters:
    ///   - directory: The folder for page files, created if needed; `nil` for NDJSON on standard output.
    ///   - pretty: Indent page files (standard output always gets one page per line).
    ///   - breakpoints: The run's breakpoints; each gets a subfolder. Empty for one layout.
    ///   - feed: The feed's name, written into every page (batch runs), or `nil`.
    /// - Throws: `LayoutError.outputFailed` naming the folder when it cannot be created.
    public init(directory: String?, pretty: Bool, breakpoints: [Breakpoint] = [], feed: String? = nil)
        throws(LayoutError)
    {
        self.feed = feed
        json = JSONWriter(indentWidth: pretty && directory != nil ? 2 : 0, reservingCapacity: 1 << 16)
        let layoutCount = max(1, breakpoints.count)
        lastPageNumbers = Array(repeating: 0, count: layoutCount)
        reachedEnds = Array(repeating: false, count: layoutCount)
        guard let directory else {
            directories = []
            directoryPaths = []
            return
        }
        let root = URL(fileURLWithPath: directory, isDirectory: true)
        let folders =
            breakpoints.isEmpty
            ? [root] : breakpoints.map { root.appendingPathComponent(Self.folderName(for: $0), isDirectory: true) }
        directories = folders
        directoryPaths = folders.map(\.path)
        createdDirectories = Array(repeating: false, count: folders.count)
    }

    /// Folders are created with their first page, so a feed that cannot be read leaves nothing behind.
    private var createdDirectories: [Bool] = []

    private func createDirectory(forLayout layout: Int) throws(LayoutError) {
        guard !createdDirectories[layout] else { return }
        let folder = directories[layout]
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw LayoutError(
                .outputFailed, "--out \(folder.path): cannot create the folder: \(error.localizedDescription)")
        }
        createdDirectories[layout] = true
    }

    /// The folder of a breakpoint's pages: its width (`375`, `767.5`).
    public static func folderName(for breakpoint: Breakpoint) -> String { cssNumber(breakpoint.width) }

    /// The file name of a page: numbered from 1, four digits, so that names sort in page order.
    public static func fileName(forPageIndex index: Int) -> String {
        let number = String(index + 1)
        return "page-" + String(repeating: "0", count: max(0, 4 - number.count)) + number + ".json"
    }

    /// Writes one page; a page file appears whole or not at all (temporary file, then rename).
    public func write(_ page: LayoutPage) throws(LayoutError) {
        Records.write(page, feed: feed, into: &json)
        json.appendRaw("\n")
        // The page goes out from the writer's own buffer, which the next page reuses.
        defer { json.removeAll() }
        lastPageNumbers[page.layoutIndex] = page.index + 1
        reachedEnds[page.layoutIndex] = page.cursor == nil
        guard !directories.isEmpty else {
            do {
                try json.bytes.withUnsafeBytes { bytes in try Self.writeAll(bytes, to: STDOUT_FILENO) }
            } catch {
                throw LayoutError(.outputFailed, "standard output: cannot write a page: \(error.localizedDescription)")
            }
            return
        }
        try createDirectory(forLayout: page.layoutIndex)
        let path = directoryPaths[page.layoutIndex] + "/" + Self.fileName(forPageIndex: page.index)
        do {
            try json.bytes.withUnsafeBytes { bytes in try Self.writeAtomically(bytes, to: path) }
        } catch {
            throw LayoutError(.outputFailed, "\(path): cannot write the page: \(error.localizedDescription)")
        }
    }

    /// Writes a file whole or not at all: a temporary file beside it, then a rename over it. Readers never see a
    /// half-written page. No fsync: a page is cheap to write again, and syncing each of thousands of pages
    /// (Foundation's `.atomic` does) costs more than laying them out.
    static func writeAtomically(_ bytes: UnsafeRawBufferPointer, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        do {
            try writeAll(bytes, to: descriptor)
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard close(descriptor) == 0, rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
        }
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

    /// After a run that reached the end of the feed, removes page files a longer earlier run left behind, so the
    /// folder holds exactly this layout's pages.
    public func finish() throws(LayoutError) {
        for (layout, directory) in directories.enumerated() where reachedEnds[layout] {
            try removeStalePages(in: directory, after: lastPageNumbers[layout])
        }
    }

    private func removeStalePages(in directory: URL, after lastPageNumber: Int) throws(LayoutError) {
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
