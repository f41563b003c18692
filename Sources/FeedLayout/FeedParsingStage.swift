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

    /// Parses the whole feed into `channel`, in windows of `windowSize` items. A read or parse error ends the channel
    /// with a `LayoutError` after the windows before it; a receiver that closes the channel stops the stage.
    ///
    /// Once the reader has decided how to read the feed, sanitizing moves to a task of its own (``FeedInputSanitizer``):
    /// this one reads chunks and keeps two of them with the sanitizer, so cleaning one overlaps parsing the other.
    static func run(
        source: FeedSource, reader: FeedReader, windowSize: Int, into channel: PipelineChannel<Window>,
        clock: ContinuousClock
    ) async -> Outcome {
        var time = Duration.zero
        var window: [CapturedFeedItem] = []
        window.reserveCapacity(windowSize)
        var position = 0
        func outcome() -> Outcome {
            Outcome(time: time, format: reader.format, feedWarnings: reader.feedWarnings)
        }
        func send(_ items: [CapturedFeedItem]) async -> Bool {
            for item in items {
                window.append(item)
                if window.count == windowSize {
                    let full = Window(firstPosition: position, items: window)
                    position += window.count
                    window.removeAll(keepingCapacity: true)
                    guard await channel.send(full) else { return false }
                }
            }
            return true
        }
        func timed<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
            let started = clock.now
            defer { time += clock.now - started }
            return try body()
        }
        var toSanitize: PipelineChannel<[UInt8]>?
        var sanitized: PipelineChannel<SanitizedChunk>?
        var sanitizing: Task<Void, Never>?
        defer {
            // Stopped early or failed: the sanitizing task ends at its next receive or send.
            toSanitize?.finish()
            sanitized?.close()
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
                let raw = PipelineChannel<[UInt8]>(capacity: 2)
                let clean = PipelineChannel<SanitizedChunk>(capacity: 2)
                (toSanitize, sanitized) = (raw, clean)
                sanitizing = Task { await sanitize(from: raw, with: detached, into: clean) }
                // Each raw chunk comes back clean, and the end of the input as one final chunk.
                var inFlight = 0
                var inputEnded = false
                func refill() async throws {
                    while !inputEnded && inFlight < 2 {
                        let started = clock.now
                        let chunk = try await source.nextChunk()
                        time += clock.now - started
                        if let chunk {
                            guard await raw.send(chunk) else { return }
                        } else {
                            raw.finish()
                            inputEnded = true
                        }
                        inFlight += 1
                    }
                }
                try await refill()
                while let chunk = try await clean.receive() {
                    inFlight -= 1
                    try await refill()
                    let items = try timed {
                        try chunk.isFinal
                            ? reader.captureRemainingItems(sanitized: chunk) : reader.captureItems(sanitized: chunk)
                    }
                    guard await send(items) else { return outcome() }
                }
            } else {
                // The input ended before the reader detached a sanitizer (or it uses none).
                let items = try timed { try reader.captureRemainingItems() }
                guard await send(items) else { return outcome() }
            }
            await sanitizing?.value
            if !window.isEmpty, !(await channel.send(Window(firstPosition: position, items: window))) {
                return outcome()
            }
            channel.finish()
        } catch let error as FeedIngestError {
            channel.finish(throwing: LayoutError(.feedInvalid, error.description))
        } catch {
            channel.finish(throwing: error)
        }
        return outcome()
    }

    /// Sanitizes the chunks it receives, in order, into `output`, ending with the final chunk.
    private static func sanitize(
        from input: PipelineChannel<[UInt8]>, with sanitizer: FeedInputSanitizer,
        into output: PipelineChannel<SanitizedChunk>
    ) async {
        var sanitizer = sanitizer
        do {
            while let chunk = try await input.receive() {
                let clean = try chunk.withUnsafeBytes { (bytes) throws(FeedIngestError) in
                    try sanitizer.sanitize(bytes)
                }
                guard await output.send(clean) else {
                    input.close()
                    return
                }
            }
            guard await output.send(sanitizer.finish()) else { return }
            output.finish()
        } catch {
            input.close()
            output.finish(throwing: error)
        }
    }
}
