import HTTPTypes
import Synchronization

/// Who may call a route.
enum RouteAccess: Sendable, Equatable {
    /// Anyone: the web client's files, health.
    case open
    /// Anyone, unless the service was started with `--private-reads`: then a key with `read`.
    case read
    /// A key with `write` (`POST`, `DELETE`).
    case write
    /// A key with `admin` (operations: metrics, the list of every client's layouts).
    case admin
}

/// What the service decides for every request, in one place for the router and for the page fast path (which
/// answers cached pages before the router sees them): who the caller is and whether the route lets them in, the
/// request id, the CORS headers, and, once answered, the access log line and the metrics.
///
/// Both paths call ``decide(_:)`` before answering, add ``responseFields(for:status:)`` to the answer and call
/// ``finish(_:status:bytes:duration:)`` after it; a test holds cached and uncached answers of one page to the
/// same fields.
final class RequestRules: Sendable {
    /// Keys, when the service has any: then writes need one, and reads too with `privateReads`.
    let keys: APIKeys?
    let privateReads: Bool
    /// Origins whose pages may read the read routes (`--cors-origin`); `*` is any.
    let corsOrigins: [String]
    let accessLog: AccessLog?
    let metrics: ServiceMetrics
    /// Each route's access, by the router's name for it and its method.
    private let access: [String: RouteAccess]
    /// The routes by path (a preflight asks about a path; the problem middleware answers `405` from it too).
    let table: ServiceRoutesTable
    private let requestIDs = RequestIDs()

    init(
        routes: [ServiceRoute], keys: APIKeys?, privateReads: Bool, corsOrigins: [String], accessLog: AccessLog?,
        metrics: ServiceMetrics
    ) {
        self.keys = keys.flatMap { $0.isEmpty ? nil : $0 }
        self.privateReads = privateReads
        self.corsOrigins = corsOrigins
        self.accessLog = accessLog
        self.metrics = metrics
        var access: [String: RouteAccess] = [:]
        for route in routes { access[route.method.rawValue + " " + route.routerPath] = route.access }
        self.access = access
        table = ServiceRoutesTable(routes)
    }

    /// What a request brings that the rules read.
    struct Facts {
        var method: HTTPRequest.Method
        /// The route as the router names it (`/v1/layouts/{id}`); nil when no route has this path and method.
        var route: String?
        var path: Substring
        var authorization: Substring?
        var origin: Substring?
        var requestID: Substring?
        /// For a preflight: `Access-Control-Request-Method`.
        var preflightMethod: Substring?
        /// The key `authorization` was found to be before, on this connection (the fast path remembers it: a
        /// client sends the same token with every request), so its digest is not taken again.
        var resolvedKey: APIKey?? = nil
    }

    /// The rules' answer for one request.
    struct Decision: Sendable {
        var requestID: String
        /// The caller's key, when it sent a valid one.
        var key: APIKey?
        var keyName: String? { key?.name }
        /// The answer instead of the route's: a missing or wrong key, a scope the key lacks, a preflight.
        var answer: ServiceProblem?
        /// A preflight the service allows: answered `204` with ``responseFields(for:status:)``.
        var isPreflight = false
        /// The `Origin` allowed to read the answer.
        var corsOrigin: String?
        /// Whether the answer varies by `Origin` (CORS is configured and this is a read route).
        var variesByOrigin = false
        var method: HTTPRequest.Method
        var route: String
        var path: String
    }

    func decide(_ facts: Facts) -> Decision {
        let requestID = requestIDs.accept(facts.requestID)
        let route = facts.route ?? "unknown"
        var decision = Decision(requestID: requestID, method: facts.method, route: route, path: String(facts.path))
        // A preflight asks about the route its `Access-Control-Request-Method` names.
        if facts.method == .options, let asked = facts.preflightMethod {
            return preflight(&decision, facts: facts, asked: asked)
        }
        let access = facts.route.flatMap { self.access[facts.method.rawValue + " " + $0] } ?? .open
        if !corsOrigins.isEmpty, access == .read || access == .open {
            decision.variesByOrigin = true
            decision.corsOrigin = facts.origin.flatMap(allowedOrigin)
        }
        guard let keys else { return decision }
        let needed: AccessScope? =
            switch access {
            case .open: nil
            case .read: privateReads ? .read : nil
            case .write: .write
            case .admin: .admin
            }
        let key = facts.resolvedKey ?? facts.authorization.flatMap(Self.bearerToken).flatMap { keys.key(forToken: $0.utf8) }
        decision.key = key
        guard let needed else { return decision }
        guard let key else {
            let route = "\(facts.method) \(route)"
            decision.answer =
                facts.authorization == nil
                ? .unauthorized("\(route) needs a key: send Authorization: Bearer TOKEN", invalidToken: false)
                : .unauthorized(
                    "\(route): the Authorization header is not a Bearer token the service knows", invalidToken: true)
            return decision
        }
        guard key.allows(needed) else {
            decision.answer = ServiceProblem(
                .forbidden, "forbidden", "Forbidden",
                detail: "the key '\(key.name)' lacks the scope '\(needed.rawValue)' that \(facts.method) \(route) needs")
            return decision
        }
        return decision
    }

