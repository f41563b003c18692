import Testing

@testable import FeedLayout

/// The preparing stage's tasks take the items of a window by number: every number exactly once.
@Suite struct PipelineCounterTests {
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
