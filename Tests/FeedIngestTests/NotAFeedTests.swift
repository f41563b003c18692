import FeedIngest
import Testing

/// Input that is no feed is named from its first bytes.
struct NotAFeedTests {
    @Test(arguments: [
        ([0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0] as [UInt8], "an ELF program"),
        ([0x1F, 0x8B, 8, 0, 0, 0, 0, 0], "gzip-compressed"),
        ([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG image"),
        ([0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10], "a JPEG image"),
        (Array("%PDF-1.7\n".utf8), "a PDF document"),
        ([0, 0, 0, 0x3C, 0x72, 0x73, 0x73, 0x3E], "a NUL byte at byte offset 0"),
        ([0x41, 0x02, 0x7B, 0x7D], "the control byte 0x2 at byte offset 1"),
        (Array("   \n\t ".utf8), "only whitespace"),
        (Array("hello, this is not a feed".utf8), "no XML or JSON"),
    ])
    func nonFeedBytes(bytes: [UInt8], expected: String) {
        #expect {
            // Past the first kilobyte, where the decision is made (whitespace-only input ends as it is).
            let filler = expected == "only whitespace" ? [] : [UInt8](repeating: 0x41, count: 2000)
            _ = try parse(bytes + filler, chunkSize: 512)
        } throws: { error in
            guard let error = error as? FeedIngestError else { return false }
            return error.code == .notAFeed && error.message.contains(expected)
        }
    }

    /// Without markup the first bytes are held back up to 64 KiB (a feed may follow a long preamble), and
    /// not one byte more.
    @Test func decidesWithinTheFirst64KiB() throws {
        let reader = FeedReader(sourceName: "noise", baseURL: nil, feedDirectory: nil)
        let block = [UInt8](repeating: UInt8(ascii: "x"), count: 16 * 1024)
        for _ in 0..<3 { _ = try block.withUnsafeBytes { try reader.consume($0) } }
        #expect {
            _ = try block.withUnsafeBytes { try reader.consume($0) }
        } throws: { error in
            (error as? FeedIngestError)?.message.contains("in its first 64 KiB") == true
        }
    }

    @Test func junkThenAFeedWithinTheLimitStillReads() throws {
        let feed = String(repeating: "junk ", count: 4000) + "<rss><channel><item><title>t</title></item></channel></rss>"
        #expect(try parse(feed, chunkSize: 4096).items.count == 1)
    }
}
