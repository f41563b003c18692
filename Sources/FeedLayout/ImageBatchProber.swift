import Foundation
import ImageProbe
import ProbeCache

/// What probing one input found: its header facts (or why not), whether its pixels decode (when asked), and its
/// placeholder (when asked).
public struct ProbeOutcome: Sendable {
    public var source: String
    public var result: ProbeResult
    /// With verification: the decoding report or why the pixels do not decode; `nil` when not asked, or when the
    /// header already failed.
    public var decoding: Result<PixelDecodeReport, ImageProbeError>?

    /// Whether the input failed (exit code 1): its header could not be read, or its pixels do not decode for a
    /// reason other than the format having no decoder (`Records.isUnverifiable`).
    public var isFailure: Bool {
        if case .failure = result.info { return true }
        if case .failure(let error) = decoding, !Records.isUnverifiable(error) { return true }
        return false
    }
}

/// Probes many images with at most `concurrency` in flight and hands the outcomes over in input order, each as
/// soon as every earlier one is done, so output keeps input order without waiting for the slowest image.
public struct ImageBatchProber: Sendable {
    public let prober: CachingImageProber
    /// How many images are probed at once.
    public var concurrency: Int
    /// Also decode JPEG and PNG pixels and report whether they decode.
    public var verify: Bool
    /// Also make a placeholder (average colour and ThumbHash) for each image.
    public var placeholders: Bool
    /// Limits for decoding pixels (verification, placeholders).
    public var decodeOptions: PixelDecodeOptions

    public init(
        prober: CachingImageProber, concurrency: Int, verify: Bool = false, placeholders: Bool = false,
        decodeOptions: PixelDecodeOptions = PixelDecodeOptions()
    ) {
        self.prober = prober
        self.concurrency = max(1, concurrency)
        self.verify = verify
        self.placeholders = placeholders
        self.decodeOptions = decodeOptions
    }

    /// Probes `images` and calls `deliver` with each run of outcomes that is ready in input order.
    ///
    /// - Parameters:
    ///   - images: File paths, `-` for standard input, or http(s) URLs.
    ///   - deliver: Receives every outcome exactly once, in input order, in runs.
    public func probe(_ images: [String], deliver: ([ProbeOutcome]) -> Void) async {
        let batches = Self.batches(
            images, headerOnly: !verify && !placeholders,
            workers: min(concurrency, ProcessInfo.processInfo.activeProcessorCount))
        // Finished batches that wait for an earlier one, by their first index.
        var pending: [Int: [ProbeOutcome]] = [:]
        var nextToDeliver = 0
        await withTaskGroup(of: (Int, [ProbeOutcome]).self) { group in
            var nextBatch = 0
            func startNext() {
                guard nextBatch < batches.count else { return }
                let batch = batches[nextBatch]
                nextBatch += 1
                group.addTask { (batch.lowerBound, await probe(Array(images[batch]))) }
            }
            for _ in 0..<concurrency { startNext() }
            for await (first, outcomes) in group {
                startNext()
                pending[first] = outcomes
                var ready: [ProbeOutcome] = []
                while let batch = pending.removeValue(forKey: nextToDeliver) {
                    ready += batch
                    nextToDeliver += batch.count
                }
                if !ready.isEmpty { deliver(ready) }
            }
        }
    }

    /// Probes one batch in order (and verifies each image whose header was read, when asked).
    private func probe(_ sources: [String]) async -> [ProbeOutcome] {
        let results = await prober.probe(sources, withPlaceholder: placeholders)
        var outcomes: [ProbeOutcome] = []
        outcomes.reserveCapacity(sources.count)
        for (source, result) in zip(sources, results) {
            guard verify, case .success(let header) = result.info else {
                outcomes.append(ProbeOutcome(source: source, result: result, decoding: nil))
                continue
            }
            do throws(ImageProbeError) {
                let report = try await prober.prober.verifyDecodable(source, options: decodeOptions, header: header)
                outcomes.append(ProbeOutcome(source: source, result: result, decoding: .success(report)))
            } catch {
                outcomes.append(ProbeOutcome(source: source, result: result, decoding: .failure(error)))
            }
        }
        return outcomes
    }

    /// Splits the inputs into the batches one child task probes in turn.
    ///
    /// A child task per image costs more than reading a file's header, so runs of local files are probed in
    /// batches of up to 64 — small enough that each worker still gets about four batches, so the work stays spread
    /// over the threads. Each batch is one image in flight, so `concurrency` keeps its meaning. URLs go alone
    /// (their time is waiting for the network), and so does every image when pixels are decoded.
    /// - Parameters:
    ///   - images: The sources, in order.
    ///   - headerOnly: Whether only headers are read (no verification, no placeholders).
    ///   - workers: How many threads can probe at once.
    /// - Returns: Consecutive index ranges covering `images`.
    static func batches(_ images: [String], headerOnly: Bool, workers: Int) -> [Range<Int>] {
        let size = headerOnly ? max(1, min(64, images.count / (4 * max(1, workers)))) : 1
        var batches: [Range<Int>] = []
        var start = 0
        for (index, source) in images.enumerated() {
            let alone = source == "-" || ImageProber.isRemote(source)
            if alone || index - start == size {
                if index > start { batches.append(start..<index) }
                start = index
            }
            if alone {
                batches.append(index..<index + 1)
                start = index + 1
            }
        }
        if images.count > start { batches.append(start..<images.count) }
        return batches
    }
}
