import Dispatch
import Synchronization

/// The memory that pixel decodes may hold at once, shared by every decode that names it.
///
/// Before it allocates, a decode reserves what it will hold: the C library's working memory (estimated from the
/// header; libjpeg is held to it) plus its own row and target buffers. When the budget is spent the decode waits
/// for others to finish, first come first served, so 16 large images decoded at once stay within the budget
/// instead of adding up. A decode that alone needs more than the whole budget is refused rather than left to
/// wait forever.
///
/// Waiting blocks the calling thread: decodes run on threads that may block (``ImageProber`` runs them on
/// Dispatch's), never on the cooperative pool. One budget is meant to be shared by a whole process
/// (``shared``); a server can make its own and pass it in ``PixelDecodeOptions/memoryBudget``.
public final class DecodeMemoryBudget: Sendable {
    /// The most bytes that may be reserved at once.
    public let capacity: Int

    private struct Waiter {
        var bytes: Int
        var granted: DispatchSemaphore
    }

    private struct State {
        var reserved = 0
        var peak = 0
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())

    /// The budget of a process that makes no other: 512 MiB, which one progressive JPEG at the default pixel
    /// budget's size (its coefficient buffer, about 3 bytes a pixel for 4:2:0) still fits.
    public static let shared = DecodeMemoryBudget(bytes: 512 << 20)

    /// Creates a budget.
    /// - Parameter bytes: The most bytes decodes may reserve at once (at least 1).
    public init(bytes: Int) {
        capacity = max(1, bytes)
    }

    /// Bytes reserved now.
    public var reservedBytes: Int { state.withLock { $0.reserved } }

    /// The most bytes that were ever reserved at once.
    public var peakReservedBytes: Int { state.withLock { $0.peak } }

    /// Runs `body` holding `bytes` of the budget, waiting until they are free.
    ///
    /// - Parameters:
    ///   - bytes: What the decode will hold.
    ///   - source: The input's name, for the error.
    ///   - body: The decode.
    /// - Returns: What `body` returns.
    /// - Throws: ``ImageProbeError`` `.exceedsMemoryBudget` when `bytes` is above the whole budget; whatever
    ///   `body` throws.
    func withReservation<Value>(
        _ bytes: Int, source: String, _ body: () throws(ImageProbeError) -> Value
    ) throws(ImageProbeError) -> Value {
        let bytes = max(0, bytes)
        guard bytes <= capacity else {
            throw ImageProbeError(
                code: .exceedsMemoryBudget,
                message:
                    "decoding it needs about \(Self.mebibytes(bytes)) MiB, more than the \(Self.mebibytes(capacity)) MiB all decodes share; re-encode it smaller or as baseline JPEG",
                source: source)
        }
        let wait: DispatchSemaphore? = state.withLock { state in
            if state.waiters.isEmpty && state.reserved + bytes <= capacity {
                state.reserved += bytes
                state.peak = max(state.peak, state.reserved)
                return nil
            }
            let granted = DispatchSemaphore(value: 0)
            state.waiters.append(Waiter(bytes: bytes, granted: granted))
            return granted
        }
        // The releaser adds a waiter's bytes before it signals, so waking up means holding them.
        wait?.wait()
        defer { release(bytes) }
        return try body()
    }

    private func release(_ bytes: Int) {
        state.withLock { state in
            state.reserved -= bytes
            // First come, first served: a large request is not overtaken forever by small ones.
            while let first = state.waiters.first, state.reserved + first.bytes <= capacity {
                state.waiters.removeFirst()
                state.reserved += first.bytes
                state.peak = max(state.peak, state.reserved)
                first.granted.signal()
            }
        }
    }

    private static func mebibytes(_ bytes: Int) -> Int { (bytes + (1 << 20) - 1) >> 20 }
}

extension DecodeMemoryBudget: Equatable {
    /// Budgets are equal when they are the same budget.
    public static func == (lhs: DecodeMemoryBudget, rhs: DecodeMemoryBudget) -> Bool { lhs === rhs }
}