    private func preflight(_ decision: inout Decision, facts: Facts, asked: Substring) -> Decision {
        decision.route = "preflight"
        let methods = table.methods(forPath: String(facts.path))
        guard !corsOrigins.isEmpty, asked == "GET" || asked == "HEAD", methods.contains("GET") else {
            decision.answer = ServiceProblem(
                .forbidden, "cors-refused", "Cross-origin request refused",
                detail: corsOrigins.isEmpty
                    ? "the service allows no other origin (--cors-origin)"
                    : "only GET of the read routes may be asked for from another origin, not \(asked) \(facts.path)")
            return decision
        }
        guard let origin = facts.origin.flatMap(allowedOrigin) else {
            decision.answer = ServiceProblem(
                .forbidden, "cors-refused", "Cross-origin request refused",
                detail: "the origin \(facts.origin.map { "'\($0)'" } ?? "(none)") is not one the service allows (--cors-origin)")
            return decision
        }
        decision.isPreflight = true
        decision.corsOrigin = origin
        decision.variesByOrigin = true
        return decision
    }

    private func allowedOrigin(_ origin: Substring) -> String? {
        if corsOrigins.contains(where: { $0 == origin }) { return String(origin) }
        return corsOrigins.contains("*") ? String(origin) : nil
    }

    /// The token of `Bearer TOKEN` (the scheme in any case, RFC 9110).
    static func bearerToken(_ header: Substring) -> Substring? {
        guard header.count > 7, header.prefix(7).lowercased() == "bearer " else { return nil }
        let token = header.dropFirst(7).drop(while: { $0 == " " })
        return token.isEmpty ? nil : token
    }

    /// The fields every answer to this request carries beside its own: its request id and, for CORS, who may read
    /// it.
    func responseFields(for decision: Decision) -> [(HTTPField.Name, String)] {
        var fields: [(HTTPField.Name, String)] = [(.xRequestID, decision.requestID)]
        if decision.variesByOrigin { fields.append((.vary, "Origin")) }
        if let origin = decision.corsOrigin {
            fields.append((.accessControlAllowOrigin, origin))
            if decision.isPreflight {
                fields.append((.accessControlAllowMethods, "GET, HEAD"))
                fields.append((.accessControlAllowHeaders, "Authorization, If-None-Match, X-Request-Id"))
                fields.append((.accessControlMaxAge, "600"))
            } else {
                fields.append((.accessControlExposeHeaders, "ETag, Location, Retry-After, X-Request-Id"))
            }
        }
        return fields
    }

    /// Records an answered request: the access log line and the metrics.
    func finish(_ decision: Decision, status: Int, bytes: Int?, duration: Duration) {
        metrics.recordRequest(
            method: decision.method.rawValue, route: decision.route, status: status, duration: duration)
        if keys != nil { metrics.recordKeyRequest(key: decision.keyName, status: status) }
        accessLog?.record(
            AccessLog.Entry(
                method: decision.method.rawValue, route: decision.route, path: decision.path, status: status,
                bytes: bytes, duration: duration, requestID: decision.requestID, keyName: decision.keyName))
    }
}

extension HTTPField.Name {
    static let xRequestID = HTTPField.Name("X-Request-Id")!
}

extension ServiceProblem {
    /// `401`: no key, or one the service does not know.
    static func unauthorized(_ detail: String, invalidToken: Bool) -> ServiceProblem {
        var problem = ServiceProblem(.unauthorized, "unauthorized", "A key is needed", detail: detail)
        problem.headers[.wwwAuthenticate] =
            invalidToken ? "Bearer realm=\"feedlayout\", error=\"invalid_token\"" : "Bearer realm=\"feedlayout\""
        return problem
    }
}

/// Request ids: the client's own `X-Request-Id` when it is a plain one (1 to 128 letters, digits and `-._:`; anything
/// else could forge log lines), else one made here: a random prefix for this process and a counter.
final class RequestIDs: Sendable {
    private let prefix: String
    private let counter = Atomic<UInt64>(0)

    init() {
        prefix = String(UInt64.random(in: 0...UInt64.max) >> 16, radix: 16)
    }

    func accept(_ offered: Substring?) -> String {
        if let offered, Self.isPlain(offered) { return String(offered) }
        let next = counter.add(1, ordering: .relaxed).newValue
        return prefix + "-" + String(next, radix: 16)
    }

    static func isPlain(_ id: Substring) -> Bool {
        guard (1...128).contains(id.utf8.count) else { return false }
        return id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: ":"):
                true
            default: false
            }
        }
    }
}
