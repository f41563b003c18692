import Foundation
import HTTPTypes
import Hummingbird
import LayoutPages
import LayoutStore
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Removing layouts and listing them: `DELETE /v1/layouts/{id}` and `GET /v1/layouts`.
extension RouteHandlers {
    // MARK: DELETE /v1/layouts/{id}

    /// Removes a layout: `204`, then `404` for it and everything under it. A layout still being computed is
    /// stopped first (taken out of the queue, or cancelled and waited for), then removed.
    func deleteLayout(_ request: Request, context: some RequestContext) async throws -> Response {
        let id = try Self.layoutID(context)
        logger.info("removing a layout", metadata: ["layout": "\(id)"])
        guard try await removeLayout(id) else { throw ServiceProblem.notFound("no layout \(id)") }
        logger.info("layout removed", metadata: ["layout": "\(id)"])
        return Response(status: .noContent, headers: [.cacheControl: "no-store"])
    }

    /// Removes a layout from the store and from the service's memory: the one way layouts go, for `DELETE` and for
    /// ``StoreEvictor``.
    ///
    /// Its computation stops first (this instance's; an instance sharing the store that computes it finds its row
    /// gone at its next page and stops). Then one transaction removes its rows. Then the pages, pin indexes, style
    /// sheet and read marks in memory go, and requests waiting for its pages are woken (they then answer `404`).
    /// - Returns: Whether there was such a layout.
    func removeLayout(_ id: String) async throws -> Bool {
        await runner.stop(id)
        let removed = try await store.removeLayout(id)
        forget(id)
        await runner.events.changed(id)
        return removed
    }

    /// Lets go of everything this instance holds in memory for a layout.
    func forget(_ id: String) {
        pageCache.removeLayout(id)
        indexes.forget(id)
        styles.forget(id)
        pageCache.reads.forget(id)
    }

    // MARK: GET /v1/layouts

    /// The most layouts one listing answers with, and how many without `limit`.
    static let listLimits = (maximum: 1000, default: 100)

    /// A listing's `limit` and `after` (the `next` of the listing before), for the lists of layouts and of
    /// subscriptions (`what` names what an `after` holds the id of).
    static func listing(_ request: Request, of what: String) throws -> (limit: Int, after: LayoutListCursor?) {
        let query = request.uri.queryParameters
        let limit = try Self.integer(query, "limit", default: Self.listLimits.default, in: 1...Self.listLimits.maximum)
        guard let text = query["after"] else { return (limit, nil) }
        guard let cursor = LayoutListCursor(String(text)) else {
            throw ServiceProblem.invalidRequest(
                "after is the `next` of a previous listing (digits, '-' and a \(what) id)", field: "after")
        }
        return (limit, cursor)
    }

    /// A listing's answer: `{"<name>": [what `items` writes], "next": the next listing's `after` or null}`.
    static func listingResponse(
        of name: StaticString, next: LayoutListCursor?, _ items: (inout JSONWriter) async throws -> Void
    ) async rethrows -> Response {
        var json = JSONWriter()
        json.beginObject()
        json.key(name)
        json.beginArray()
        try await items(&json)
        json.endArray()
        json.key("next")
        if let next { json.string(next.description) } else { json.null() }
        json.endObject()
        json.appendRaw("\n")
        return Self.json(json.takeBytes(), cacheControl: "no-store")
    }

    /// The layouts, in the order they were created, `limit` at a time; `next` is the `after` of the next listing
    /// (`null` on the last).
    func listLayouts(_ request: Request, context: some RequestContext) async throws -> Response {
        let (limit, cursor) = try Self.listing(request, of: "layout")
        // The reads gathered since the evictor's last pass first, so that `lastRead` is current.
        await pageCache.reads.flush(to: store, at: settings.clock.now, logger: logger)
        var layouts = try await store.listLayouts(after: cursor, limit: limit + 1)
        let next = layouts.count > limit ? layouts[limit - 1].cursor : nil
        layouts = Array(layouts.prefix(limit))
        return await Self.listingResponse(of: "layouts", next: next) { json in
            for layout in layouts {
                json.beginObject()
                json.field("id", layout.id)
                json.field("status", layout.status)
                json.field("items", layout.itemCount)
                json.field("bytes", layout.bytes)
                json.field("created", Self.timestamp(layout.created))
                json.key("lastRead")
                if let lastRead = layout.lastRead { json.string(Self.timestamp(lastRead)) } else { json.null() }
                json.key("links")
                json.beginObject()
                json.field("self", "/v1/layouts/" + layout.id)
                json.endObject()
                json.endObject()
            }
        }
    }

    /// `2026-11-28T19:00:00Z`: UTC, to the second.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
