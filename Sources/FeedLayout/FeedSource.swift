import Foundation

/// A feed's bytes, read in chunks from a file or standard input so that a feed of any size streams.
final class FeedSource {
    /// How the feed is named in messages: the path as given, or `stdin`.
    let displayName: String
    /// The absolute folder local image references resolve against; `nil` for standard input.
    let directory: String?
    private let handle: FileHandle
    private let chunkSize: Int
    /// Bytes read from standard input before the source was opened; they come first.
    private var prefix: Data

    /// Opens a feed.
    ///
    /// - Parameters:
    ///   - path: A file path, or `-` for standard input.
    ///   - standardInputPrefix: For `-`: bytes of standard input already read; they are the feed's beginning.
    /// - Throws: `LayoutError.feedUnreadable` naming the path when it does not exist, is a folder, or cannot be
    ///   opened.
    init(path: String, standardInputPrefix: Data = Data(), chunkSize: Int = 256 * 1024) throws(LayoutError) {
        self.chunkSize = chunkSize
        prefix = path == "-" ? standardInputPrefix : Data()
        if path == "-" {
            displayName = "stdin"
            directory = FileManager.default.currentDirectoryPath
            handle = FileHandle.standardInput
            return
        }
        displayName = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw LayoutError(.feedUnreadable, "\(path): no such file; check the feed path")
        }
        guard !isDirectory.boolValue else {
            throw LayoutError(.feedUnreadable, "\(path): is a folder; pass the feed file itself (e.g. \(path)/feed.xml)")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LayoutError(.feedUnreadable, "\(path): cannot be opened for reading; check its permissions")
        }
        self.handle = handle
        let absolute = URL(fileURLWithPath: path).standardizedFileURL
        directory = absolute.deletingLastPathComponent().path
    }

    deinit {
        if displayName != "stdin" { try? handle.close() }
    }

    /// The next chunk, or `nil` at the end of the feed.
    func nextChunk() throws(LayoutError) -> Data? {
        if !prefix.isEmpty {
            defer { prefix = Data() }
            return prefix
        }
        do {
            guard let data = try handle.read(upToCount: chunkSize), !data.isEmpty else { return nil }
            return data
        } catch {
            throw LayoutError(.feedUnreadable, "\(displayName): read failed: \(error.localizedDescription)")
        }
    }
}
