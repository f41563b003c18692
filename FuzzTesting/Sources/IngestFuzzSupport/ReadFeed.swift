import FeedIngest

/// Reads `input` with a fresh `FeedReader`, in chunks of `chunkSizes` (repeating), then finishes it, touching every
/// item so its strings are really built. Thrown `FeedIngestError`s are the expected way to refuse bad input; a crash,
/// an assertion or a sanitizer report is a finding.
public func readFeed(_ input: UnsafeRawBufferPointer, chunkSizes: [Int], options: FeedIngestOptions) {
    let reader = FeedReader(
        sourceName: "fuzz.xml", baseURL: "https://example.com/feeds/fuzz.xml", feedDirectory: "/tmp/fuzz-feed",
        options: options)
    var checksum = 0
    func touch(_ items: [FeedItem]) {
        for item in items {
            checksum &+= item.id.utf8.count &+ (item.title?.utf8.count ?? 0) &+ (item.text?.utf8.count ?? 0)
            checksum &+= item.images.count &+ item.warnings.count &+ (item.image?.url.utf8.count ?? 0)
        }
    }
    var offset = 0
    var turn = 0
    do {
        while offset < input.count {
            let size = chunkSizes[turn % chunkSizes.count]
            turn += 1
            let end = min(input.count, offset + size)
            touch(try reader.consume(UnsafeRawBufferPointer(rebasing: input[offset..<end])))
            offset = end
        }
        touch(try reader.finish())
    } catch {
        checksum &+= error.message.utf8.count  // typed throws: always a FeedIngestError
    }
    checksum &+= reader.feedWarnings.count &+ (reader.feedTitle?.utf8.count ?? 0)
    if checksum == -1 { print(checksum) }  // keeps the work observable to the optimiser
}
