import ByteTools
import Foundation
import HTTPTypes
import Hummingbird
import LayoutPages
import LayoutStore
import Logging
import NIOCore
import Synchronization

/// Feed subscriptions: `POST /v1/feeds`, `GET /v1/feeds`, `GET` and `DELETE /v1/feeds/{id}`, and the event stream
/// `GET /v1/feeds/{id}/events`. ``FeedRefresher`` does the fetching.
extension RouteHandlers {
    /// The store's subscriptions (both stores keep them).
    var subscriptions: any SubscriptionStore {
        get throws {
            guard let subscriptions = store as? any SubscriptionStore else {
                throw ServiceProblem(
                    .notImplemented, "not-implemented", "No subscriptions", detail: "this store keeps no subscriptions")
            }
            return subscriptions
        }
    }

    /// The clock subscriptions go by.
    var refreshClock: any ServiceClock { settings.refreshClock ?? settings.clock }

    /// The id of a subscription: a digest of its feed URL and of what decides its layouts' ids besides the feed's
    /// bytes (options, fonts, `--max-items`, the image root), so the same request has the same id in every process
    /// with the same fonts.
    static func subscriptionID(identity: String, feedURL: String, imageRoot: String?) -> String {
        let text = "feedlayout.feed/1\n" + identity + "image-root=" + (imageRoot ?? "-") + "\nurl=" + feedURL + "\n"
        return String(SHA256.hexDigest(Array(text.utf8)).prefix(32))
    }

    // MARK: POST /v1/feeds

    /// The largest body of `POST /v1/feeds` (a URL and options).
    static let feedRequestBytes = 256 * 1024

