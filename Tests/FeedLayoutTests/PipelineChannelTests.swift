import Synchronization
import Testing

@testable import FeedLayout

@Suite struct PipelineChannelTests {
    struct Failure: Error, Equatable {
        var reason: String
    }

    @Test(arguments: [1, 3, 64])
    func everyElementArrivesOnceInOrder(capacity: Int) async throws {
        let channel = PipelineChannel<Int>(capacity: capacity)
        let sender = Task {
            for value in 0..<2_000 {
                guard await channel.send(value) else { return false }
                // Now and then let the receiver run, so both the full and the empty queue are met.
                if value % 7 == 0 { await Task.yield() }
            }
            channel.finish()
            return true
        }
        var received: [Int] = []
        while let value = try await channel.receive() {
            received.append(value)
            if value % 5 == 0 { await Task.yield() }
        }
        #expect(await sender.value)
        #expect(received == Array(0..<2_000))
    }

    @Test func theSenderWaitsWhileTheQueueIsFull() async throws {
        let channel = PipelineChannel<Int>(capacity: 2)
        let sent = Atomic<Int>(0)
        let sender = Task {
            for value in 0..<5 {
                guard await channel.send(value) else { return }
                sent.add(1, ordering: .relaxed)
            }
            channel.finish()
        }
        // Two fit and a third waits; give the sender every chance to run further than it may.
        for _ in 0..<200 { await Task.yield() }
        #expect(sent.load(ordering: .relaxed) == 2)
        #expect(try await channel.receive() == 0)
        var rest: [Int] = []
        while let value = try await channel.receive() { rest.append(value) }
        await sender.value
        #expect(rest == [1, 2, 3, 4])
        #expect(sent.load(ordering: .relaxed) == 5)
    }

    @Test func anErrorComesAfterEverythingSentBeforeIt() async throws {
        let channel = PipelineChannel<String>(capacity: 4)
        #expect(await channel.send("a"))
        #expect(await channel.send("b"))
        channel.finish(throwing: Failure(reason: "feed.xml:3: not well-formed"))
        #expect(try await channel.receive() == "a")
        #expect(try await channel.receive() == "b")
        await #expect(throws: Failure(reason: "feed.xml:3: not well-formed")) { try await channel.receive() }
    }

    @Test func closingRefusesFurtherSendsAndReleasesAWaitingSender() async throws {
        let channel = PipelineChannel<Int>(capacity: 1)
        #expect(await channel.send(1))
        let blocked = Task { await channel.send(2) }
        for _ in 0..<50 { await Task.yield() }
        channel.close()
        #expect(await blocked.value == false)
        #expect(await channel.send(3) == false)
    }

    @Test func aReceiverWaitingOnAnEmptyQueueGetsTheEnd() async throws {
        let channel = PipelineChannel<Int>(capacity: 2)
        let receiver = Task { try await channel.receive() }
        for _ in 0..<50 { await Task.yield() }
        channel.finish()
        #expect(try await receiver.value == nil)
    }

    /// The pipeline's own task closes a channel between two other stages when a run stops early (`--max-pages`): a
    /// receiver waiting on it then, or receiving later, must see the end, or the run waits for it forever.
    @Test func closingEndsTheStreamForAWaitingReceiver() async throws {
        let channel = PipelineChannel<Int>(capacity: 2)
        let waiting = Self.receiveEnds(channel)
        for _ in 0..<50 { await Task.yield() }
        channel.close()
        #expect(try await Self.within(seconds: 5, waiting), "the waiting receiver was not told that the stream ended")
        #expect(try await Self.within(seconds: 5, Self.receiveEnds(channel)), "a receive after close ends at once")
    }

    /// Receives once in a task of its own; its flag is set when that receive returned the end of the stream.
    private static func receiveEnds(_ channel: PipelineChannel<Int>) -> Flag {
        let ended = Flag()
        Task { if try await channel.receive() == nil { ended.set() } }
        return ended
    }

    /// Whether `flag` is set within `seconds`: a receiver left waiting fails the test instead of hanging the suite.
    private static func within(seconds: Int, _ flag: Flag) async throws -> Bool {
        for _ in 0..<(seconds * 100) where !flag.isSet { try await Task.sleep(for: .milliseconds(10)) }
        return flag.isSet
    }

    @Test func theCounterHandsOutEachNumberOnce() async {
        let counter = PipelineCounter()
        let taken = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var mine: [Int] = []
                    while let number = counter.take(below: 1_000) { mine.append(number) }
                    return mine
                }
            }
            var all: [Int] = []
            for await mine in group { all += mine }
            return all
        }
        #expect(taken.sorted() == Array(0..<1_000))
        #expect(counter.take(below: 1_000) == nil)
    }
}

/// A flag one task sets and another reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
