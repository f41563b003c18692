import Foundation

/// Threads of their own for the layouts of a long-running process (a server), as a task executor.
///
/// A layout spends its time in C: libxml2 parsing, FreeType and HarfBuzz shaping, libjpeg and libpng decoding.
/// Run on Swift's cooperative pool (one thread per core), a few large layouts would hold every thread of it for
/// seconds at a time, and the requests a server answers meanwhile (a page from its store, a health check) would
/// wait behind them. A layout run with this executor as its preference (``LayoutResources``) keeps all its tasks,
/// child tasks included, on these threads instead; the cooperative pool stays free for the server.
public final class LayoutThreadPool: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` and `isStopping` are only touched with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var nextJob = 0
    private var isStopping = false
    private var threads: [Thread] = []

    /// Starts the threads.
    /// - Parameters:
    ///   - threadCount: How many threads run layout work at once; at least 1.
    ///   - name: The threads' name, as debuggers and `top -H` show it (Linux keeps 15 bytes of it).
    public init(threadCount: Int = ProcessInfo.processInfo.activeProcessorCount, name: String = "fl-layout") {
        for number in 0..<max(1, threadCount) {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "\(name)-\(number)"
            threads.append(thread)
        }
        for thread in threads { thread.start() }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        condition.lock()
        if isStopping {
            condition.unlock()
            globalConcurrentExecutor.enqueue(job)
            return
        }
        jobs.append(UnownedJob(job))
        condition.signal()
        condition.unlock()
    }

    /// Lets the threads end once the jobs already queued have run. Jobs enqueued afterwards go to Swift's global
    /// executor: a task that prefers this executor must never be stranded.
    public func shutdown() {
        condition.lock()
        isStopping = true
        condition.broadcast()
        condition.unlock()
    }

    /// Whether the calling thread is one of a pool's.
    public static var isPoolThread: Bool { Thread.current.threadDictionary[poolThreadKey] != nil }
    private static let poolThreadKey = "feedlayout.LayoutThreadPool"

    private func work() {
        Thread.current.threadDictionary[Self.poolThreadKey] = true
        while true {
            condition.lock()
            while nextJob == jobs.count && !isStopping { condition.wait() }
            guard nextJob < jobs.count else {
                condition.unlock()
                return
            }
            let job = jobs[nextJob]
            nextJob += 1
            // Drop the jobs already taken once they are half the queue, so the queue stays as long as its backlog.
            if nextJob > 64 && nextJob * 2 > jobs.count {
                jobs.removeFirst(nextJob)
                nextJob = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
