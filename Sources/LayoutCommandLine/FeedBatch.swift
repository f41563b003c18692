import FeedIngest
import FeedLayout
import Foundation
import LayoutPages

/// The feeds one `layout` run works through: the arguments, with folders expanded to the feeds inside them, or
/// — given `-` alone with a list on standard input — one feed path or URL per line of standard input.
public enum FeedBatch {
    /// File extensions taken from a folder.
    public static let feedExtensions: Set<String> = ["xml", "rss", "atom", "rdf", "json", "feed"]

    public enum Input: Sendable {
        /// Feeds known up front (paths or URLs, folders already expanded).
        case feeds([String])
        /// One feed on standard input; these are its first bytes, already read.
        case standardInputFeed(Data)
        /// A list of feeds on standard input, one per line; these are its first bytes, already read.
        case standardInputList(Data)
    }

    /// Expands the arguments.
    ///
    /// `-` is standard input: a feed when its first non-blank byte is `<` or `{` (XML or JSON Feed), else a list
    /// of feeds, one path or URL per line — so `ls feeds/*.xml | feedlayout layout -` and `cat feed.xml |
    /// feedlayout layout -` both work, and the command runs unchanged under Hadoop Streaming or Spark's `pipe`.
    ///
    /// - Throws: `LayoutError.feedUnreadable` naming a folder that cannot be listed or holds no feeds.
    public static func input(for arguments: [String]) throws(LayoutError) -> Input {
        if arguments == ["-"] {
            let (prefix, isFeed) = sniffStandardInput()
            return isFeed ? .standardInputFeed(prefix) : .standardInputList(prefix)
        }
        var feeds: [String] = []
        for argument in arguments {
            var isDirectory: ObjCBool = false
            if !argument.contains("://"), FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory),
                isDirectory.boolValue
            {
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: argument)
                } catch {
                    throw LayoutError(
                        .feedUnreadable, "\(argument): the folder cannot be listed (\(error.localizedDescription))")
                }
                let found = names.filter {
                    feedExtensions.contains(URL(fileURLWithPath: $0).pathExtension.lowercased())
                }
                .sorted().map { argument.hasSuffix("/") ? argument + $0 : argument + "/" + $0 }
                guard !found.isEmpty else {
                    throw LayoutError(
                        .feedUnreadable,
                        "\(argument): the folder holds no feeds (files ending in \(feedExtensions.sorted().joined(separator: ", ")))"
                    )
                }
                feeds += found
            } else {
                feeds.append(argument)
            }
        }
        return .feeds(feeds)
    }

    /// Reads standard input until its first non-blank byte says whether it is a feed.
    private static func sniffStandardInput() -> (Data, isFeed: Bool) {
        var prefix = Data()
        while true {
            let chunk = FileHandle.standardInput.availableData
            if chunk.isEmpty { return (prefix, false) }  // blank or empty: an (empty) list
            prefix += chunk
            // Skip a UTF-8 byte order mark and blanks.
            var bytes = prefix[...]
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
            if let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
                return (prefix, first == UInt8(ascii: "<") || first == UInt8(ascii: "{"))
            }
        }
    }

    /// Reads the feed list from standard input line by line, as lines arrive, and calls `body` for each feed.
    public static func forEachListedFeed(startingWith prefix: Data, _ body: (String) async throws -> Void) async throws
    {
        var pending = prefix
        func takeLines(final: Bool) -> [String] {
            var lines: [String] = []
            // The lines are cut first and the rest kept once: copying the rest after each line was quadratic in
            // the lines one read delivers.
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                lines.append(String(decoding: pending[start..<newline], as: UTF8.self))
                start = newline + 1
            }
            if start > pending.startIndex { pending = Data(pending[start...]) }
            if final, !pending.isEmpty {
                lines.append(String(decoding: pending, as: UTF8.self))
                pending = Data()
            }
            return lines.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter {
                !$0.isEmpty && !$0.hasPrefix("#")
            }
        }
        while true {
            for feed in takeLines(final: false) { try await body(feed) }
            let chunk = FileHandle.standardInput.availableData
            if chunk.isEmpty { break }
            pending += chunk
        }
        for feed in takeLines(final: true) { try await body(feed) }
    }

    /// The folder names for feeds' pages inside `--out`, unique within one batch.
    public struct FolderNames: Sendable {
        private var used: Set<String> = []
        /// Per base name, the next number to try. Feeds often share a file name (`a/feed.xml`, `b/feed.xml`, …):
        /// trying 2, 3, … again for each made a batch of n such feeds cost O(n²).
        private var nextNumber: [String: Int] = [:]

        public init() {}

        /// A folder name for a feed's pages: its file name without the extension (the URL's last path part, or
        /// its host), made unique among the names already given (`NAME-2`, `NAME-3`, …).
        public mutating func name(for feed: String) -> String {
            let base = FeedBatch.folderBaseName(for: feed)
            var name = base
            // Every number below `nextNumber[base]` is taken already (names are never given back).
            var number = nextNumber[base] ?? 2
            while used.contains(name) {
                name = "\(base)-\(number)"
                number += 1
            }
            if name != base { nextNumber[base] = number }
            used.insert(name)
            return name
        }
    }

    /// A feed's folder name before it is made unique.
    static func folderBaseName(for feed: String) -> String {
        var base: String
        if let url = URL(string: feed), url.scheme == "http" || url.scheme == "https" {
            let last = url.deletingPathExtension().lastPathComponent
            base = last.isEmpty || last == "/" ? (url.host ?? "feed") : last
        } else {
            base = URL(fileURLWithPath: feed).deletingPathExtension().lastPathComponent
        }
        base = String(base.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." ? $0 : "_" })
        if base.isEmpty || base.hasPrefix(".") { base = "feed" + base }
        return base
    }
}
