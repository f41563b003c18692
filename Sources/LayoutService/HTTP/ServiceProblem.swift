import HTTPTypes
import Hummingbird
import LayoutStore
import Logging
import LayoutPages
import NIOCore

/// An answer other than success, as RFC 9457 problem details (`application/problem+json`): `type` (a URN naming
/// the kind of problem), `title`, `status`, `detail`, and, where they apply, `field` (the request field or query
/// parameter at fault) and `layoutStatus` (for a page that is not made yet: the problem's own `status` member is
/// the HTTP status, as the RFC reserves it), and `requestId` (the `X-Request-Id` of the answer, to find its log line).
struct ServiceProblem: Error, Sendable {
    var status: HTTPResponse.Status
    /// The last part of the type URN: `invalid-options`, `not-found`, …
    var kind: String
    var title: String
    var detail: String
    var field: String?
    var layoutStatus: String?
    var headers: HTTPFields = [:]

    init(
        _ status: HTTPResponse.Status, _ kind: String, _ title: String, detail: String, field: String? = nil,
        layoutStatus: String? = nil
    ) {
        self.status = status
        self.kind = kind
        self.title = title
        self.detail = detail
        // A field is named or left out: an empty name (a request's `""` member) names nothing.
        self.field = field?.isEmpty == false ? field : nil
        self.layoutStatus = layoutStatus
    }

    static func invalidRequest(_ detail: String, field: String? = nil) -> ServiceProblem {
        ServiceProblem(.badRequest, "invalid-request", "The request is not valid", detail: detail, field: field)
    }

    static func invalidOptions(_ detail: String, field: String?) -> ServiceProblem {
        ServiceProblem(.badRequest, "invalid-options", "An option is not valid", detail: detail, field: field)
    }

    static func notFound(_ detail: String, field: String? = nil) -> ServiceProblem {
        ServiceProblem(.notFound, "not-found", "Not found", detail: detail, field: field)
    }

    /// The shared store does not answer (PostgreSQL restarting, say): try again in a moment.
    static func storeUnavailable(retryAfterSeconds: Int = 2) -> ServiceProblem {
        var problem = ServiceProblem(
            .serviceUnavailable, "store-unavailable", "The store is unavailable",
            detail: "the service cannot reach its store at the moment; try again in \(retryAfterSeconds) s")
        problem.headers[.retryAfter] = "\(retryAfterSeconds)"
        return problem
    }

    /// The store's disk is full: nothing of the request was kept. A 507, so that a client (and an operator reading
    /// the access log) sees a full disk for what it is, not an internal error; no `Retry-After`: space comes back
    /// when someone frees it, not after a time the service could tell.
    static let insufficientStorage = ServiceProblem(
        .init(code: 507, reasonPhrase: "Insufficient Storage"), "insufficient-storage", "Insufficient storage",
        detail: "the store's disk is full: nothing of this request was stored; try again once space is freed")

    /// What a client is told of a store's failure, decided here for every route: a store that is restarting or slow is
    /// a 503 to try again after; a full disk is a 507; anything else is logged in full and answered as the 500 of
    /// every internal failure, which names no path or SQL.
    init(storeError error: StoreError, logger: Logger) {
        if error.isTransient {
            self = .storeUnavailable()
        } else if error.code == .storageFull {
            logger.error("the store's disk is full", metadata: ["error": "\(error.message)"])
            self = .insufficientStorage
        } else {
            logger.error("the store failed", metadata: ["code": "\(error.code)", "error": "\(error.message)"])
            self.init(.internalServerError, "internal", "Internal error", detail: "the request could not be answered")
        }
    }

    /// The response: the problem as JSON, with its headers.
    func response(requestID: String? = nil) -> Response {
        var json = JSONWriter()
        json.beginObject()
        json.field("type", "urn:feedlayout:problem:" + kind)
        json.field("title", title)
        json.field("status", status.code)
        json.field("detail", detail)
        if let field { json.field("field", field) }
        if let layoutStatus { json.field("layoutStatus", layoutStatus) }
        if let requestID { json.field("requestId", requestID) }
        json.endObject()
        var fields = headers
        fields[.contentType] = "application/problem+json"
        fields[.cacheControl] = "no-store"
        return Response(
            status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: json.takeBytes())))
    }
}

/// Turns every error a handler throws into problem details: the service's own problems as they are, Hummingbird's
/// (an unknown route, a body over the limit) with the matching kind, and anything else as a 500 that says no more
/// than that, so no internal message reaches a client.
struct ProblemMiddleware: RouterMiddleware {
    let routes: ServiceRoutesTable

    func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        let requestID = context.requestID
        do {
            return try await next(request, context)
        } catch let problem as ServiceProblem {
            return problem.response(requestID: requestID)
        } catch let error as StoreError {
            return ServiceProblem(storeError: error, logger: context.logger).response(requestID: requestID)
        } catch let error as HTTPError {
            return problem(for: error, request: request).response(requestID: requestID)
        } catch is NIOTooManyBytesError {
            return ServiceProblem(
                .contentTooLarge, "feed-too-large", "Request body too large",
                detail: "the request body is larger than the service accepts (--max-feed-bytes)", field: "feedText"
            ).response(requestID: requestID)
        } catch let error as CancellationError {
            // The service is stopping: nothing to answer, nothing to report.
            throw error
        } catch {
            context.logger.error(
                "request failed",
                metadata: ["error": "\(error)", "path": "\(request.uri.path)", "request_id": "\(requestID)"])
            return ServiceProblem(
                .internalServerError, "internal", "Internal error", detail: "the request could not be answered"
            ).response(requestID: requestID)
        }
    }

    private func problem(for error: HTTPError, request: Request) -> ServiceProblem {
        switch error.status {
        case .notFound:
            let allowed = routes.methods(forPath: request.uri.path)
            if !allowed.isEmpty {
                var problem = ServiceProblem(
                    .methodNotAllowed, "method-not-allowed", "Method not allowed",
                    detail: "\(request.uri.path) answers \(allowed.joined(separator: ", ")), not \(request.method)")
                problem.headers[.allow] = allowed.joined(separator: ", ")
                return problem
            }
            return .notFound("no route \(request.method) \(request.uri.path); see the service's OpenAPI document")
        case .contentTooLarge:
            return ServiceProblem(
                .contentTooLarge, "feed-too-large", "Request body too large",
                detail: "the request body is larger than the limit (--max-feed-bytes)")
        default:
            return ServiceProblem(
                error.status, "http-\(error.status.code)", error.status.reasonPhrase,
                detail: error.body ?? error.status.reasonPhrase)
        }
    }
}
