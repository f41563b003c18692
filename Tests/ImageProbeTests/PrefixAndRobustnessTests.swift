import FeedLayoutTestSupport
import ImageProbe
import Testing

/// The parser works on a prefix that grows; these tests hold it to that contract.
struct PrefixAndRobustnessTests {
    /// Fixtures whose complete-file result carries warnings that only a complete file can give
    /// (truncation, or a PNG chunk after IDAT that a prefix never reaches).
    static let completeOnlyWarnings: Set = [
        "jpeg-truncated-after-sof.jpg", "png-exif-after-idat.png",
    ]

    /// `bytesRead` is exactly the prefix needed: the first `bytesRead` bytes give the same
    /// answer as the whole file, and one byte fewer asks for more.
    @Test(arguments: try Fixtures.allNames())
    func bytesReadIsExactlyThePrefixNeeded(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        guard let whole = Fixtures.parse(bytes).info, !Self.completeOnlyWarnings.contains(name) else { return }
        #expect(whole.bytesRead > 0 && whole.bytesRead <= bytes.count)
        let prefix = Array(bytes[..<whole.bytesRead])
        #expect(Fixtures.parse(prefix, isComplete: false).info == whole)
        let shorter = Array(bytes[..<(whole.bytesRead - 1)])
        let request = try #require(Fixtures.parse(shorter, isComplete: false).requestedLength)
        #expect(request > shorter.count && request <= whole.bytesRead)
    }

    /// Growing the buffer exactly as the parser asks reaches the complete-file answer.
    @Test(arguments: try Fixtures.allNames())
    func growingOnRequestReachesTheSameAnswer(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        var length = min(1, bytes.count)
        var requests = 0
        while true {
            let result = Fixtures.parse(Array(bytes[..<length]), isComplete: length == bytes.count)
            guard let requested = result.requestedLength else {
                let whole = Fixtures.parse(bytes)
                #expect(result.info?.width == whole.info?.width)
                #expect(result.info?.orientation == whole.info?.orientation)
                #expect(result.error?.code == whole.error?.code)
                break
            }
            #expect(requested > length)
            length = min(bytes.count, requested)
            requests += 1
            try #require(requests < 10_000)
        }
    }

    /// Every truncation of every fixture, told it is complete, gives an answer — never a request
    /// for more and never a crash.
    @Test(arguments: try Fixtures.allNames())
    func everyTruncationIsAnsweredWithoutCrashing(name: String) throws {
        let bytes = try Fixtures.bytes(name)
        for length in stride(from: 0, through: min(bytes.count, 4096), by: 1) {
            let result = Fixtures.parse(Array(bytes[..<length]))
            #expect(result.requestedLength == nil, "length \(length)")
        }
    }

    /// Deterministic byte flips over every fixture: the bounds checks must hold for any input.
    @Test(arguments: try Fixtures.allNames())
    func corruptedBytesNeverCrash(name: String) throws {
        let original = try Fixtures.bytes(name)
        guard !original.isEmpty else { return }
        var generator = SplitMix64(seed: UInt64(truncatingIfNeeded: name.utf8.reduce(0) { $0 &* 31 &+ Int($1) }))
        for _ in 0..<300 {
            var bytes = original
            for _ in 0..<Int(generator.next() % 4 + 1) {
                let index = Int(generator.next() % UInt64(min(bytes.count, 1024)))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            for isComplete in [true, false] {
                if case .needMoreBytes(let length) = Fixtures.parse(bytes, isComplete: isComplete) {
                    #expect(!isComplete)
                    #expect(length > bytes.count)
                }
            }
        }
    }

    /// Regression corpus from libFuzzer runs (ASan, 54 million inputs, no crash): every input
    /// keeps the parser's promises, and the C decoders fail cleanly on all of them.
    @Test func fuzzCorpusKeepsTheParsersPromises() throws {
        let inputs = try Fixtures.fuzzCorpus()
        #expect(inputs.count > 300)
        for input in inputs {
            for isComplete in [true, false] {
                switch Fixtures.parse(input, isComplete: isComplete) {
                case .needMoreBytes(let length):
                    #expect(!isComplete && length > input.count)
                case .info(let info):
                    #expect(info.width > 0 && info.height > 0 && (1...8).contains(info.orientation))
                    #expect(info.bytesRead <= input.count)
                case .failure(let error):
                    #expect(!error.message.isEmpty && error.offset.map { $0 >= 0 } != false)
                }
            }
            let options = PixelDecodeOptions(pixelBudget: 1 << 22)
            _ = input.withUnsafeBytes { raw in
                Result { () throws(ImageProbeError) in try ImagePixelDecoder.placeholder(raw, options: options) }
            }
        }
    }

    @Test func twoFramesAfterTheFirstScanAreNeverRead() throws {
        // MPO: the second frame (20×10) sits after the first EOI; only the first frame counts.
        let bytes = try Fixtures.bytes("jpeg-mpo.jpg")
        let info = try #require(Fixtures.parse(bytes).info)
        #expect(info.width == 6 && info.height == 4)
        let secondFrameStart = try #require(
            (1..<(bytes.count - 2)).last { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xD8 && bytes[$0 + 2] == 0xFF })
        #expect(info.bytesRead < secondFrameStart)
    }
}
