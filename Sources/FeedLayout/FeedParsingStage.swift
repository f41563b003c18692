import AsyncAlgorithms
import FeedIngest

/// The first stage of `ingest` and `layout`: reads the feed chunk by chunk, parses it and sends the items, as
/// captured, in windows.
///
/// It only parses. Finishing the items (HTML to text, URLs, dates) happens in the receiving stage, so that on two
/// cores libxml2 has one nearly to itself while the other finishes, probes, measures and writes.
enum FeedParsingStage {
    /// A window of captured items and the feed position of its first.
    struct Window: Sendable {
        var firstPosition: Int
        var items: [CapturedFeedItem]
    }

    /// What the stage reports once the feed has ended (or the receiver stopped it).
    struct Outcome: Sendable {
        /// Time spent reading and parsing (waiting for the receiver not counted).
        var time: Duration
        var format: FeedFormat?
        var feedWarnings: [FeedWarning]
    }

    /// How many chunks are with the sanitizer at once: cleaning one overlaps parsing the other.
    static let chunksInFlight = 2

    /// Parses `source` in a child task while `body` consumes the windows, and returns what `body` returned with the
    /// stage's outcome. The one way `ingest` and `layout` start parsing.
    ///
    /// Whatever ends `body` (the end of the feed, an early stop, an error) cancels the stage, which stops at its next
    /// window; its outcome then covers what it read. A cancelled caller gets `CancellationError`, not a result.
    /// - Parameters:
    ///   - body: Reads the windows from the channel (through a buffer of its choice), given the settings that
    ///     finish the captured items.
    static func withParsing<Result: Sendable>(
        _ source: sending FeedSource, imageRoot: String?, windowSize: Int, firstWindowSize: Int? = nil,
        clock: ContinuousClock,
        _ body: (AsyncThrowingChannel<Window, any Error>, FeedItemFinisher.Settings) async throws -> Result
    ) async throws -> (Result, Outcome) {
        let reader = source.makeReader(imageRoot: imageRoot)
        let finishing = reader.finishing
        let channel = AsyncThrowingChannel<Window, any Error>()
        // From here on only the parsing task uses the source and the reader (neither is Sendable): the handover is
        // spelled out, since the task group's body closure cannot pass them on as `sending`.
        nonisolated(unsafe) let parsingSource = source
        nonisolated(unsafe) let parsingReader = reader
        return try await withThrowingTaskGroup(of: Outcome.self) { group in
            group.addTask {
                await run(
                    source: parsingSource, reader: parsingReader, windowSize: windowSize,
                    firstWindowSize: firstWindowSize ?? windowSize, into: channel, clock: clock)
            }
            defer { group.cancelAll() }
            let result = try await body(channel, finishing)
            try Task.checkCancellation()
            group.cancelAll()
            return (result, try await group.next()!)
        }
    }

