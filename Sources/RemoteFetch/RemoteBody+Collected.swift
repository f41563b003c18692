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
    /// - Throws: ``RemoteFetchError`` (timeouts, the byte cap, the connection), or what `admit` throws.
    public func collected(
        capacity: Int, admit: (@Sendable (Int) async throws -> Void)? = nil
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

/// The memory of one whole body, kept from one fetch to the next of a body fetched again and again (a subscription's
/// feed): the next body is read into memory that is already there. Fresh memory is not: the 224 MB feed of the
/// refresh benchmark spent about 0.2 s of its fetch in page faults zeroing it (`perf`: half the fetch's CPU), which
/// `curl` into a reused buffer never pays.
///
/// It holds one body's memory (the largest kept) until the next fetch takes it, and reuses it only once nothing else
/// holds that body (a layout still reading it keeps it; the fetch then takes fresh memory, and the kept memory is
/// let go: its holder has it).
public final class BodyMemory: Sendable {
    private let kept = Mutex<[UInt8]>([])

    public init() {}

    /// Keeps `body`'s memory for the next fetch, unless a larger one is kept.
    public func keep(_ body: [UInt8]) {
        kept.withLock { if body.capacity >= $0.capacity { $0 = body } }
    }

    /// How many bytes the kept memory holds (for tests).
    var keptCapacity: Int { kept.withLock { $0.capacity } }

    /// An empty array with room for `capacity` bytes: the kept memory when it is large enough and no longer shared,
    /// else new memory (``Swift/Array/reserved(_:)``).
    func take(capacity: Int) -> [UInt8] {
        var taken = kept.withLock { kept -> [UInt8] in
            let taken = kept
            kept = []
            return taken
        }
        guard taken.capacity >= capacity, taken.capacity > 0 else { return .reserved(capacity) }
        // Emptying shared storage allocates new storage instead (of the same capacity, not advised): then the kept
        // body is someone else's, and new memory is taken the usual way.
        let before = taken.withUnsafeBufferPointer { $0.baseAddress }
        taken.removeAll(keepingCapacity: true)
        guard taken.withUnsafeBufferPointer({ $0.baseAddress }) == before else { return .reserved(capacity) }
        return taken
    }
}
