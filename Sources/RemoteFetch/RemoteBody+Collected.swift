import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension RemoteBody {
    /// The whole body in one array: a feed, or an image to decode.
    ///
    /// Iterating the body chunk by chunk races each chunk against a timer (two child tasks per chunk, see
    /// ``ResponseChunks``), and a 224 MB feed is some 3,400 chunks of 64 KiB. Here one watchdog watches the whole
    /// body, and counts only the time spent waiting for the server (not the time `admit` takes), as that race does.
    /// With the huge pages of ``Swift/Array/reserved(_:)``, the 224 MB feed of the refresh benchmark was read in
    /// 0.21–0.23 s, against 0.34–0.38 s chunk by chunk (nginx on loopback, alternated).
    /// - Parameters:
    ///   - capacity: The bytes expected (the announced size), reserved at once.
    ///   - admit: Called with the bytes held so far plus a chunk's, before the chunk is kept (an upload budget that
    ///     may wait or refuse).
    ///   - chunks: Given each chunk once it is kept, in order (see
    ///     ``RemoteFetcher/fetchConditionally(_:validator:maximumBytes:chunks:)``).
    /// - Throws: ``RemoteFetchError`` (timeouts, the byte cap, the connection), or what `admit` throws.
    public func collected(
        capacity: Int, admit: (@Sendable (Int) async throws -> Void)? = nil,
        chunks: (@Sendable (ByteBuffer) -> Void)? = nil
    ) async throws -> [UInt8] {
        let waits = ServerWaits()
        let readTimeout = configuration.readTimeout
        do {
            return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
                group.addTask {
                    var bytes = [UInt8].reserved(Swift.min(capacity, maximumBytes))
                    var iterator = body.makeAsyncIterator()
                    while true {
                        waits.begin()
                        let next: ByteBuffer?
                        do {
                            next = try await iterator.next()
                        } catch {
                            // The connection's failures become fetch errors here; what `admit` throws stays its own.
                            throw RemoteFetcher.mapError(error, url: url, configuration: configuration)
                        }
                        waits.end()
                        guard let chunk = next else { break }
                        let count = bytes.count + chunk.readableBytes
                        try RemoteBody.check(
                            received: count, url: url, maximumBytes: maximumBytes, deadline: deadline,
                            configuration: configuration)
                        try await admit?(count)
                        chunk.withUnsafeReadableBytes { bytes.append(contentsOf: $0) }
                        chunks?(chunk)
                    }
                    return bytes
                }
                group.addTask {
                    try await waits.watch(timeout: readTimeout)
                    throw RemoteFetcher.silentServer(url, configuration: configuration)
                }
                defer { group.cancelAll() }
                return try await group.next()!!
            }
        } catch is CancellationError {
            // The caller's task was cancelled while a wait for the server was not under way.
            throw RemoteFetcher.mapError(CancellationError(), url: url, configuration: configuration)
        }
    }
}

/// When the reader of a body began waiting for the server's next bytes, if it is waiting.
private final class ServerWaits: Sendable {
    private let since = Mutex<ContinuousClock.Instant?>(nil)

    func begin() { since.withLock { $0 = .now } }
    func end() { since.withLock { $0 = nil } }

    /// Returns once one wait has lasted `timeout`; throws `CancellationError` when cancelled first. Wakes about
    /// once per `timeout` while the body flows.
    func watch(timeout: Duration) async throws {
        while true {
            let now = ContinuousClock.now
            let began = since.withLock { $0 }
            if let began, now - began >= timeout { return }
            try await Task.sleep(until: (began ?? now) + timeout, clock: .continuous)
        }
    }
}

extension Array where Element == UInt8 {
    /// An empty array with room for `capacity` bytes. A large one is advised into transparent huge pages: filling
    /// 224 MB of fresh memory took some 55,000 page faults, and a loop that only copied the feed's chunks took
    /// 0.25 s with the advice against 0.33 s without.
    static func reserved(_ capacity: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Swift.max(capacity, 0)) { buffer, count in
            count = 0
            let huge = 2 << 20
            guard buffer.count >= 4 * huge, let base = buffer.baseAddress else { return }
            let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
            let end = (Int(bitPattern: base) + buffer.count) & ~(huge - 1)
            #if canImport(Glibc)
                _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, MADV_HUGEPAGE)
            #endif
        }
    }
}
