import AsyncAlgorithms
import LayoutPages
import Synchronization

/// A run's pages as an async sequence (``LayoutPipeline/pages(of:resume:logger:)``).
///
/// The run is a task of its own, started by the first `next()`. It hands pages over through a channel, so it waits
/// for the consumer and never runs more than a few windows of items ahead. When the iteration ends early (the
/// consumer breaks out of its loop or its task is cancelled), the run is cancelled, its stages stop at their next
/// window, and their memory is freed.
public struct LayoutPageSequence: AsyncSequence, Sendable {
    public typealias Element = LayoutPage

    let produce: @Sendable (AsyncThrowingChannel<LayoutPage, any Error>) async throws -> Void

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(run: Run(produce)) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let run: Run

        public mutating func next() async throws -> LayoutPage? {
            let run = self.run
            return try await withTaskCancellationHandler {
                try await run.next()
            } onCancel: {
                run.cancel()
            }
        }
    }

    /// The producing task and the consumer's side of the channel; dropping the last iterator cancels the task.
    final class Run: @unchecked Sendable {
        // @unchecked: `iterator` is used only by the one task that iterates (an iterator is not shared); the task
        // handle, which a cancellation handler reads from another thread, is behind a lock.
        private let channel = AsyncThrowingChannel<LayoutPage, any Error>()
        private var iterator: AsyncThrowingChannel<LayoutPage, any Error>.AsyncIterator
        private let produce: @Sendable (AsyncThrowingChannel<LayoutPage, any Error>) async throws -> Void
        private let task = Mutex<Task<Void, Never>?>(nil)

        init(_ produce: @escaping @Sendable (AsyncThrowingChannel<LayoutPage, any Error>) async throws -> Void) {
            self.produce = produce
            iterator = channel.makeAsyncIterator()
        }

        func next() async throws -> LayoutPage? {
            let channel = channel
            let produce = produce
            task.withLock { task in
                guard task == nil else { return }
                task = Task {
                    do {
                        try await produce(channel)
                        channel.finish()
                    } catch {
                        channel.fail(error)
                    }
                }
            }
            return try await iterator.next()
        }

        func cancel() {
            task.withLock { $0?.cancel() }
            channel.finish()
        }

        deinit { task.withLock { $0?.cancel() } }
    }
}
