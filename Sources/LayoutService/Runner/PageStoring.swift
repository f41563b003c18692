import LayoutStore
import Synchronization

/// Stores a run's pages on a task of its own, in the order they are handed over, so that the run goes on placing
/// and encoding while the store commits; pages handed over while a commit runs go in the next one together (one
/// transaction for several with SQLite). A page is stored before `stored` hears of it, as readers expect.
///
/// At most `maximumWaiting` pages wait: then ``hand(_:)`` waits for the store. The first failure to store ends
/// the writer; the next ``hand(_:)`` or ``finish()`` throws it, and no page after the failed one is stored.
/// ``finish()`` returns once every page handed over is stored; ``abandon()`` stops the writer after the commit in
/// progress, so that nothing is written for a layout once its run has ended (a removal waits for the run).
final class PageStoring: Sendable {
    private struct State {
        var waiting: [PageWrite] = []
        var writer: Task<Void, Never>?
        var failure: (any Error)?
    }

    private let state = Mutex(State())
    private let maximumWaiting: Int
    private let store: @Sendable ([PageWrite]) async throws -> Void

    /// - Parameter store: Stores pages in order (and tells whoever waits for them): called by one task at a time.
    init(maximumWaiting: Int = 16, store: @escaping @Sendable ([PageWrite]) async throws -> Void) {
        self.maximumWaiting = maximumWaiting
        self.store = store
    }

    /// Queues a page for the store, starting the writer when it is idle.
    /// - Throws: The failure that ended the writer.
    func hand(_ write: PageWrite) async throws {
        let full = try state.withLock { state -> Task<Void, Never>? in
            if let failure = state.failure { throw failure }
            state.waiting.append(write)
            guard let writer = state.writer else {
                state.writer = Task { await self.drain() }
                return nil
            }
            return state.waiting.count >= maximumWaiting ? writer : nil
        }
        if let full {
            await full.value
            try state.withLock { if let failure = $0.failure { throw failure } }
        }
    }

    /// Waits until every page handed over is stored.
    /// - Throws: The failure that ended the writer.
    func finish() async throws {
        while let writer = state.withLock({ $0.writer }) { await writer.value }
        try state.withLock { if let failure = $0.failure { throw failure } }
    }

    /// Drops the pages not stored yet and waits for the commit in progress, if any.
    func abandon() async {
        let writer = state.withLock { state -> Task<Void, Never>? in
            state.waiting.removeAll()
            state.writer?.cancel()
            return state.writer
        }
        await writer?.value
    }

    /// Stores what waits, batch after batch, until nothing does.
    private func drain() async {
        while true {
            let batch = state.withLock { state -> [PageWrite]? in
                guard !state.waiting.isEmpty, state.failure == nil, !Task.isCancelled else {
                    state.writer = nil
                    return nil
                }
                defer { state.waiting.removeAll(keepingCapacity: true) }
                return state.waiting
            }
            guard let batch else { return }
            do {
                try await store(batch)
            } catch {
                state.withLock { state in
                    state.failure = error
                    state.waiting.removeAll()
                    state.writer = nil
                }
                return
            }
        }
    }
}
