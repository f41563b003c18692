import HTTPTypes
import Hummingbird

/// One route of the service: its method, its path as the OpenAPI document writes it, and what answers it.
///
/// ``all`` is the one list of routes. The router, the `405` answers with their `Allow` header
/// (``ServiceRoutesTable``), the metrics' route labels and the page fast path's label are made from it, and a test
/// holds it against the `paths` of `schemas/feedlayout-service.openapi.yaml` both ways.
struct ServiceRoute: Sendable {
    let method: HTTPRequest.Method
    /// The path as the OpenAPI document writes it: `{name}` is one path component.
    let path: String
    /// Whether the last `{name}` takes the rest of the path, slashes included (the router's `**`).
    let takesRest: Bool
    /// Who may call it (``RequestRules`` decides with it).
    let access: RouteAccess
    let handle: @Sendable (RouteHandlers, Request, ServiceRequestContext) async throws -> Response

    /// - Parameter access: By default a write for any method but `GET`, a read under `/v1/`, else open.
    init(
        _ method: HTTPRequest.Method, _ path: String, takesRest: Bool = false, access: RouteAccess? = nil,
        _ handle: @escaping @Sendable (RouteHandlers, Request, ServiceRequestContext) async throws -> Response
    ) {
        self.method = method
        self.path = path
        self.takesRest = takesRest
        self.access = access ?? (method != .get ? .write : path.hasPrefix("/v1/") ? .read : .open)
        self.handle = handle
    }

    /// The path as the router takes it, which is also how it names the route (`context.endpointPath`) and so the
    /// route label in metrics: the document's path, with a final parameter that takes the rest as `**`.
    var routerPath: String {
        guard takesRest, let slash = path.lastIndex(of: "/") else { return path }
        return path[...slash] + "**"
    }
}

extension ServiceRoute {
    /// A page by index: the route the page fast path answers too (``PageFastPathHandler``).
    static let pagePath = "/v1/layouts/{id}/pages/{index}"

    /// Every route the service answers.
    static let all: [ServiceRoute] = [
        ServiceRoute(.post, "/v1/layouts") { try await $0.createLayout($1, context: $2) },
        ServiceRoute(.get, "/v1/layouts/{id}") { try await $0.layout($1, context: $2) },
        // Keeping the store: listing and removing layouts (RouteHandlers+Lifecycle).
        ServiceRoute(.get, "/v1/layouts", access: .admin) { try await $0.listLayouts($1, context: $2) },
        ServiceRoute(.delete, "/v1/layouts/{id}") { try await $0.deleteLayout($1, context: $2) },
        // Feed subscriptions (Feeds/RouteHandlers+Feeds).
        ServiceRoute(.post, "/v1/feeds") { try await $0.createFeed($1, context: $2) },
        // Every client's feed URLs: the operator's, as the list of layouts is.
        ServiceRoute(.get, "/v1/feeds", access: .admin) { try await $0.listFeeds($1, context: $2) },
        ServiceRoute(.get, "/v1/feeds/{id}") { try await $0.feed($1, context: $2) },
        ServiceRoute(.delete, "/v1/feeds/{id}") { try await $0.deleteFeed($1, context: $2) },
        ServiceRoute(.get, "/v1/feeds/{id}/events") { try await $0.feedEvents($1, context: $2) },
        ServiceRoute(.get, pagePath) { try await $0.page($1, context: $2) },
        ServiceRoute(.get, "/v1/pages") { try await $0.pageAfterCursor($1, context: $2) },
        ServiceRoute(.get, "/v1/layouts/{id}/items") { try await $0.items($1, context: $2) },
        ServiceRoute(.get, "/v1/layouts/{id}/snap") { try await $0.snap($1, context: $2) },
        ServiceRoute(.get, "/v1/layouts/{id}/style.css") { try await $0.style($1, context: $2) },
        ServiceRoute(.get, "/v1/layouts/{id}/fonts/{file}") { try await $0.font($1, context: $2) },
        ServiceRoute(.get, "/files/{path}", takesRest: true) { try await $0.imageFile($1, context: $2) },
        ServiceRoute(.get, "/") { handlers, request, _ in try handlers.clientFile("index.html", request: request) },
        ServiceRoute(.get, "/view/{id}") { try await $0.view($1, context: $2) },
        ServiceRoute(.get, "/view/feed/{id}") { handlers, request, _ in try handlers.clientFile("view.html", request: request) },
        ServiceRoute(.get, "/client/{file}") { handlers, request, context in
            try handlers.clientFile(context.parameters.get("file") ?? "", request: request)
        },
        ServiceRoute(.get, "/healthz") { try await $0.health($1, context: $2) },
        ServiceRoute(.get, "/readyz") { try await $0.readiness($1, context: $2) },
        ServiceRoute(.get, "/metrics", access: .admin) { try await $0.metricsText($1, context: $2) },
    ]

    /// Adds every route of ``all`` to a router, answered by `handlers`.
    static func addAll(to router: Router<ServiceRequestContext>, handlers: RouteHandlers) {
        for route in all {
            router.on(RouterPath(route.routerPath), method: route.method) { request, context in
                try await route.handle(handlers, request, context)
            }
        }
    }
}

/// The service's routes by path, to tell "no such route" (404) from "not with this method" (405, with `Allow`).
struct ServiceRoutesTable: Sendable {
    /// Each path split at `/`, with the methods it answers; a `{name}` component matches any one component, and a
    /// route that takes the rest matches any number after its last fixed one.
    private let routes: [(components: [Substring], takesRest: Bool, methods: [String])]

    init(_ routes: [ServiceRoute]) {
        var table: [(components: [Substring], takesRest: Bool, methods: [String])] = []
        for route in routes {
            let components = route.path.split(separator: "/")
            if let index = table.firstIndex(where: { $0.components == components }) {
                table[index].methods.append(route.method.rawValue)
            } else {
                table.append((components, route.takesRest, [route.method.rawValue]))
            }
        }
        self.routes = table
    }

    /// The methods `path` answers, in the table's order; none when no route has this path.
    func methods(forPath path: String) -> [String] {
        let components = path.split(separator: "/")
        for route in routes {
            let fixed = route.takesRest ? route.components.dropLast() : route.components[...]
            guard route.takesRest ? components.count > fixed.count : components.count == fixed.count else { continue }
            if zip(fixed, components).allSatisfy({ $0.hasPrefix("{") || $0 == $1 }) { return route.methods }
        }
        return []
    }
}
