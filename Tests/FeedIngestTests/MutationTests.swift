import FeedIngest
import FeedLayoutTestSupport
import Testing

/// Deterministic mutations of every fixture: the reader must never crash, and the result must
/// not depend on where the chunks are cut (the push parser's core promise).
struct MutationTests {
    static let interesting: [[UInt8]] = [
        Array("&".utf8), Array("<".utf8), Array("]]>".utf8), Array("<![CDATA[".utf8), Array("&#x0;".utf8),
        Array("&nbsp;".utf8), Array("</item>".utf8), Array("<item>".utf8), [0xC3], [0xE2, 0x80], [0x00], [0xFF, 0xFE],
        Array("<!--".utf8), Array("xml:base=\"../\"".utf8), Array("&lol;".utf8),
    ]

    static func mutate(_ bytes: [UInt8], using generator: inout SplitMix64) -> [UInt8] {
        var result = bytes
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            guard !result.isEmpty else { break }
            let position = Int.random(in: 0..<result.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: result[position] = UInt8.random(in: 0...255, using: &generator)
            case 1:
                result.removeSubrange(
                    position..<min(result.count, position + Int.random(in: 1...16, using: &generator)))
            case 2: result.insert(contentsOf: interesting.randomElement(using: &generator)!, at: position)
            default:
                let length = min(result.count - position, Int.random(in: 1...64, using: &generator))
                result.insert(
                    contentsOf: result[position..<position + length],
                    at: Int.random(in: 0..<result.count, using: &generator))
            }
        }
        return result
    }

    static func withoutPositions(_ items: [FeedItem]) -> [FeedItem] {
        items.map { item in
            var copy = item
            copy.warnings = item.warnings.map { FeedWarning(code: $0.code, message: $0.message) }
                .sorted { ($0.code, $0.message) < ($1.code, $1.message) }
            return copy
        }
    }

    @Test(arguments: StreamingTests.fixtureNames)
    func mutatedFixturesParseTheSameInAnyChunking(name: String) {
        var generator = SplitMix64(seed: UInt64(truncatingIfNeeded: name.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) }))
        let original = fixture(name)
        for round in 0..<60 {
            let bytes = Self.mutate(original, using: &generator)
            let chunkSize = Int.random(in: 1...300, using: &generator)
            let whole = Result { try parse(bytes, chunkSize: max(1, bytes.count)) }
            let chunked = Result { try parse(bytes, chunkSize: chunkSize) }
            switch (whole, chunked) {
            case (.success(let a), .success(let b)):
                // Everything must match, except where libxml2 says an error at the end of input is
                // (for an unterminated CDATA section it reports the position of the last chunk), and
                // so how that error orders among the item's other warnings.
                #expect(
                    Self.withoutPositions(a.items) == Self.withoutPositions(b.items),
                    "\(name) round \(round) chunk \(chunkSize)")
                #expect(a.feedTitle == b.feedTitle, "\(name) round \(round) chunk \(chunkSize)")
            case (.failure(let a), .failure(let b)):
                #expect((a as? FeedIngestError)?.code == (b as? FeedIngestError)?.code, "\(name) round \(round)")
            default:
                Issue.record("\(name) round \(round) chunk \(chunkSize): \(whole) vs \(chunked)")
            }
        }
    }
}
