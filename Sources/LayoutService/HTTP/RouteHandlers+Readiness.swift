import Hummingbird
import LayoutStore
import Logging
import Synchronization

/// `GET /readyz`: whether this instance can answer more than `/healthz` says (the process is alive): its store
/// answers a cheap question. A load balancer or an orchestrator sends traffic elsewhere while it is `503`.
extension RouteHandlers {
    func readiness(_ request: Request, context: some RequestContext) async throws -> Response {
        guard !isStopping.load(ordering: .relaxed) else { throw Self.stopping }
        do {
            try await store.checkAvailability()
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // Whatever the store's trouble (PostgreSQL down, a file that went away), the instance is not ready; the
            // reason is for the operator's log, not for the prober.
            logger.warning("the store is not ready", metadata: ["error": "\(error)"])
            throw ServiceProblem.storeUnavailable()
        }
        return Self.json(Array(#"{"status":"ready"}"#.utf8) + [0x0A], cacheControl: "no-store")
    }
}
