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
        do {
            while true {
                let started = clock.now
                guard let chunk = try await source.nextChunk() else { break }
                let items = try chunk.withUnsafeBytes { try reader.captureItems($0) }
                time += clock.now - started
                guard await send(items) else { return outcome() }
            }
            let started = clock.now
            let items = try reader.captureRemainingItems()
            time += clock.now - started
            guard await send(items) else { return outcome() }
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
}
