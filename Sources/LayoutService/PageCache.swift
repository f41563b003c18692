import Synchronization

/// Recently served pages in memory, bounded by their bytes: a page a client asks for is usually asked for again
/// (the next client scrolling the same feed), and answering from memory keeps the store out of the hot path.
/// Pages never change once stored, so nothing here is ever stale.
final class PageCache: Sendable {
    struct Key: Hashable, Sendable {
        var id: String
        var layoutIndex: Int
        var pageIndex: Int
    }

    private struct State {
        var pages: [Key: (page: LayoutStore.StoredPage, lastUse: UInt64)] = [:]
        var bytes = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())
    private let byteLimit: Int

    init(byteLimit: Int) { self.byteLimit = byteLimit }

    subscript(key: Key) -> LayoutStore.StoredPage? {
        get {
            state.withLock { state in
                guard let entry = state.pages[key] else { return nil }
                state.clock += 1
                state.pages[key]?.lastUse = state.clock
                return entry.page
            }
        }
        set {
            guard let page = newValue else { return }
            let size = page.json.count + page.gzip.count
            guard size <= byteLimit / 4 else { return }
            state.withLock { state in
                guard state.pages[key] == nil else { return }
                // Past the limit, the least recently used half goes: one sort per many insertions.
                if state.bytes + size > byteLimit {
                    let byAge = state.pages.sorted { $0.value.lastUse < $1.value.lastUse }
                    for (old, entry) in byAge.prefix(max(1, byAge.count / 2)) {
                        state.pages[old] = nil
                        state.bytes -= entry.page.json.count + entry.page.gzip.count
                    }
                }
                state.clock += 1
                state.pages[key] = (page, state.clock)
                state.bytes += size
            }
        }
    }
}
