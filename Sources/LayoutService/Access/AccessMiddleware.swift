import HTTPTypes
import Hummingbird
import NIOCore

/// A request's context in the service: Hummingbird's, with the caller's address and what ``RequestRules`` decided
/// (its request id and key), for the handlers and the problem details.
struct ServiceRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?
    var requestID = ""
    /// The name of the caller's key, when it sent a valid one.
    var keyName: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// Who counts against a quota: the key's name, else the address the request came from.
    var client: String {
        if let keyName { return "key:" + keyName }
        return "address:" + (remoteAddress?.ipAddress ?? "unknown")
    }
}

/// The router's side of ``RequestRules``: the first middleware every routed (or unroutable) request meets.
struct AccessMiddleware: RouterMiddleware {
    let rules: RequestRules

    func handle(
        _ request: Request, context: ServiceRequestContext,
        next: (Request, ServiceRequestContext) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let fields = request.headers
        let facts = RequestRules.Facts(
            method: request.method, route: context.endpointPath, path: Substring(request.uri.path),
            authorization: fields[.authorization].map { Substring($0) },
            origin: fields[.origin].map { Substring($0) }, requestID: fields[.xRequestID].map { Substring($0) },
            preflightMethod: fields[.accessControlRequestMethod].map { Substring($0) })
        let decision = rules.decide(facts)
        var context = context
        context.requestID = decision.requestID
        context.keyName = decision.keyName
        var response: Response
        if let answer = decision.answer {
            response = answer.response(requestID: decision.requestID)
        } else if decision.isPreflight {
            response = Response(status: .noContent, headers: [.cacheControl: "no-store"])
        } else {
            response = try await next(request, context)
        }
        for (name, value) in rules.responseFields(for: decision) { response.headers.append(HTTPField(name: name, value: value)) }
        rules.finish(
            decision, status: response.status.code, bytes: response.body.contentLength,
            duration: ContinuousClock.now - started)
        return response
    }
}
