import LayoutStore
import Synchronization
import Testing

@testable import LayoutService

/// ``PageStoring``: pages are stored in order on a task of their own, pages that waited go in one batch, a failure
/// stops the pages after it, a full queue holds the run back, and an abandoned run writes nothing more.
@Suite(.timeLimit(.minutes(1)))
struct PageStoringTests {
    static func page(_ index: Int) -> PageWrite {
        PageWrite(
            layoutIndex: 0, pageIndex: index, json: [], gzip: [], cursor: nil, contentHeight: 0, pins: [],
            itemCount: 1, warnings: [:])
    }

    /// A store that records the batches it is given; its first call waits until the test opens the gate.
    final class GatedStore: Sendable {
        let batches = Mutex<[[Int]]>([])
        let calls = Mutex(0)
        private let gate = Mutex<CheckedContinuation<Void, Never>?>(nil)
        private let opened = Mutex(false)
        private let entered: AsyncStream<Void>.Continuation
        let firstCallEntered: AsyncStream<Void>
        let failOnPage: Int?

        init(failOnPage: Int? = nil) {
            (firstCallEntered, entered) = AsyncStream<Void>.makeStream()
            self.failOnPage = failOnPage
        }

        func store(_ writes: [PageWrite]) async throws {
            let call = calls.withLock { calls in
                calls += 1
                return calls
            }
            if call == 1 {
                entered.yield()
                await withCheckedContinuation { continuation in
                    let open = opened.withLock { opened in
                        if !opened { gate.withLock { $0 = continuation } }
                        return opened
                    }
                    if open { continuation.resume() }
                }
            }
            if let failOnPage, writes.contains(where: { $0.pageIndex == failOnPage }) {
                throw StoreError(.ioFailed, "cannot store page \(failOnPage)")
            }
            batches.withLock { $0.append(writes.map(\.pageIndex)) }
        }

        func open() {
            let waiting = opened.withLock { opened -> CheckedContinuation<Void, Never>? in
                opened = true
                return gate.withLock { gate in
                    defer { gate = nil }
                    return gate
                }
            }
            waiting?.resume()
        }

        func waitForTheFirstCall() async {
            var iterator = firstCallEntered.makeAsyncIterator()
            _ = await iterator.next()
        }
    }

    @Test func pagesThatWaitedAreStoredTogetherInOrder() async throws {
        let store = GatedStore()
        let storing = PageStoring { try await store.store($0) }
        try await storing.hand(Self.page(0))
        await store.waitForTheFirstCall()
        for index in 1...3 { try await storing.hand(Self.page(index)) }
        store.open()
        try await storing.finish()
        #expect(store.batches.withLock { $0 } == [[0], [1, 2, 3]])
        // Idle again: the next page starts a writer of its own.
        try await storing.hand(Self.page(4))
        try await storing.finish()
        #expect(store.batches.withLock { $0 } == [[0], [1, 2, 3], [4]])
    }

    @Test func aFailureStopsThePagesAfterIt() async throws {
        let store = GatedStore(failOnPage: 2)
        let storing = PageStoring { try await store.store($0) }
        try await storing.hand(Self.page(0))
        await store.waitForTheFirstCall()
        try await storing.hand(Self.page(1))
        try await storing.hand(Self.page(2))
        store.open()
        await #expect(throws: StoreError.self) { try await storing.finish() }
        await #expect(throws: StoreError.self) { try await storing.hand(Self.page(3)) }
        #expect(store.batches.withLock { $0 } == [[0]])
    }

    @Test func aFullQueueHoldsTheRunBack() async throws {
        let store = GatedStore()
        let storing = PageStoring(maximumWaiting: 2) { try await store.store($0) }
        let handed = Mutex(0)
        try await storing.hand(Self.page(0))
        await store.waitForTheFirstCall()
        let run = Task {
            for index in 1...6 {
                try await storing.hand(Self.page(index))
                handed.withLock { $0 = index }
            }
        }
        // Page 2 fills the queue: the run waits there until the store moves.
        while handed.withLock({ $0 }) < 1 { await Task.yield() }
        for _ in 0..<1_000 { await Task.yield() }
        #expect(handed.withLock { $0 } == 1)
        store.open()
        try await run.value
        try await storing.finish()
        let batches = store.batches.withLock { $0 }
        #expect(batches.flatMap { $0 } == Array(0...6))
        #expect(batches.allSatisfy { $0.count <= 2 }, "\(batches)")
    }

    @Test func anAbandonedRunWritesNothingMore() async throws {
        let store = GatedStore()
        let storing = PageStoring { try await store.store($0) }
        try await storing.hand(Self.page(0))
        await store.waitForTheFirstCall()
        try await storing.hand(Self.page(1))
        let abandoned = Task { await storing.abandon() }
        // The commit in progress ends; what waited behind it is dropped (the abandon runs first: it drops the
        // waiting pages before it waits for the commit).
        for _ in 0..<1_000 { await Task.yield() }
        store.open()
        await abandoned.value
        #expect(store.batches.withLock { $0 } == [[0]])
        #expect(store.calls.withLock { $0 } == 1)
    }
}
