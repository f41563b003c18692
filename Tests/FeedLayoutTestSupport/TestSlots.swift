/// At most `limit` holders at once; the others wait their turn, in order. For what the whole suite must not run too
/// many of at the same time on a machine of two cores: each PostgreSQL cluster is a server of several processes, and
/// with a dozen started together, their connections timed out and the tests beside them read photos too late.
public actor TestSlots {
    private let limit: Int
    private var held = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public init(limit: Int) { self.limit = limit }

    public func acquire() async {
        if held < limit {
            held += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives a slot back: to the longest waiter, else to the pool.
    public func release() {
        if waiting.isEmpty {
            held -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
