import FeedIngest
import FeedLayout
import Foundation
import LayoutPages
import LayoutStore
import Logging
import NIOCore
import RemoteFetch
import ServiceLifecycle

/// Refreshes the feed subscriptions: fetches each feed when its time comes (conditionally, with the validators held),
/// makes a new version (an ordinary layout, through ``RouteHandlers/startLayout(feed:name:base:options:predecessor:beforeQueueing:)``)
/// when the bytes changed, and logs the events `GET /v1/feeds/{id}/events` sends: `version` the moment a new
/// version's first page is stored, `failed` when a refresh fails.
///
/// It sleeps on ``ServiceSettings/refreshClock`` until the soonest next fetch, or until woken (a new subscription),
/// or, with a store other instances share, at most half a lease (their new subscriptions, and those whose instance
/// stopped). When ``ServiceRefreshPlan`` says so, the time of each next fetch is exact on that clock.
actor FeedRefresher: Service {
    private let handlers: RouteHandlers
    private let store: any SubscriptionStore
    private let clock: any ServiceClock
    private let logger: Logger
    /// Refreshes under way here, by subscription.
    private var active: [String: Task<Void, Never>] = [:]
    /// The most refreshes at once.
    static let concurrentRefreshes = 8
    /// The most versions a subscription's state lists.
    static let versionsKept = 100
    /// Each subscription's newest version as far as a new version that only appends items needs it
    /// (``FeedVersionMemo``).
    private var memo = FeedVersionMemo()
    /// The memory of the last feed fetched, for the next one to be read into (``BodyMemory``): one feed's worth, at
    /// most `--max-feed-bytes`, held between refreshes.
    private let bodyMemory = BodyMemory()

    init(handlers: RouteHandlers, store: any SubscriptionStore, logger: Logger) {
        self.handlers = handlers
        self.store = store
        self.clock = handlers.settings.refreshClock ?? handlers.settings.clock
        self.logger = logger
    }

    private var settings: ServiceSettings { handlers.settings }

    func run() async throws {
        // Versions whose first page a stop interrupted: their layouts resume, and their events follow.
        var cursor: LayoutListCursor?
        while let page = try? await store.listSubscriptions(after: cursor, limit: 500), !page.isEmpty {
            for subscription in page where subscription.pending != nil {
                let id = subscription.id
                active[id] = active[id] ?? Task { await self.finishPending(id) ; self.ended(id) }
            }
            guard let last = page.last else { break }
            cursor = LayoutListCursor(createdMicroseconds: last.createdAt.microsecondsSince1970, id: last.id)
            if page.count < 500 { break }
        }
        try? await cancelWhenGracefulShutdown { [self] in
            while true {
                try Task.checkCancellation()
                await self.pass()
            }
        }
        let tasks = Array(active.values)
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Starts the refreshes that are due, then sleeps until the next one, a wake, or the takeover interval.
    private func pass() async {
        let seen = handlers.refreshWakes.count
        let now = clock.now
        var sleep: Duration?
        do {
            let upcoming = try await store.dueSubscriptions(at: .distantFuture, limit: active.count + 64)
            for (id, time) in upcoming where active[id] == nil {
                if time <= now {
                    guard active.count < Self.concurrentRefreshes else { break }
                    active[id] = Task { await self.refresh(id); self.ended(id) }
                } else {
                    sleep = .microseconds(time.microsecondsSince1970 - now.microsecondsSince1970)
                    break
                }
            }
        } catch {
            logger.warning("cannot read the subscriptions due", metadata: ["error": "\(error)"])
            sleep = .seconds(1)
        }
        if let interval = handlers.store.takeoverInterval { sleep = min(sleep ?? interval, interval) }
        let clock = self.clock
        let wakes = handlers.refreshWakes
        await withTaskGroup(of: Void.self) { group in
            if let sleep { group.addTask { try? await clock.sleep(for: sleep) } }
            group.addTask { await wakes.wait(after: seen) }
            await group.next()
            group.cancelAll()
        }
    }

    private func ended(_ id: String) {
        active[id] = nil
        handlers.refreshWakes.wake()
    }

    // MARK: One refresh

    /// Fetches one subscription's feed, if it is still due and no other instance refreshes it, and writes what
    /// came of it.
    private func refresh(_ id: String) async {
        do {
            guard try await store.claimSubscription(id) else { return }
        } catch {
            logger.warning("cannot claim a subscription", metadata: ["subscription": "\(id)", "error": "\(error)"])
            return
        }
        // With a shared store the lease is renewed while the refresh runs (three times a lease), so no other
        // instance takes a slow fetch over; an instance killed meanwhile stops renewing, and its lease expires.
        let store = self.store
        let renewal = handlers.store.takeoverInterval.map { half in
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: half * 2 / 3)
                    if Task.isCancelled { break }
                    _ = try? await store.claimSubscription(id)
                }
            }
        }
        await finishPending(id)
        do {
            try await fetchAndWrite(id)
        } catch is CancellationError {
        } catch {
            logger.warning("cannot refresh a subscription", metadata: ["subscription": "\(id)", "error": "\(error)"])
        }
        renewal?.cancel()
        await store.releaseSubscription(id)
        await finishPending(id)
    }

    private func fetchAndWrite(_ id: String) async throws {
        guard var subscription = try await store.subscription(id) else { return }
        let fetchedAt = clock.now
        guard subscription.nextFetch <= fetchedAt else { return }
        logger.info("fetching a subscribed feed", metadata: ["subscription": "\(id)", "feed": "\(subscription.feedURL)"])
        let revision = subscription.revision
        let schedule = RefreshSchedule(
            minSeconds: subscription.minSeconds, maxSeconds: subscription.maxSeconds,
            floorSeconds: settings.minimumRefreshSeconds)
        let timer = ContinuousClock()
        let fetchStarted = timer.now
        // The digests are computed while the feed arrives, against the newest version's shape when it is held: an
        // append is then found without another pass over the feed.
        let digesting = FeedDigestWhileArriving(shape: memo.shape(subscription: id, newest: subscription.newestLayout))
        let outcome = await fetch(subscription, chunks: digesting.chunks)
        let fetchTime = timer.now - fetchStarted
        if Task.isCancelled {
            digesting.cancel()
            return
        }
        var event: FeedEventDraft?
        var result = ServiceMetrics.FeedFetchResult.unchanged
        switch outcome {
        case .failed(let failure):
            digesting.cancel()
            result = .failed
            subscription.failureCount += 1
            subscription.lastFetch = FeedFetchRecord(
                time: fetchedAt, status: failure.status, bytes: nil, errorType: failure.type,
                errorMessage: failure.message)
            let interval = schedule.afterFailure(subscription.failureCount, retryAfter: failure.retryAfter, id: id)
            subscription.nextFetch = fetchedAt.addingTimeInterval(Double(interval))
            event = FeedEventDraft(kind: "failed", data: Self.failedData(subscription))
            logger.info(
                "feed refresh failed",
                metadata: ["subscription": "\(id)", "type": "\(failure.type)", "error": "\(failure.message)"])
        case .notModified(let headers):
            digesting.cancel()
            result = .notModified
            subscription.failureCount = 0
            subscription.lastFetch = FeedFetchRecord(time: fetchedAt, status: 304, bytes: 0)
            let hint = [RefreshSchedule.freshness(headers: headers, now: fetchedAt), subscription.feedHintSeconds]
                .compactMap { $0 }.max()
            subscription.nextFetch = fetchedAt.addingTimeInterval(Double(schedule.afterSuccess(hint: hint, id: id)))
        case .fetched(let feed, let headers, let resource):
            // Its memory serves the next fetch once the layout that reads it is done with it.
            defer { bodyMemory.keep(feed) }
            subscription.failureCount = 0
            subscription.lastFetch = FeedFetchRecord(time: fetchedAt, status: 200, bytes: feed.count)
            subscription.entityTag = resource.entityTag
            subscription.lastModified = resource.lastModified
            subscription.feedHintSeconds = RefreshSchedule.feedHint(feed)
            let hint = [RefreshSchedule.freshness(headers: headers, now: fetchedAt), subscription.feedHintSeconds]
                .compactMap { $0 }.max()
            subscription.nextFetch = fetchedAt.addingTimeInterval(Double(schedule.afterSuccess(hint: hint, id: id)))
            // What is left of the digests once the fetch is done (waiting for the last chunks), and the append test.
            let digestStarted = timer.now
            let digests = await digesting.finish(feed: feed)
            let known = memo.match(feed, digests: digests, subscription: id, newest: subscription.newestLayout)
            let digest = digests.whole
            let digestTime = timer.now - digestStarted
            if digest != subscription.feedDigest {
                do {
                    subscription.pending = try await startVersion(
                        subscription, feed: feed, digest: digest, append: known, base: resource.finalURL,
                        fetchedAt: fetchedAt, fetchTime: fetchTime, digestTime: digestTime)
                    subscription.feedDigest = digest
                    result = .newVersion
                } catch {
                    result = .failed
                    let problem = error as? ServiceProblem
                    subscription.failureCount = 1
                    subscription.lastFetch?.errorType = problem?.kind ?? "internal"
                    subscription.lastFetch?.errorMessage = problem?.detail ?? "\(error)"
                    subscription.nextFetch = fetchedAt.addingTimeInterval(
                        Double(schedule.afterFailure(1, retryAfter: nil, id: id)))
                    event = FeedEventDraft(kind: "failed", data: Self.failedData(subscription))
                }
            }
        }
        handlers.metrics.feedFetched(result)
        if try await store.updateSubscription(subscription, expectedRevision: revision, event: event) {
            if event != nil { await handlers.runner.events.changed(id) }
        } else {
            logger.info("a subscription changed during its refresh; its result is dropped", metadata: ["subscription": "\(id)"])
        }
    }

    /// What a fetch gave.
    private enum Outcome {
        case fetched([UInt8], headers: [String: String], RemoteResource)
        case notModified(headers: [String: String])
        case failed(Failure)
    }

    struct Failure: Sendable {
        var type: String
        var message: String
        var status: Int?
        var retryAfter: Int?
    }

    private func fetch(_ subscription: FeedSubscription, chunks: @escaping @Sendable (ByteBuffer) -> Void) async -> Outcome {
        let url = subscription.feedURL
        let validator = RemoteValidator(entityTag: subscription.entityTag, lastModified: subscription.lastModified)
        let answer: ConditionalFetch
        do {
            answer = try await handlers.resources.fetcher.fetchConditionally(
                url, validator: validator.isEmpty ? nil : validator, maximumBytes: settings.maximumFeedBytes,
                chunks: chunks, memory: bodyMemory)
        } catch {
            let type =
                switch error.code {
                case .tooLarge: "feed-too-large"
                case .privateAddress: "address-refused"
                default: "feed-unreachable"
                }
            return .failed(Failure(type: type, message: error.message, status: error.status))
        }
        switch answer.status {
        case 304 where !validator.isEmpty:
            return .notModified(headers: answer.headers)
        case 200:
            if let reason = FeedReader.notAFeedReason(firstBytes: answer.body.prefix(64 * 1024)) {
                return .failed(Failure(type: "not-a-feed", message: "\(url): \(reason)", status: 200))
            }
            return .fetched(answer.body, headers: answer.headers, answer.resource)
        default:
            let retryAfter =
                [429, 503].contains(answer.status)
                ? RefreshSchedule.retryAfter(answer.headers["retry-after"], now: clock.now) : nil
            return .failed(
                Failure(
                    type: "feed-unreachable",
                    message: "\(url): the server answered HTTP \(answer.status); the last good version stays",
                    status: answer.status, retryAfter: retryAfter))
        }
    }

    /// Starts the layout of a new version and counts what changed since the newest one.
    /// - Parameter known: How `feed` extends the newest version's, when the memo found it so.
    private func startVersion(
        _ subscription: FeedSubscription, feed: [UInt8], digest: String, append known: FeedAppend.Match?, base: String,
        fetchedAt: Date, fetchTime: Duration, digestTime: Duration
    ) async throws -> FeedVersion {
        // Where a new version's time goes before its layout runs, for the log: comparing with the version before
        // (reading its feed back and FeedAppend, unless the memo knew), counting what changed, storing and queueing
        // the layout.
        let timer = ContinuousClock()
        var started = timer.now
        func lap() -> String {
            let now = timer.now
            defer { started = now }
            return "\(Int(((now - started) / .milliseconds(1)).rounded()))"
        }
        let named = try LayoutOptionValues.named(storedJSON: subscription.options)
        let options = try handlers.checkedOptions(named)
        let predecessor = subscription.newestLayout
        var append = known
        var counted: (changes: FeedItemChanges, items: FeedVersionMemo.Items)?
        var oldFeed: (bytes: [UInt8], base: String?)?
        if let predecessor, let record = try await handlers.store.layout(predecessor) {
            if append == nil, let old = try await handlers.store.feed(of: predecessor) {
                oldFeed = (old, record.baseURL)
                append = FeedAppend.match(old: old, new: feed)
            }
            // Keys may depend on the base (an item known by its link): only the same base counts from the appendix.
            if let append, record.baseURL == base {
                counted = await memo.appending(
                    append, of: feed, to: predecessor, subscription: subscription.id, name: subscription.feedURL,
                    base: base)
            }
            if counted == nil, oldFeed == nil, let old = try await handlers.store.feed(of: predecessor) {
                oldFeed = (old, record.baseURL)
            }
        }
        let compareTime = lap()
        if counted == nil {
            let newItems = await FeedItemChanges.items(of: feed, name: subscription.feedURL, base: base) ?? []
            var oldItems: [FeedItemChanges.Item]?
            if let oldFeed {
                oldItems = await FeedItemChanges.items(of: oldFeed.bytes, name: subscription.feedURL, base: oldFeed.base)
            }
            counted = (FeedItemChanges(old: oldItems ?? [], new: newItems), FeedVersionMemo.Items(newItems))
        }
        let (changes, items) = counted!
        // The shape the next version is tested with: the match gives it; any other feed is scanned for it.
        let shape = append.map { $0.newShape } ?? FeedAppend.shape(of: feed)
        let countTime = lap()
        let (layoutId, _) = try await handlers.startLayout(
            feed: feed, name: subscription.feedURL, base: base, options: options, predecessor: predecessor,
            feedDigest: digest, append: append)
        let startTime = lap()
        memo.keep(
            FeedVersionMemo.Version(layoutId: layoutId, feedDigest: digest, shape: shape, items: items),
            subscription: subscription.id)
        let itemCount = settings.maximumItems.map { min($0, items.count) } ?? items.count
        logger.info(
            "new version of a subscribed feed",
            metadata: [
                "subscription": "\(subscription.id)", "layout": "\(layoutId)", "items": "\(itemCount)",
                "counted": "\(items.fromAppendix ? "the appended items" : "both feeds")",
                "compared": "\(known != nil ? "with the held shape" : oldFeed != nil ? "with the stored feed" : "-")",
                "fetch_ms": "\(Int((fetchTime / .milliseconds(1)).rounded()))",
                "digest_ms": "\(Int((digestTime / .milliseconds(1)).rounded()))", "compare_ms": "\(compareTime)",
                "count_ms": "\(countTime)", "start_ms": "\(startTime)",
            ])
        return FeedVersion(
            layoutId: layoutId, items: itemCount, fetchedAt: fetchedAt, added: changes.added,
            removed: changes.removed, changed: changes.changed)
    }

    // MARK: Versions

    /// Waits for the pending version's first page (or the end of its layout), then lists it and logs its `version`
    /// event; a layout that ended with no page logs a `failed` event instead.
    private func finishPending(_ id: String) async {
        while !Task.isCancelled {
            do {
                guard var subscription = try await store.subscription(id), let pending = subscription.pending else {
                    return
                }
                let layoutId = pending.layoutId
                let seen = await handlers.runner.events.version(of: layoutId)
                let record = try await handlers.store.layout(layoutId)
                let hasPage = record?.parts.contains { $0.pageCount > 0 } ?? false
                if record != nil, !hasPage, record?.status == "running" {
                    await handlers.runner.events.wait(for: layoutId, after: seen, timeout: .seconds(5))
                    continue
                }
                subscription.pending = nil
                let event: FeedEventDraft
                if hasPage {
                    subscription.versions.insert(pending, at: 0)
                    subscription.versions = Array(subscription.versions.prefix(Self.versionsKept))
                    event = FeedEventDraft(kind: "version", data: Self.versionData(id: id, pending))
                } else {
                    subscription.lastFetch?.errorType = "layout-failed"
                    subscription.lastFetch?.errorMessage =
                        record.map { "layout \(layoutId) \($0.status): \($0.errorMessage ?? "no page")" }
                        ?? "layout \(layoutId) was removed before its first page"
                    event = FeedEventDraft(kind: "failed", data: Self.failedData(subscription))
                }
                if try await store.updateSubscription(subscription, expectedRevision: subscription.revision, event: event) {
                    await handlers.runner.events.changed(id)
                    return
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("cannot record a new version", metadata: ["subscription": "\(id)", "error": "\(error)"])
                try? await clock.sleep(for: .seconds(1))
            }
        }
    }

    // MARK: Event data

    static func versionData(id: String, _ version: FeedVersion) -> String {
        var json = JSONWriter()
        json.beginObject()
        json.field("subscription", id)
        RouteHandlers.writeFields(of: version, into: &json)
        json.endObject()
        return String(decoding: json.takeBytes(), as: UTF8.self)
    }

    static func failedData(_ subscription: FeedSubscription) -> String {
        var json = JSONWriter()
        json.beginObject()
        json.field("subscription", subscription.id)
        if let fetch = subscription.lastFetch {
            json.field("time", RouteHandlers.timestamp(fetch.time))
            json.key("status")
            if let status = fetch.status { json.int(status) } else { json.null() }
            json.field("type", fetch.errorType ?? "internal")
            json.field("message", fetch.errorMessage ?? "")
        }
        json.field("failures", subscription.failureCount)
        json.field("nextFetch", RouteHandlers.timestamp(subscription.nextFetch))
        json.endObject()
        return String(decoding: json.takeBytes(), as: UTF8.self)
    }
}

extension LayoutServer {
    /// The refresher of the store's feed subscriptions; with a store that keeps none, a service that waits for the
    /// shutdown.
    var feedRefresher: any Service {
        guard let subscriptions = handlers.store as? any SubscriptionStore else { return NoRefresher() }
        return FeedRefresher(handlers: handlers, store: subscriptions, logger: logger)
    }
}

private struct NoRefresher: Service {
    func run() async throws { try? await gracefulShutdown() }
}
