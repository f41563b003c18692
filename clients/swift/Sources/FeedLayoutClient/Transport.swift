import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the loader asks for a URL: one GET, its status and body. URLSession's in the app; tests may give their own.
struct Transport: Sendable {
    var get: @Sendable (_ url: URL, _ headers: [String: String]) async throws -> (status: Int, body: Data)

    /// GETs through `session`. A cancelled task cancels its request (on Linux too, where the async URLSession
    /// methods are not all there): the data task is started with a completion handler and cancelled from the task's
    /// cancellation handler.
    static func urlSession(_ session: URLSession) -> Transport {
        let box = SessionBox(session: session)
        return Transport { url, headers in
            var request = URLRequest(url: url)
            request.httpMethod = "GET"
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            let holder = DataTaskHolder()
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let task = box.session.dataTask(with: request) { data, response, error in
                        if let error {
                            let cancelled = (error as? URLError)?.code == .cancelled
                            continuation.resume(throwing: cancelled ? CancellationError() : error)
                            return
                        }
                        guard let http = response as? HTTPURLResponse else {
                            continuation.resume(throwing: ServiceError.notHTTP(url: url))
                            return
                        }
                        continuation.resume(returning: (http.statusCode, data ?? Data()))
                    }
                    holder.start(task)
                }
            } onCancel: {
                holder.cancel()
            }
        }
    }
}

/// URLSession is thread-safe; this box says so to the compiler on platforms whose SDK does not.
private struct SessionBox: @unchecked Sendable {
    let session: URLSession
}

/// The data task of one request, which its cancellation handler may cancel before or after it starts.
private final class DataTaskHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func start(_ task: URLSessionDataTask) {
        lock.lock()
        self.task = task
        let cancelled = self.cancelled
        lock.unlock()
        task.resume()
        if cancelled { task.cancel() }
    }

    func cancel() {
        lock.lock()
        cancelled = true
        let task = self.task
        lock.unlock()
        task?.cancel()
    }
}

/// What went wrong talking to a service.
public enum ServiceError: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// The service answered with a problem (RFC 9457), e.g. `not-found` or `unauthorized`.
    case problem(url: URL, problem: Problem)
    /// The service answered an error status without a problem body (a proxy's error page, say).
    case status(url: URL, status: Int, body: String)
    /// The answer was not the JSON expected at that URL.
    case invalidAnswer(url: URL, reason: String)
    /// The answer was not HTTP.
    case notHTTP(url: URL)
    /// The layout failed before this page was made.
    case layoutFailed(id: String, code: String, message: String)
    /// The layout has no breakpoint with this index.
    case noSuchBreakpoint(id: String, index: Int, count: Int)

    public var description: String {
        switch self {
        case .problem(let url, let problem): "\(url): \(problem)"
        case .status(let url, let status, let body): "\(url): HTTP \(status): \(body.prefix(300))"
        case .invalidAnswer(let url, let reason): "\(url): \(reason)"
        case .notHTTP(let url): "\(url): not an HTTP answer"
        case .layoutFailed(let id, let code, let message): "layout \(id) failed (\(code)): \(message)"
        case .noSuchBreakpoint(let id, let index, let count):
            "layout \(id) has \(count) breakpoint layouts (0…\(count - 1)); there is no layout \(index)"
        }
    }
    public var errorDescription: String? { description }
}