    func createFeed(_ request: Request, context: ServiceRequestContext) async throws -> Response {
        guard !isStopping.load(ordering: .relaxed) else { throw Self.stopping }
        // A subscription makes layouts: it takes from the same quota as a posted layout.
        try admit(context)
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.feedRequestBytes)
        } catch is NIOTooManyBytesError {
            throw ServiceProblem(
                .contentTooLarge, "feed-too-large", "Request too large",
                detail: "a subscription's request body is at most \(Self.feedRequestBytes) bytes")
        }
        let feedRequest = try FeedRequest(body: [UInt8](buffer: body))
        let options = try checkedOptions(feedRequest.options)
        let id = Self.subscriptionID(
            identity: layoutIdentity(options), feedURL: feedRequest.feed, imageRoot: settings.imageRoot)
        let subscription = FeedSubscription(
            id: id, feedURL: feedRequest.feed, options: LayoutOptionValues.storedJSON(feedRequest.options),
            minSeconds: feedRequest.minSeconds, maxSeconds: feedRequest.maxSeconds, createdAt: refreshClock.now,
            nextFetch: refreshClock.now)
        let isNew = try await subscriptions.insertSubscription(subscription)
        if isNew {
            logger.info("feed subscribed", metadata: ["subscription": "\(id)", "feed": "\(feedRequest.feed)"])
            // The first fetch starts at once.
            refreshWakes.wake()
        } else {
            quotas.refund(context.client)
        }
        var response = try await feedResponse(id)
        response.status = isNew ? .created : .ok
        response.headers[.location] = "/v1/feeds/" + id
        return response
    }

    // MARK: GET /v1/feeds/{id}

    func feed(_ request: Request, context: some RequestContext) async throws -> Response {
        try await feedResponse(try Self.subscriptionID(context))
    }

    /// The `{id}` of the path: 32 lower-case hex digits (anything else names no subscription).
    static func subscriptionID(_ context: some RequestContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        guard id.utf8.count == 32, id.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
            throw ServiceProblem.notFound("no subscription \(id.prefix(64)); subscription ids are 32 lower-case hex digits")
        }
        return id
    }

    private func feedResponse(_ id: String) async throws -> Response {
        guard let subscription = try await subscriptions.subscription(id) else {
            throw ServiceProblem.notFound("no subscription \(id)")
        }
        var json = JSONWriter()
        try await write(subscription, to: &json)
        json.appendRaw("\n")
        return Self.json(json.takeBytes(), cacheControl: "no-cache")
    }

    /// A subscription's state as `GET /v1/feeds/{id}` gives it (and each entry of `GET /v1/feeds`).
    private func write(_ subscription: FeedSubscription, to json: inout JSONWriter) async throws {
        // The newest version whose layout is done.
        var latest: String?
        for version in subscription.versions {
            if try await store.layout(version.layoutId)?.status == "done" {
                latest = version.layoutId
                break
            }
        }
        json.beginObject()
        json.field("id", subscription.id)
        json.field("feed", subscription.feedURL)
        json.key("options")
        json.beginObject()
        let named = (try? LayoutOptionValues.named(storedJSON: subscription.options)) ?? [:]
        for (name, value) in named.sorted(by: { $0.key < $1.key }) {
            json.key(text: name)
            switch value {
            case .bool(let flag): json.bool(flag)
            case .number(let number): json.number(number)
            case .string(let text): json.string(text)
            case .strings(let texts):
                json.beginArray()
                for text in texts { json.string(text) }
                json.endArray()
            }
        }
        json.endObject()
        json.key("refresh")
        json.beginObject()
        json.field("minSeconds", subscription.minSeconds)
        json.field("maxSeconds", subscription.maxSeconds)
        json.endObject()
        json.field("created", Self.timestamp(subscription.createdAt))
        json.field("latest", latest)
        json.field("pending", subscription.pending?.layoutId)
        json.key("versions")
        json.beginArray()
        for version in subscription.versions {
            json.beginObject()
            Self.writeFields(of: version, into: &json)
            json.endObject()
        }
        json.endArray()
        json.key("lastFetch")
        if let fetch = subscription.lastFetch {
            json.beginObject()
            json.field("time", Self.timestamp(fetch.time))
            json.field("status", fetch.status)
            json.field("bytes", fetch.bytes)
            json.key("error")
            if let type = fetch.errorType {
                json.beginObject()
                json.field("type", "urn:feedlayout:problem:" + type)
                json.field("message", fetch.errorMessage ?? "")
                json.endObject()
            } else {
                json.null()
            }
            json.endObject()
        } else {
            json.null()
        }
        json.field("nextFetch", Self.timestamp(subscription.nextFetch))
        json.field("failures", subscription.failureCount)
        json.key("validators")
        json.beginObject()
        json.field("etag", subscription.entityTag)
        json.field("lastModified", subscription.lastModified)
        json.endObject()
        json.key("links")
        json.beginObject()
        json.field("self", "/v1/feeds/" + subscription.id)
        json.field("events", "/v1/feeds/" + subscription.id + "/events")
        json.field("latest", latest.map { "/v1/layouts/" + $0 })
        json.endObject()
        json.endObject()
    }

    // MARK: GET /v1/feeds

    /// The subscriptions, in the order they were created, `limit` at a time; `next` is the `after` of the next
    /// listing (`null` on the last).
    func listFeeds(_ request: Request, context: some RequestContext) async throws -> Response {
        let (limit, cursor) = try Self.listing(request, of: "subscription")
        var found = try await subscriptions.listSubscriptions(after: cursor, limit: limit + 1)
        let next =
            found.count > limit
            ? LayoutListCursor(
                createdMicroseconds: found[limit - 1].createdAt.microsecondsSince1970, id: found[limit - 1].id) : nil
        found = Array(found.prefix(limit))
        return try await Self.listingResponse(of: "feeds", next: next) { json in
            for subscription in found { try await write(subscription, to: &json) }
        }
    }

    // MARK: DELETE /v1/feeds/{id}

    /// Ends a subscription: `204`; its feed is fetched no more, and its versions stay as ordinary layouts (which
    /// the store's bounds may then remove).
    func deleteFeed(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.subscriptionID(context)
        guard try await subscriptions.removeSubscription(id) else { throw ServiceProblem.notFound("no subscription \(id)") }
        logger.info("feed unsubscribed", metadata: ["subscription": "\(id)"])
        // Its event streams end.
        await runner.events.changed(id)
        return Response(status: .noContent, headers: [.cacheControl: "no-store"])
    }

    // MARK: GET /v1/feeds/{id}/events

    /// Server-Sent Events: every event logged after `Last-Event-ID` (all of them without it), then each new one as
    /// it is logged, with a keep-alive comment after every quiet ``ServiceSettings/eventKeepAlive``. The stream ends
    /// when the subscription is removed or the service stops.
    func feedEvents(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.subscriptionID(context)
        let subscriptions = try self.subscriptions
        guard try await subscriptions.subscription(id) != nil else {
            throw ServiceProblem.notFound("no subscription \(id)")
        }
        var after = 0
        if let text = request.headers[.lastEventID] {
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)), number >= 0 else {
                throw ServiceProblem.invalidRequest(
                    "Last-Event-ID is the id of an event this stream sent (a whole number)", field: "Last-Event-ID")
            }
            after = number
        }
        let first = after
        let events = runner.events
        let keepAlive = settings.eventKeepAlive
        let stopping: @Sendable () -> Bool = { [self] in self.isStopping.load(ordering: .relaxed) }
        return Response(
            status: .ok,
            headers: [
                .contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store",
                HTTPField.Name("X-Accel-Buffering")!: "no",
            ],
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: ": feedlayout events of subscription \(id)\n\n"))
                var last = first
                while !stopping(), !Task.isCancelled {
                    let seen = await events.version(of: id)
                    let batch = try await subscriptions.subscriptionEvents(id, after: last, limit: 100)
                    var text = ""
                    for event in batch {
                        text += "id: \(event.id)\nevent: \(event.kind)\ndata: \(event.data)\n\n"
                        last = event.id
                    }
                    if !text.isEmpty { try await writer.write(ByteBuffer(string: text)) }
                    if batch.count == 100 { continue }
                    if try await subscriptions.subscription(id) == nil { break }
                    await events.wait(for: id, after: seen, timeout: keepAlive)
                    if await events.version(of: id) == seen, !stopping() {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    }
                }
                try await writer.finish(nil)
            })
    }
}

extension HTTPField.Name {
    /// `Last-Event-ID`, which an event stream's client sends when it connects again.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}

extension RouteHandlers {
    /// Whether a layout is one a live subscription keeps (its newest finished version, or the one being made):
    /// ``StoreEvictor`` passes over it. When the store cannot say, it is kept.
    func isKeptBySubscription(_ id: String) async -> Bool {
        guard let subscriptions = store as? any SubscriptionStore else { return false }
        do {
            return try await subscriptions.subscriptionLayouts().contains(id)
        } catch {
            return true
        }
    }
}

extension RouteHandlers {
    /// A version's members, as the state's `versions` and the `version` event both give them.
    static func writeFields(of version: FeedVersion, into json: inout JSONWriter) {
        json.field("layout", version.layoutId)
        json.field("items", version.items)
        json.field("fetchedAt", timestamp(version.fetchedAt))
        json.key("changes")
        json.beginObject()
        json.field("added", version.added)
        json.field("removed", version.removed)
        json.field("changed", version.changed)
        json.endObject()
    }
}
