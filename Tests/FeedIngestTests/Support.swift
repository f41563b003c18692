import FeedIngest
import Testing

/// Where the fixtures live: beside this file, found through `#filePath` (not bundle resources).
let fixturesDirectory: String = {
    let file = #filePath
    return String(file[..<file.lastIndex(of: "/")!]) + "/Fixtures"
}()

/// The result of reading a whole feed.
struct ParsedFeed {
    var items: [FeedItem]
    var format: FeedFormat?
    var feedTitle: String?
    var feedWarnings: [FeedWarning]
}

/// Parses `bytes` through a `FeedReader`, feeding `chunkSize` bytes at a time, so that every test
/// also exercises chunk boundaries.
func parse(
    _ bytes: [UInt8], chunkSize: Int = 7, baseURL: String? = "https://example.com/feed.xml",
    feedDirectory: String? = nil, options: FeedIngestOptions = .init()
) throws -> ParsedFeed {
    let reader = FeedReader(sourceName: "test.xml", baseURL: baseURL, feedDirectory: feedDirectory, options: options)
    var items: [FeedItem] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(bytes.count, offset + chunkSize)
        let chunk = Array(bytes[offset..<end])
        items += try chunk.withUnsafeBytes { try reader.consume($0) }
        offset = end
    }
    items += try reader.finish()
    return ParsedFeed(
        items: items, format: reader.format, feedTitle: reader.feedTitle, feedWarnings: reader.feedWarnings)
}

func parse(
    _ text: String, chunkSize: Int = 7, baseURL: String? = "https://example.com/feed.xml",
    feedDirectory: String? = nil, options: FeedIngestOptions = .init()
) throws -> ParsedFeed {
    try parse(Array(text.utf8), chunkSize: chunkSize, baseURL: baseURL, feedDirectory: feedDirectory, options: options)
}

/// Reads a fixture file's bytes.
func fixture(_ name: String) -> [UInt8] {
    let path = fixturesDirectory + "/" + name
    var bytes: [UInt8] = []
    let readAll: () -> Void = {
        guard let file = fopen(path, "rb") else { return }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            if count <= 0 { break }
            bytes += buffer[..<count]
        }
    }
    readAll()
    precondition(!bytes.isEmpty, "missing fixture \(path)")
    return bytes
}

/// The warning codes, for assertions that do not pin libxml2's wording.
func codes(_ warnings: [FeedWarning]) -> [String] { warnings.map(\.code) }

#if canImport(Glibc)
    import Glibc
#endif
