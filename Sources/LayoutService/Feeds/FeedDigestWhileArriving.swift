import FeedIngest
import NIOCore

/// A fetched feed's digests (``FeedAppend/ArrivingDigests``), computed on a task of their own from the chunks as the
/// fetch keeps them, so that the pass over the feed runs beside the fetch instead of after it: for the 224 MB feed
/// of the refresh benchmark, 126 ms that came after the fetch (and held the refresher's actor).
///
/// Chunks wait in the stream until hashed; they are the fetch's own buffers, so at worst (hashing slower than the
/// network) the feed is held twice until the task catches up.
struct FeedDigestWhileArriving: Sendable {
    /// Hand each chunk of the body here, in order (``RemoteFetch/RemoteFetcher/fetchConditionally(_:validator:maximumBytes:chunks:)``).
    let chunks: @Sendable (ByteBuffer) -> Void
    private let continuation: AsyncStream<ByteBuffer>.Continuation
    private let task: Task<FeedAppend.ArrivingDigests, Never>

    /// - Parameter shape: The shape of the version the feed may extend, when held (the append test's digest).
    init(shape: FeedAppend.Shape?) {
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        self.continuation = continuation
        chunks = { continuation.yield($0) }
        // Detached: not on the refresher's actor, which would otherwise be held for the whole pass.
        task = Task.detached {
            let digests = FeedAppend.ArrivingDigests(shape: shape)
            for await chunk in stream { chunk.withUnsafeReadableBytes { digests.append($0) } }
            return digests
        }
    }

    /// The digests of `feed`, whose every chunk was handed over, once the task has hashed them all.
    func finish(feed: [UInt8]) async -> FeedAppend.ArrivingDigests.Digests {
        continuation.finish()
        return await task.value.finish(feed: feed)
    }

    /// Ends the task without digests (the fetch failed or brought no body).
    func cancel() { continuation.finish() }
}
