import HTTPTypes

extension RouteHandlers {
    /// Takes one creation from the caller's quota, or refuses: `429` over its rate, `503` with its bound of queued
    /// layouts reached (both with `Retry-After`).
    func admit(_ context: ServiceRequestContext) throws(ServiceProblem) {
        guard let refusal = quotas.admit(context.client) else { return }
        var problem: ServiceProblem
        switch refusal {
        case .rate(let seconds):
            problem = ServiceProblem(
                .tooManyRequests, "rate-limited", "Too many creations",
                detail: "\(Self.who(context)) may create \(Self.rateText(quotas.limits)); try again in \(seconds) s")
            problem.headers[.retryAfter] = String(seconds)
        case .queued(let limit):
            problem = ServiceProblem(
                .serviceUnavailable, "queue-full", "Too many layouts queued",
                detail: "\(Self.who(context)) has \(limit) layouts queued or running, the most the service takes "
                    + "(--max-queued-layouts); try again when one has finished")
            problem.headers[.retryAfter] = "10"
        }
        metrics.recordKeyRejection(key: context.keyName, status: problem.status.code)
        throw problem
    }

    private static func who(_ context: ServiceRequestContext) -> String {
        context.keyName.map { "the key '\($0)'" } ?? "this address"
    }

    private static func rateText(_ limits: CreationQuotas.Limits) -> String {
        let perMinute = limits.perMinute.rounded() == limits.perMinute ? String(Int(limits.perMinute)) : String(limits.perMinute)
        return "\(perMinute) layouts a minute, \(limits.burst) at once"
    }
}
