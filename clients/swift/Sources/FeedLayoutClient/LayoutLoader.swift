import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads one layout's pages from a `feedlayout serve` service as a scrolling client needs them, and answers the
/// service's viewport and snapping queries over the pins loaded so far.
///
/// - One request per page: page 0 by its index, every next one by the cursor of the page before
///   (`/v1/pages?cursor=`); ``page(_:)`` fetches any page by index. A page is asked for once, whoever asks
///   (callers that come while it is on its way share the request) and kept.
/// - Prefetching: tell the loader what is visible (``show(_:)``) and it fetches the next page whenever the visible
///   rectangle's end comes within ``prefetchDistance`` of the loaded content's end on the scroll axis.
/// - Cancellation: cancelling the task that awaits a load cancels its request; ``cancel()`` stops everything in
///   flight (prefetching included).
/// - A layout still being computed: a page not made yet is waited for by the service (`?wait=`), and asked for
///   again while the layout runs.
public actor LayoutLoader {
    /// The service's base URL, e.g. `http://127.0.0.1:8080`.
    public nonisolated let service: URL
    /// The layout's id.
    public nonisolated let layoutID: String
    /// Which of the layout's widths (the `layout` query parameter; 0 without breakpoints).
    public nonisolated let breakpoint: Int
    /// How far beyond the visible rectangle's end (CSS pixels on the scroll axis) the loaded content should reach;
    /// the next page is fetched when it does not.
    public var prefetchDistance: Double
    /// Seconds the service may hold a request for a page not made yet (`?wait=`, 0 to 60).
    public nonisolated let wait: Int

    /// The pins loaded so far, in order from the layout's first page.
    public private(set) var index: PinIndex?
    /// The service's last answer about the layout (`GET /v1/layouts/{id}`), if the loader asked for it.
    public private(set) var status: LayoutStatus?
    /// Why the last prefetch stopped, if it failed.
    public private(set) var prefetchError: (any Error)?
    /// How many requests the loader has made (pages and layout status).
    public private(set) var requestCount = 0

    private let transport: Transport
    private let headers: [String: String]
    private var pages: [Int: Page] = [:]
    private var inFlight: [Int: Task<Page, any Error>] = [:]
    private var prefetch: Task<Void, Never>?
    private var visible: Rect?
    private var generation = 0

    /// A loader for breakpoint `breakpoint` of layout `layoutID` at `service`.
    ///
    /// - Parameters:
    ///   - headers: sent with every request, e.g. `["Authorization": "Bearer TOKEN"]` for a service with
    ///     `--private-reads`.
    public init(
        service: URL, layoutID: String, breakpoint: Int = 0, prefetchDistance: Double = 2000, wait: Int = 10,
        headers: [String: String] = [:], session: URLSession = .shared
    ) {
        self.init(
            service: service, layoutID: layoutID, breakpoint: breakpoint, prefetchDistance: prefetchDistance,
            wait: wait, headers: headers, transport: .urlSession(session))
    }

    init(
        service: URL, layoutID: String, breakpoint: Int, prefetchDistance: Double, wait: Int,
        headers: [String: String], transport: Transport, status: LayoutStatus? = nil, requestCount: Int = 0
    ) {
        self.status = status
        self.requestCount = requestCount
        self.service = service
        self.layoutID = layoutID
        self.breakpoint = breakpoint
        self.prefetchDistance = prefetchDistance
        self.wait = max(0, min(60, wait))
        self.headers = headers
        self.transport = transport
    }

    /// A loader for the breakpoint of layout `layoutID` that fits a container `width` wide (see
    /// ``Breakpoints``): asks the service for the layout (one request), then loads nothing until asked.
    public init(
        service: URL, layoutID: String, width: Double, prefetchDistance: Double = 2000, wait: Int = 10,
        headers: [String: String] = [:], session: URLSession = .shared
    ) async throws {
        try await self.init(
            service: service, layoutID: layoutID, width: width, prefetchDistance: prefetchDistance, wait: wait,
            headers: headers, transport: .urlSession(session))
    }

    init(
        service: URL, layoutID: String, width: Double, prefetchDistance: Double, wait: Int,
        headers: [String: String], transport: Transport
    ) async throws {
        let url = Self.layoutURL(service: service, id: layoutID)
        let status = try await Self.getJSON(LayoutStatus.self, url: url, headers: headers, transport: transport)
        guard let chosen = status.breakpoint(forWidth: width) else {
            throw ServiceError.invalidAnswer(url: url, reason: "the layout lists no widths")
        }
        self.init(
            service: service, layoutID: layoutID, breakpoint: chosen.index, prefetchDistance: prefetchDistance,
            wait: wait, headers: headers, transport: transport, status: status, requestCount: 1)
    }

    deinit {
        prefetch?.cancel()
        for task in inFlight.values { task.cancel() }
    }

    // MARK: Queries over the loaded pins

    /// The loaded pins whose frames intersect `rect`, in feed order: what the service answers at
    /// `/v1/layouts/{id}/items` for these pins (see ``PinIndex/items(in:)``).
    public func items(in rect: Rect) -> [Item] { index?.items(in: rect) ?? [] }

    /// Where a scroll proposed to end at `offset` should rest, over the loaded pins (see ``PinIndex/snap(_:direction:)``).
    public func snap(_ offset: Double, direction: SnapDirection = .nearest) -> SnapTarget? {
        index?.snap(offset, direction: direction)
    }

    /// Whether the layout's last page is loaded.
    public var isComplete: Bool { index?.isComplete ?? false }

    /// How many pages are loaded, in order from the first.
    public var loadedPageCount: Int { index?.nextPageIndex ?? 0 }

    /// How far on the scroll axis every pin is loaded: the top of the next pin in the shortest column (the next
    /// row's top in a flow layout), or infinity once the last page is in. 0 before any page.
    public var loadedExtent: Double { index?.loadedExtent ?? 0 }

    // MARK: Loading

    /// Shows the loader what is visible (CSS pixels, in the layout's coordinates): it starts fetching the next pages
    /// until the loaded content reaches ``prefetchDistance`` beyond the rectangle's end, in the background.
    /// Returns at once; ``settle()`` waits for that prefetching.
    public func show(_ rect: Rect) {
        visible = rect
        startPrefetchIfNeeded()
    }

    /// Waits until the prefetching that ``show(_:)`` started is done (or failed: see ``prefetchError``).
    public func settle() async {
        while let running = prefetch { await running.value; if prefetch == running { prefetch = nil } }
    }

    /// Loads pages in order until the loaded content reaches `distance` beyond the end of `rect` on the scroll axis
    /// (``prefetchDistance`` when `nil`), or the layout's end.
    public func load(toCover rect: Rect, distance: Double? = nil) async throws {
        while needsMore(for: rect, distance: distance ?? prefetchDistance) {
            guard try await loadNextPage() != nil else { return }
        }
    }

    /// Loads the page after the loaded ones (page 0 by its index, the others by the cursor of the page before) and
    /// adds it to ``index``; `nil` once the last page is in.
    @discardableResult
    public func loadNextPage() async throws -> Page? {
        while true {
            if let index, index.isComplete { return nil }
            let next = index?.nextPageIndex ?? 0
            let page = try await fetchPage(next, cursor: index?.cursor)
            // Another caller may have added it meanwhile.
            if let index, index.nextPageIndex > next { continue }
            try absorbStoredPages()
            return page
        }
    }

    /// Page `number` of the layout, fetched by its index once and kept (it joins ``index`` once the pages before it
    /// are loaded).
    public func page(_ number: Int) async throws -> Page {
        if let page = pages[number] { return page }
        // The page after the loaded ones goes by cursor, like the others in order.
        let cursor = index?.nextPageIndex == number ? index?.cursor : nil
        let page = try await fetchPage(number, cursor: cursor)
        try absorbStoredPages()
        return page
    }

    /// Asks the service how far the layout has got (`GET /v1/layouts/{id}`).
    @discardableResult
    public func refreshStatus() async throws -> LayoutStatus {
        requestCount += 1
        let status = try await Self.getJSON(
            LayoutStatus.self, url: Self.layoutURL(service: service, id: layoutID), headers: headers,
            transport: transport)
        self.status = status
        return status
    }

    /// Stops everything in flight: prefetching and every page request (their callers get `CancellationError`).
    /// Loading may start again afterwards.
    public func cancel() {
        generation += 1
        prefetch?.cancel()
        prefetch = nil
        for task in inFlight.values { task.cancel() }
        inFlight.removeAll()
    }

    // MARK: Internals

    private func needsMore(for rect: Rect, distance: Double) -> Bool {
        if let index, index.isComplete { return false }
        let vertical = index?.grid.scrollsVertically ?? true
        return (vertical ? rect.maxY : rect.maxX) + distance > loadedExtent
    }

    private func startPrefetchIfNeeded() {
        guard prefetch == nil, let visible, needsMore(for: visible, distance: prefetchDistance) else { return }
        prefetch = Task { [weak self] in
            guard let self else { return }
            await self.runPrefetch()
        }
    }

    private func runPrefetch() async {
        let started = generation
        defer { if generation == started { prefetch = nil } }
        do {
            while !Task.isCancelled, let visible, needsMore(for: visible, distance: prefetchDistance) {
                guard try await loadNextPage() != nil else { break }
            }
            prefetchError = nil
        } catch is CancellationError {
        } catch {
            prefetchError = error
        }
    }

    /// Adds the fetched pages that come next to the index, in order: pages fetched ahead by index join once the
    /// pages before them are in.
    private func absorbStoredPages() throws {
        if index == nil {
            guard let first = pages[0] else { return }
            index = PinIndex(grid: first.layout)
        }
        while !index!.isComplete, let next = pages[index!.nextPageIndex] { try index!.append(next) }
    }

    /// Page `number`, asked for once: by `cursor` (the page before's) when given, else by index.
    private func fetchPage(_ number: Int, cursor: String?) async throws -> Page {
        if let page = pages[number] { return page }
        if let running = inFlight[number] { return try await Self.value(of: running) }
        let url: URL
        if let cursor {
            url = Self.url(
                service, path: "/v1/pages",
                query: [("cursor", cursor), ("layout", layoutID), ("wait", String(wait))])
        } else {
            url = Self.url(
                service, path: "/v1/layouts/\(Self.pathComponent(layoutID))/pages/\(number)",
                query: [("layout", String(breakpoint)), ("wait", String(wait))])
        }
        let transport = transport
        let headers = headers
        let layoutID = layoutID
        let task = Task { () throws -> Page in
            while true {
                try Task.checkCancellation()
                self.countRequest()
                let answer = try await transport.get(url, headers)
                if answer.status == 200 {
                    let page: Page
                    do {
                        page = try JSONDecoder().decode(Page.self, from: answer.body)
                    } catch let error as UnsupportedPageSchema {
                        throw error
                    } catch {
                        throw ServiceError.invalidAnswer(url: url, reason: "not a feedlayout.page/1 page: \(error)")
                    }
                    guard page.page.index == number else {
                        throw ServiceError.invalidAnswer(
                            url: url, reason: "page \(page.page.index) came where page \(number) was asked for")
                    }
                    return page
                }
                let problem = try? JSONDecoder().decode(Problem.self, from: answer.body)
                // A page the service is still making (it held the request `wait` seconds): ask again.
                if let problem, problem.type == "urn:feedlayout:problem:page-not-ready", problem.layoutStatus == "running" {
                    continue
                }
                if let problem {
                    if problem.type == "urn:feedlayout:problem:not-found",
                        let status = try? await self.refreshStatus(), status.status == .failed
                    {
                        throw ServiceError.layoutFailed(
                            id: layoutID, code: status.error?.code ?? "failed", message: status.error?.message ?? "")
                    }
                    throw ServiceError.problem(url: url, problem: problem)
                }
                throw ServiceError.status(
                    url: url, status: answer.status, body: String(decoding: answer.body, as: UTF8.self))
            }
        }
        inFlight[number] = task
        do {
            let page = try await Self.value(of: task)
            inFlight[number] = nil
            pages[number] = page
            return page
        } catch {
            if inFlight[number] == task { inFlight[number] = nil }
            throw error
        }
    }

    private func countRequest() { requestCount += 1 }

    /// The task's value; cancelling the waiting task cancels the request too.
    private static func value(of task: Task<Page, any Error>) async throws -> Page {
        try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    static func getJSON<Value: Decodable>(
        _ type: Value.Type, url: URL, headers: [String: String], transport: Transport
    ) async throws -> Value {
        let answer = try await transport.get(url, headers)
        guard answer.status == 200 else {
            if let problem = try? JSONDecoder().decode(Problem.self, from: answer.body) {
                throw ServiceError.problem(url: url, problem: problem)
            }
            throw ServiceError.status(url: url, status: answer.status, body: String(decoding: answer.body, as: UTF8.self))
        }
        do {
            return try JSONDecoder().decode(Value.self, from: answer.body)
        } catch {
            throw ServiceError.invalidAnswer(url: url, reason: "not a \(Value.self): \(error)")
        }
    }

    static func layoutURL(service: URL, id: String) -> URL {
        url(service, path: "/v1/layouts/\(pathComponent(id))", query: [])
    }

    static func pathComponent(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    static func url(_ service: URL, path: String, query: [(String, String)]) -> URL {
        var base = service.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        var text = base + path
        if !query.isEmpty {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-._~")
            text += "?" + query.map { name, value in
                name + "=" + (value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value)
            }.joined(separator: "&")
        }
        return URL(string: text)!
    }
}
