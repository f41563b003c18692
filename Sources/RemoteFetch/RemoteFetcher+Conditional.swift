import AsyncHTTPClient
import NIOCore
import NIOHTTP1

/// A whole GET that may be conditional, for a feed fetched again and again: what the server answered, its
/// headers, and the body of a `200`.
public struct ConditionalFetch: Sendable {
    /// The HTTP status: `200` (with ``body``), `304` (not modified since the validator sent), or any other the
    /// server answered (redirects are followed first).
    public var status: Int
    /// The response's headers, names lowercased, the first value of each.
    public var headers: [String: String]
    /// What is known of the resource: its final URL, `ETag`, `Last-Modified`, `Content-Type`.
    public var resource: RemoteResource
    /// The whole body of a `200`; empty otherwise.
    public var body: [UInt8]

    public init(status: Int, headers: [String: String], resource: RemoteResource, body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.resource = resource
        self.body = body
    }
}

extension RemoteFetcher {
    /// Fetches a whole resource, conditionally when `validator` holds anything (`If-None-Match`,
    /// `If-Modified-Since`), and returns any status the server answered with its headers (a caller decides what a
    /// `429` with `Retry-After`, a `304` or a `500` mean to it); the body is read for a `200` only.
    ///
    /// The address policy, redirects, timeouts and the concurrency limit are those of every fetch: the total
    /// timeout bounds the response head, the read timeout every wait for the body's bytes.
    /// - Parameters:
    ///   - url: An http(s) URL.
    ///   - validator: The validators of an earlier `200`, or `nil`.
    ///   - maximumBytes: A byte cap for this body instead of the configuration's.
    ///   - chunks: Given each chunk of a `200`'s body as it is kept, in order: work on the body (a digest) that can
    ///     run while the rest arrives. It must not block.
    ///   - memory: Where a `200`'s body is read into: the memory of an earlier body, kept (``BodyMemory``).
    /// - Throws: ``RemoteFetchError`` for refused addresses, connection failures, timeouts and a body over the cap.
    public func fetchConditionally(
        _ url: String, validator: RemoteValidator?, maximumBytes: Int? = nil,
        chunks: (@Sendable (ByteBuffer) -> Void)? = nil, memory: BodyMemory? = nil
    ) async throws(RemoteFetchError) -> ConditionalFetch {
        let cap = max(1, maximumBytes ?? configuration.maximumBytes)
        do {
            let (response, resource, lease) = try await limiter.withPermit {
                let deadline = NIODeadline.now() + TimeAmount(configuration.totalTimeout)
                var resource = RemoteResource(
                    url: url, finalURL: url, entityTag: nil, lastModified: nil, totalSize: nil, requestCount: 0,
                    bytesReceived: 0, honouredRange: false)
                var headers = HTTPHeaders()
                if let tag = validator?.entityTag { headers.add(name: "If-None-Match", value: tag) }
                if let date = validator?.lastModified { headers.add(name: "If-Modified-Since", value: date) }
                // The body is collected by a delegate on the connection's event loop (``CollectedResponse``).
                let (response, finalURL, lease) = try await send(
                    url, originalURL: url, headers: headers, deadline: deadline, resource: &resource
                ) { client, request, headDeadline in
                    try await CollectedResponse.start(
                        request, on: client, headDeadline: headDeadline, url: url, maximumBytes: cap,
                        configuration: configuration, chunks: chunks, memory: memory, logger: logger)
                }
                resource.finalURL = finalURL
                resource.entityTag = response.headers.first(name: "ETag")
                resource.lastModified = response.headers.first(name: "Last-Modified")
                resource.totalSize = response.headers.first(name: "Content-Length").flatMap { Int($0) }
                resource.contentType = response.headers.first(name: "Content-Type")
                return (response, resource, lease)
            }
            var fields: [String: String] = [:]
            for header in response.headers where fields[header.name.lowercased()] == nil {
                fields[header.name.lowercased()] = header.value
            }
            let status = Int(response.status.code)
            guard status == 200 else {
                response.abandon()
                return ConditionalFetch(status: status, headers: fields, resource: resource, body: [])
            }
            if let size = resource.totalSize, size > cap {
                response.abandon()
                throw tooLarge(url, cap: cap)
            }
            // The lease keeps the connection's client up until the body is in.
            let bytes = try await response.body(url: url, configuration: configuration)
            withExtendedLifetime(lease) {}
            var fetched = resource
            fetched.bytesReceived = bytes.count
            return ConditionalFetch(status: status, headers: fields, resource: fetched, body: bytes)
        } catch let error as RemoteFetchError {
            throw error
        } catch {
            throw mapError(error, url: url)
        }
    }
}
