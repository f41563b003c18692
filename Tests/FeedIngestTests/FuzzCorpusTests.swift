import FeedIngest
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Replays the libFuzzer corpus of `FuzzTesting/FeedIngestFuzzer` (minimised with `-merge=1`, packed
/// into `Fixtures/fuzz-corpus.bin`) and every crash input it ever found (`Fixtures/fuzz-crashes/`)
/// through `FeedReader`, so that a fixed crash stays fixed without the fuzzer. `scripts/fuzz` makes
/// both.
struct FuzzCorpusTests {
    /// The packed corpus: (UInt32 little-endian length, bytes) records.
    static func corpus() -> [[UInt8]] {
        let packed = fixture("fuzz-corpus.bin")
        var inputs: [[UInt8]] = []
        var position = 0
        while position + 4 <= packed.count {
            let length = packed[position..<position + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            position += 4
            inputs.append(Array(packed[position..<min(packed.count, position + length)]))
            position += length
        }
        return inputs
    }

    /// Every file under `Fixtures/fuzz-crashes/` (crash inputs, named after what they broke).
    static func crashInputs() -> [(name: String, bytes: [UInt8])] {
        let folder = fixturesDirectory + "/fuzz-crashes"
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") && !name.hasSuffix(".md") { names.append(name) }
        }
        return names.sorted().map { ($0, fixture("fuzz-crashes/" + $0)) }
    }

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

    static func checkPromises(_ input: [UInt8]) {
        // Byte-at-a-time only for small inputs: it is slow in debug builds and adds little past 2 KB.
        for chunkSize in [max(input.count, 1), 7, 4096] + (input.count <= 2048 ? [1] : []) {
            switch outcome(input, chunkSize: chunkSize) {
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
    }

    @Test func corpusInputsKeepTheReadersPromises() {
        let inputs = Self.corpus()
        #expect(inputs.count > 100)
        for input in inputs { Self.checkPromises(input) }
    }

    @Test func crashInputsStayFixed() {
        for (name, bytes) in Self.crashInputs() {
            _ = name
            Self.checkPromises(bytes)
        }
    }
}