    /// Parses the whole feed into `channel`, in windows of `windowSize` items (the first of `firstWindowSize`: a
    /// small one gets the first page out soon), then finishes it. A read or parse error
    /// fails the channel with a `LayoutError` after the windows before it. Cancelling the task stops the stage at its
    /// next window (the receiver stopped early, or the caller's task was cancelled); the outcome then covers what
    /// was read.
    ///
    /// Once the reader has decided how to read the feed, sanitizing moves to a child task (``FeedInputSanitizer``):
    /// this one reads chunks and keeps two of them with the sanitizer, so cleaning one overlaps parsing the other.
    private static func run(
        source: FeedSource, reader: FeedReader, windowSize: Int, firstWindowSize: Int,
        into channel: AsyncThrowingChannel<Window, any Error>,
        clock: ContinuousClock
    ) async -> Outcome {
        var time = Duration.zero
        var window: [CapturedFeedItem] = []
        window.reserveCapacity(windowSize)
        var position = source.firstItemIndex
        func outcome() -> Outcome {
            Outcome(time: time, format: reader.format, feedWarnings: reader.feedWarnings)
        }
        /// Sends full windows; `false` once the task is cancelled (the element was not sent: stop).
        func send(_ items: [CapturedFeedItem]) async -> Bool {
            for item in items {
                window.append(item)
                if window.count == (position == source.firstItemIndex ? firstWindowSize : windowSize) {
                    let full = Window(firstPosition: position, items: window)
                    position += window.count
                    window.removeAll(keepingCapacity: true)
                    await channel.send(full)
                    if Task.isCancelled { return false }
                }
            }
            return true
        }
        func timed<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
            let started = clock.now
            defer { time += clock.now - started }
            return try body()
        }
        do {
            var detached: FeedInputSanitizer?
            while detached == nil {
                let started = clock.now
                guard let chunk = try await source.nextChunk() else {
                    time += clock.now - started
                    break
                }
                let items = try chunk.withUnsafeBytes { try reader.captureItems($0) }
                detached = reader.detachSanitizer()
                time += clock.now - started
                guard await send(items) else { return outcome() }
            }
            if let detached {
                let raw = AsyncChannel<[UInt8]>()
                let clean = AsyncThrowingChannel<SanitizedChunk, any Error>()
                let completed = try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await sanitize(from: raw, with: detached, into: clean) }
                    // Stopped early or failed: the sanitizer ends at its next receive or send.
                    defer { group.cancelAll() }
                    // Each raw chunk comes back clean, and the end of the input as one final chunk.
                    var inFlight = 0
                    var inputEnded = false
                    func refill() async throws {
                        while !inputEnded && inFlight < chunksInFlight {
                            let started = clock.now
                            // A reader whose parser halted takes nothing more: its input ends here.
                            let chunk = reader.hasStoppedParsing ? nil : try await source.nextChunk()
                            time += clock.now - started
                            if let chunk {
                                await raw.send(chunk)
                            } else {
                                raw.finish()
                                inputEnded = true
                            }
                            inFlight += 1
                        }
                    }
                    try await refill()
                    for try await chunk in clean.buffer(policy: .bounded(chunksInFlight)) {
                        inFlight -= 1
                        try await refill()
                        let items = try timed {
                            try chunk.isFinal
                                ? reader.captureRemainingItems(sanitized: chunk) : reader.captureItems(sanitized: chunk)
                        }
                        guard await send(items) else { return false }
                    }
                    return !Task.isCancelled
                }
                guard completed else { return outcome() }
            } else {
                // The input ended before the reader detached a sanitizer (or it uses none).
                let items = try timed { try reader.captureRemainingItems() }
                guard await send(items) else { return outcome() }
            }
            if !window.isEmpty {
                await channel.send(Window(firstPosition: position, items: window))
                if Task.isCancelled { return outcome() }
            }
            channel.finish()
        } catch let error as FeedIngestError {
            channel.fail(LayoutError(.feedInvalid, error.description))
        } catch {
            channel.fail(error)
        }
        return outcome()
    }

    /// Sanitizes the chunks it receives, in order, into `output`, ending with the final chunk.
    private static func sanitize(
        from input: AsyncChannel<[UInt8]>, with sanitizer: FeedInputSanitizer,
        into output: AsyncThrowingChannel<SanitizedChunk, any Error>
    ) async {
        var sanitizer = sanitizer
        // However this task ends, a chunk the parser is still sending is released.
        defer { input.finish() }
        do {
            // The buffer takes the raw chunks the parser keeps in flight, so its sends never wait for this task.
            for await chunk in input.buffer(policy: .bounded(chunksInFlight)) {
                let clean = try chunk.withUnsafeBytes { (bytes) throws(FeedIngestError) in
                    try sanitizer.sanitize(bytes)
                }
                await output.send(clean)
                if Task.isCancelled { return }
            }
            if Task.isCancelled { return }
            await output.send(sanitizer.finish())
            output.finish()
        } catch {
            output.fail(error)
        }
    }
}
