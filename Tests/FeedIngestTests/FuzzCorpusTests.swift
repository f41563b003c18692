import FeedIngest
import FeedLayoutTestSupport
import Testing

/// Replays the libFuzzer corpus of `FuzzTesting/FeedIngestFuzzer` (minimised with `-merge=1`, packed
/// into `Fixtures/fuzz-corpus.bin`) and the regression inputs of `Fixtures/regressions/` (hostile
/// documents and every crash input the fuzzer ever found) through `FeedReader`, so that a fixed crash
/// stays fixed without the fuzzer. `scripts/fuzz` makes the corpus.
struct FuzzCorpusTests {
    /// The packed corpus, unpacked.
    static func corpus() throws -> [[UInt8]] {
        try TestInputs.unpackCorpus(fixture("fuzz-corpus.bin"))
    }

    /// The folder of regression inputs, one file each, named after what they attack or broke.
    static let regressionFolder = fixturesDirectory + "/regressions"

    /// Small limits, as the fuzzer uses, so the truncation and size-limit paths run too.
    static let options: FeedIngestOptions = {
        var options = FeedIngestOptions()
        options.maxInputBytes = 1 << 20
        options.maxFieldBytes = 4096
        options.maxTextLength = 300
        return options
    }()

    /// Reads one input in chunks; a thrown `FeedIngestError` is an accepted outcome.
    static func outcome(_ input: [UInt8], chunkSize: Int) -> Result<ParsedFeed, FeedIngestError> {
        Result { () throws(FeedIngestError) in
            do {
                return try parse(input, chunkSize: chunkSize, options: options)
            } catch let error as FeedIngestError {
                throw error
            } catch {
                fatalError("FeedReader threw \(error)")
            }
        }
    }

    /// Reads `input` whole and in chunks, and checks the reader's promises on every outcome.
    ///
    /// - Parameters:
    ///   - input: The bytes.
    ///   - name: Names the input when every chunking must also give what the whole input gives: the
    ///     same items and title, or the same error (positions aside: libxml2 reports an error at the end
    ///     of input where the last chunk began).
    static func checkPromises(_ input: [UInt8], sameInAnyChunkingAs name: String? = nil) {
        // Byte-at-a-time only for small inputs: it is slow in debug builds and adds little past 2 KB. Chunks of 65
        // bytes are just longer than what the sanitizer joins to the bytes the last chunk held back.
        let chunkSizes = [max(input.count, 1), 7, 65, 4096] + (input.count <= 2048 ? [1] : [])
        let outcomes = chunkSizes.map { outcome(input, chunkSize: $0) }
        for outcome in outcomes {
            switch outcome {
            case .success(let feed):
                #expect(feed.items.map(\.index) == Array(feed.items.indices))
                for item in feed.items {
                    #expect(!item.id.isEmpty)
                    #expect((item.text?.count ?? 0) <= options.maxTextLength + 1)
                    if let image = item.image { #expect(item.images.contains(image)) }
                }
            case .failure(let error):
                #expect(!error.message.isEmpty)
            }
        }
        guard let name else { return }
        for (chunkSize, outcome) in zip(chunkSizes, outcomes).dropFirst() {
            switch (outcomes[0], outcome) {
            case (.success(let whole), .success(let chunked)):
                #expect(
                    MutationTests.withoutPositions(whole.items) == MutationTests.withoutPositions(chunked.items),
                    "\(name), chunks of \(chunkSize)")
                #expect(whole.feedTitle == chunked.feedTitle, "\(name), chunks of \(chunkSize)")
            case (.failure(let whole), .failure(let chunked)):
                #expect(whole.code == chunked.code, "\(name), chunks of \(chunkSize)")
            case (let whole, let chunked):
                Issue.record("\(name): whole \(whole), chunks of \(chunkSize) \(chunked)")
            }
        }
    }

    @Test func corpusInputsKeepTheReadersPromises() throws {
        let inputs = try Self.corpus()
        #expect(inputs.count > 100)
        for input in inputs { Self.checkPromises(input) }
    }

    @Test func regressionInputsStayFixed() throws {
        let inputs = try TestInputs.files(in: Self.regressionFolder)
        // An empty folder would let this test pass without checking anything.
        try #require(
            !inputs.isEmpty,
            "no input in \(Self.regressionFolder): it holds the hostile documents and fuzzer crash inputs to replay")
        for (name, bytes) in inputs { Self.checkPromises(bytes, sameInAnyChunkingAs: name) }
    }
}
