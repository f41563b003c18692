import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix

/// What a fetch learnt about the resource besides its bytes.
public struct RemoteResource: Sendable, Equatable {
    /// The URL asked for.
    public var url: String
    /// The URL that answered, after redirects.
    public var finalURL: String
    /// The `ETag` header, when the server sent one.
    public var entityTag: String?
    /// The `Last-Modified` header, when the server sent one.
    public var lastModified: String?
    /// The full size of the resource, from `Content-Range` (or `Content-Length` of a 200), if known.
    public var totalSize: Int?
    /// HTTP requests made, redirects and further ranges included.
    public var requestCount: Int
    /// Body bytes received.
    public var bytesReceived: Int
    /// Whether the server honoured the Range header (206).
    public var honouredRange: Bool
    /// The `Content-Type` header, when the server sent one (set by ``RemoteFetcher/streamBody(_:maximumBytes:)``).
    public var contentType: String? = nil
    /// How long the response may be used without asking again (its `Cache-Control`, `Expires` and `Age`), from the
    /// first response of a prefix fetch, a 304 included; `nil` for other fetches.
    public var freshness: HTTPFreshness? = nil

    /// The `charset` parameter of the `Content-Type` header, lowercased and unquoted (`iso-8859-1`).
    public var charset: String? {
        guard let contentType else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else {
                continue
            }
            let value = pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(
                in: CharacterSet(charactersIn: "\"'"))
            return value.isEmpty ? nil : value.lowercased()
        }
        return nil
    }

    /// The validator a cache stores to revalidate this resource later.
    public var validator: RemoteValidator { RemoteValidator(entityTag: entityTag, lastModified: lastModified) }
}

/// What a server gave to say which version of a resource it served.
public struct RemoteValidator: Sendable, Hashable {
    /// The `ETag` header.
    public var entityTag: String?
    /// The `Last-Modified` header.
    public var lastModified: String?

    /// Creates a validator.
    public init(entityTag: String?, lastModified: String?) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Whether there is anything to revalidate with.
    public var isEmpty: Bool { entityTag == nil && lastModified == nil }
}

/// What the caller of ``RemoteFetcher/fetchPrefix(_:firstRangeSize:revalidating:examine:)`` says
/// after looking at the bytes received so far.
public enum PrefixStep<Value: Sendable>: Sendable {
    /// Enough: stop reading and return this.
    case finished(Value)
    /// Keep reading until at least this many bytes from the start are available.
    case needMoreBytes(atLeast: Int)
}

/// The outcome of a prefix fetch.
public enum PrefixFetchOutcome<Value: Sendable>: Sendable {
    /// Bytes were read and examined.
    case fetched(Value, RemoteResource)
    /// The conditional request said the resource has not changed since the given validator.
    case notModified(RemoteResource)
}

/// Fetches http(s) resources with limits: Range requests for prefixes, streaming bodies, timeouts,
/// a redirect limit, a byte cap, a concurrency limit, and private addresses refused by default.
///
/// Unless private networks are allowed, every host is resolved once per request (every redirect hop included),
/// each of its addresses is vetted, and the connection goes to a vetted address (``VettedAddressClients``), with the
/// host's name in `Host` and in TLS: a DNS server that answers a public address to the check and a private one
/// afterwards (DNS rebinding) cannot steer a fetch to the private one.
///
/// One fetcher owns its `HTTPClient`s (with their connection pools); call ``shutdown()`` when done, or
/// use ``withFetcher(configuration:logger:_:)`` which does it for you.
public final class RemoteFetcher: Sendable {
    /// The limits and policies in force.
    public let configuration: RemoteFetchConfiguration
    /// Connects by name: for IP literals, and for every host when private networks are allowed.
    private let client: HTTPClient
    /// Connect to vetted addresses.
    private let vettedClients: VettedAddressClients
    private let resolver: HostResolver
    /// Whether an address (as text) must not be fetched unless private networks are allowed.
    private let isRestrictedAddress: @Sendable (String) -> Bool
    let limiter: ConcurrencyLimiter
    let logger: Logger

    /// Creates a fetcher and its HTTP client.
    /// - Parameters:
    ///   - configuration: Timeouts, limits and the private-network policy.
    ///   - resolver: Resolves host names (the system's resolver by default).
    ///   - logger: Where requests are logged (at debug level).
    public convenience init(
        configuration: RemoteFetchConfiguration = RemoteFetchConfiguration(), resolver: HostResolver = .system,
        logger: Logger
    ) {
        self.init(
            configuration: configuration, resolver: resolver,
            isRestrictedAddress: { NetworkAddressPolicy.isRestricted(literal: $0) ?? true }, logger: logger)
    }

    /// - Parameter isRestrictedAddress: The address policy (``NetworkAddressPolicy`` outside tests, which may call
    ///   a loopback address of their own server public).
    init(
        configuration: RemoteFetchConfiguration, resolver: HostResolver,
        isRestrictedAddress: @escaping @Sendable (String) -> Bool, logger: Logger
    ) {
        self.configuration = configuration
        self.resolver = resolver
        self.isRestrictedAddress = isRestrictedAddress
        self.logger = logger
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            // No read timeout here: AsyncHTTPClient's counts the time the caller takes between chunks too (it stops
            // reading while the caller is busy), so a feed whose photos are being probed would fail a server that
            // was ready all along. The head's deadline and `ResponseChunks` bound only the waits for the server.
            timeout: HTTPClient.Configuration.Timeout(connect: TimeAmount(configuration.connectTimeout)),
            connectionPool: HTTPClient.Configuration.ConnectionPool(
                idleTimeout: .seconds(30),
                concurrentHTTP1ConnectionsPerHostSoftLimit: configuration.maximumConcurrentRequests),
            decompression: .disabled)
        clientConfiguration.httpVersion = .automatic
        self.client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration,
            backgroundActivityLogger: logger)
        self.vettedClients = VettedAddressClients(configuration: clientConfiguration, logger: logger)
        self.limiter = ConcurrencyLimiter(limit: configuration.maximumConcurrentRequests)
    }

    /// How many clients to vetted addresses are kept (for tests).
    var vettedClientCount: Int { vettedClients.count }

    /// Shuts the HTTP client down; the fetcher cannot be used afterwards.
    public func shutdown() async throws {
        await vettedClients.shutdown()
        try await client.shutdown()
    }

    /// Runs `body` with a new fetcher and shuts it down afterwards, whether `body` throws or not.
    /// - Parameters:
    ///   - configuration: Timeouts, limits and the private-network policy.
    ///   - logger: Where requests are logged.
    ///   - body: The work that uses the fetcher.
    /// - Returns: What `body` returns.
    public static func withFetcher<Result: Sendable>(
        configuration: RemoteFetchConfiguration = RemoteFetchConfiguration(), logger: Logger,
        _ body: (RemoteFetcher) async throws -> Result
    ) async throws -> Result {
        let fetcher = RemoteFetcher(configuration: configuration, logger: logger)
        do {
            let result = try await body(fetcher)
            try await fetcher.shutdown()
            return result
        } catch {
            try? await fetcher.shutdown()
            throw error
        }
    }

    /// Whether a string is an http(s) URL this module would fetch (by its scheme only).
    public static func isRemote(_ source: String) -> Bool {
        let lowered = source.prefix(8).lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }

    // MARK: Prefixes

    /// Reads the start of a resource until `examine` has enough.
    ///
    /// The first request asks for `bytes=0-(firstRangeSize-1)`. The body is streamed and `examine`
    /// sees the bytes received so far after every chunk; as soon as it returns
    /// ``PrefixStep/finished(_:)`` the response is dropped (which cancels it). When a range ends
    /// and `examine` still needs more, another range request continues where the last one ended
    /// (at least doubling what is held). A server that ignores Range (200) is read only as far as
    /// needed, then the response is cancelled.
    ///
    /// - Parameters:
    ///   - url: An http(s) URL.
    ///   - firstRangeSize: Bytes asked for by the first request.
    ///   - revalidating: A validator from an earlier fetch: the first request is conditional
    ///     (`If-None-Match` / `If-Modified-Since`), and a 304 returns ``PrefixFetchOutcome/notModified(_:)``.
    ///   - examine: Looks at the bytes so far; `isComplete` is `true` when they are the whole
    ///     resource, and then it must return ``PrefixStep/finished(_:)``.
    /// - Returns: What `examine` returned and what was learnt about the resource.
    /// - Throws: ``RemoteFetchError``.
    public func fetchPrefix<Value: Sendable>(
        _ url: String, firstRangeSize: Int = 16 * 1024, revalidating: RemoteValidator? = nil,
        examine: (UnsafeRawBufferPointer, _ isComplete: Bool) -> PrefixStep<Value>
    ) async throws(RemoteFetchError) -> PrefixFetchOutcome<Value> {
        do {
            return try await limiter.withPermit {
                try await fetchPrefixHoldingPermit(
                    url, firstRangeSize: max(1, firstRangeSize), revalidating: revalidating, examine: examine)
            }
        } catch {
            throw mapError(error, url: url)
        }
    }

    private func fetchPrefixHoldingPermit<Value: Sendable>(
        _ url: String, firstRangeSize: Int, revalidating: RemoteValidator?,
        examine: (UnsafeRawBufferPointer, _ isComplete: Bool) -> PrefixStep<Value>
    ) async throws -> PrefixFetchOutcome<Value> {
        let deadline = NIODeadline.now() + TimeAmount(configuration.totalTimeout)
        var resource = RemoteResource(
            url: url, finalURL: url, entityTag: nil, lastModified: nil, totalSize: nil, requestCount: 0,
            bytesReceived: 0, honouredRange: false)
        var buffer: [UInt8] = []
        buffer.reserveCapacity(firstRangeSize)
        var wanted = min(firstRangeSize, configuration.maximumBytes)
        var currentURL = url
        var isFirstRequest = true
        var heldClient: VettedAddressClients.Lease?
        defer { withExtendedLifetime(heldClient) {} }
        while true {
            var headers = HTTPHeaders()
            headers.add(name: "Range", value: "bytes=\(buffer.count)-\(wanted - 1)")
            if isFirstRequest, let validator = revalidating {
                if let tag = validator.entityTag { headers.add(name: "If-None-Match", value: tag) }
                if let date = validator.lastModified { headers.add(name: "If-Modified-Since", value: date) }
            } else if !isFirstRequest, let tag = resource.entityTag {
                // Later ranges must come from the same version as the first one.
                headers.add(name: "If-Range", value: tag)
            }
            let (response, finalURL, lease) = try await send(
                currentURL, originalURL: url, headers: headers, deadline: deadline, resource: &resource)
            // The client stays up while its response is read (the lease is released when the next one comes).
            heldClient = lease
            currentURL = finalURL
            resource.finalURL = finalURL
            let status = Int(response.status.code)
            if isFirstRequest {
                resource.entityTag = response.headers.first(name: "ETag")
                resource.lastModified = response.headers.first(name: "Last-Modified")
                resource.freshness = HTTPFreshness(headers: response.headers, received: Date())
            }
            switch status {
            case 304 where isFirstRequest && revalidating != nil:
                return .notModified(resource)
            case 206:
                resource.honouredRange = true
                let range = Self.contentRange(response.headers.first(name: "Content-Range"))
                if let total = range?.total { resource.totalSize = total }
                if let start = range?.start, start != buffer.count {
                    throw RemoteFetchError(
                        code: .httpStatus, url: url,
                        reason: "the server sent bytes from \(start) when asked for bytes from \(buffer.count); "
                            + "it mishandles Range requests, report it to the site", status: status)
                }
            case 200:
                // The server ignored the Range header: the body starts again at byte 0.
                resource.honouredRange = false
                buffer.removeAll(keepingCapacity: true)
                resource.totalSize = response.headers.first(name: "Content-Length").flatMap { Int($0) }
            case 416:
                // Nothing at or after the requested offset: what is held is the whole resource.
                resource.totalSize = buffer.count
                let step = buffer.withUnsafeBytes { examine($0, true) }
                guard case .finished(let value) = step else { throw incomplete(url, at: buffer.count) }
                return .fetched(value, resource)
            default:
                throw RemoteFetchError(
                    code: .httpStatus, url: url,
                    reason: "the server answered HTTP \(status) \(response.status.reasonPhrase)"
                        + (status == 404 || status == 410
                            ? "; the image is gone: fix the link" : "; try again later or fix the link"),
                    status: status)
            }
            isFirstRequest = false

            var lastStep: PrefixStep<Value> = .needMoreBytes(atLeast: wanted)
            let chunks = ResponseChunks(response.body, url: url, configuration: configuration)
            while let chunk = try await chunks.next() {
                // AsyncHTTPClient's deadline covers the response head; the body is bounded here.
                if NIODeadline.now() > deadline { throw totalTimeout(url) }
                resource.bytesReceived += chunk.readableBytes
                guard buffer.count + chunk.readableBytes <= configuration.maximumBytes else {
                    throw tooLarge(url)
                }
                buffer.append(contentsOf: chunk.readableBytesView)
                let complete = resource.totalSize.map { buffer.count >= $0 } ?? false
                lastStep = buffer.withUnsafeBytes { examine($0, complete) }
                if case .finished(let value) = lastStep {
                    // Leaving the loop drops the body, which cancels the rest of the response.
                    return .fetched(value, resource)
                }
            }
            // The response ended (a whole 200 body, or the end of a range).
            let complete = status == 200 || resource.totalSize.map { buffer.count >= $0 } ?? false
            if complete || buffer.isEmpty {
                resource.totalSize = resource.totalSize ?? buffer.count
                let step = buffer.withUnsafeBytes { examine($0, true) }
                guard case .finished(let value) = step else { throw incomplete(url, at: buffer.count) }
                return .fetched(value, resource)
            }
            guard case .needMoreBytes(let atLeast) = lastStep else { continue }
            if atLeast > configuration.maximumBytes { throw tooLarge(url) }
            // A header asks for the end of the segment it skips plus the next marker; the segment after
            // that usually follows within a few kilobytes, so ask a little beyond to save a round trip.
            wanted = min(configuration.maximumBytes, max(atLeast + 4096, 2 * buffer.count))
            if let total = resource.totalSize { wanted = min(wanted, total) }
            if wanted <= buffer.count { throw incomplete(url, at: buffer.count) }
            logger.debug(
                "fetching a further range", metadata: ["url": "\(url)", "from": "\(buffer.count)", "to": "\(wanted)"])
        }
    }

    // MARK: Whole bodies

    /// Starts a GET and returns its body as a stream of byte chunks (for feeds).
    ///
    /// The stream enforces the byte cap; iterating it throws ``RemoteFetchError``. The concurrency permit is
    /// held only until the response head arrives.
    /// - Parameters:
    ///   - url: An http(s) URL.
    ///   - maximumBytes: A byte cap for this body instead of the configuration's (a feed's own size limit).
    ///   - boundedInTotal: Whether the total timeout covers the whole body (a photo). `false` bounds only the wait
    ///     for the response head by it, and the body by the read timeout between bytes (a feed: a large one that
    ///     arrives steadily must not be cut off; one whose server goes silent still ends).
    /// - Returns: The body and what is known of the resource (its final URL and `Content-Type` too).
    /// - Throws: ``RemoteFetchError`` for refused addresses, connection failures and statuses other than 200.
    public func streamBody(
        _ url: String, maximumBytes: Int? = nil, boundedInTotal: Bool = true
    ) async throws(RemoteFetchError) -> (body: RemoteBody, resource: RemoteResource) {
        let cap = max(1, maximumBytes ?? configuration.maximumBytes)
        do {
            return try await limiter.withPermit {
                let deadline = NIODeadline.now() + TimeAmount(configuration.totalTimeout)
                var resource = RemoteResource(
                    url: url, finalURL: url, entityTag: nil, lastModified: nil, totalSize: nil, requestCount: 0,
                    bytesReceived: 0, honouredRange: false)
                let (response, finalURL, lease) = try await send(
                    url, originalURL: url, headers: HTTPHeaders(), deadline: deadline, resource: &resource)
                resource.finalURL = finalURL
                resource.entityTag = response.headers.first(name: "ETag")
                resource.lastModified = response.headers.first(name: "Last-Modified")
                resource.totalSize = response.headers.first(name: "Content-Length").flatMap { Int($0) }
                resource.contentType = response.headers.first(name: "Content-Type")
                guard response.status == .ok else {
                    throw RemoteFetchError(
                        code: .httpStatus, url: url,
                        reason: "the server answered HTTP \(response.status.code) \(response.status.reasonPhrase); "
                            + "check the URL", status: Int(response.status.code))
                }
                if let size = resource.totalSize, size > cap { throw tooLarge(url, cap: cap) }
                return (
                    RemoteBody(
                        body: response.body, url: url, maximumBytes: cap, deadline: boundedInTotal ? deadline : nil,
                        configuration: configuration, lease: lease), resource
                )
            }
        } catch {
            throw mapError(error, url: url)
        }
    }

    // MARK: Requests

    /// Sends one GET, following redirects by hand so that every hop's address is checked, and connecting to the
    /// address checked.
    /// - Returns: The response, the URL that answered, and the client that holds its connection (to keep while
    ///   the body is read; `nil` for the client that connects by name).
    func send(
        _ url: String, originalURL: String, headers: HTTPHeaders, deadline: NIODeadline, resource: inout RemoteResource
    ) async throws -> (HTTPClientResponse, String, VettedAddressClients.Lease?) {
        try await send(url, originalURL: originalURL, headers: headers, deadline: deadline, resource: &resource) {
            client, request, deadline in
            try await client.execute(request, deadline: deadline, logger: logger)
        }
    }

    /// ``send(_:originalURL:headers:deadline:resource:)`` with each hop's request made by `execute` (on the client
    /// given, with the deadline for its head), which answers once the head is there.
    func send<Answer: HopAnswer>(
        _ url: String, originalURL: String, headers: HTTPHeaders, deadline: NIODeadline, resource: inout RemoteResource,
        execute: (HTTPClient, HTTPClientRequest, NIODeadline) async throws -> Answer
    ) async throws -> (Answer, String, VettedAddressClients.Lease?) {
        var current = url
        var redirects = 0
        while true {
            let destination = try await checkDestination(current, originalURL: originalURL)
            var request = HTTPClientRequest(url: current)
            request.method = .GET
            request.headers = headers
            request.headers.replaceOrAdd(name: "User-Agent", value: configuration.userAgent)
            logger.debug("GET", metadata: ["url": "\(current)", "range": "\(headers.first(name: "Range") ?? "-")"])
            resource.requestCount += 1
            // The head is bounded by the connect and read timeouts together as well as by the total one: a server
            // that accepts the request and then says nothing fails once it has been silent for the read timeout.
            let answerDeadline =
                NIODeadline.now() + TimeAmount(configuration.connectTimeout + configuration.readTimeout)
            var response: Answer?
            var lease: VettedAddressClients.Lease?
            // Each vetted address in the resolver's order until one connects (a host with an IPv6 address first,
            // on a machine without IPv6, say); by name when nothing was vetted.
            let addresses: [String?] = destination.map { vetted in vetted.addresses.map { $0 } } ?? [nil]
            for (attempt, address) in addresses.enumerated() {
                lease = try address.map { try vettedClients.lease(host: destination!.host, address: $0) }
                do {
                    response = try await execute(lease?.client ?? client, request, min(deadline, answerDeadline))
                    break
                } catch let error as HTTPClientError where error == .deadlineExceeded && answerDeadline < deadline {
                    throw RemoteFetchError(
                        code: .timeout, url: originalURL,
                        reason: "the server did not answer within "
                            + "\(configuration.connectTimeout + configuration.readTimeout) (the connect and read "
                            + "timeouts); try again later or raise the read timeout")
                } catch let error where attempt + 1 < addresses.count && Self.isConnectionRefusal(error) {
                    logger.debug(
                        "trying the next address", metadata: ["url": "\(current)", "address": "\(address ?? "")"])
                }
            }
            guard let response else {
                throw RemoteFetchError(code: .connection, url: originalURL, reason: "no address of the host answered")
            }
            guard [301, 302, 303, 307, 308].contains(response.status.code) else { return (response, current, lease) }
            response.abandon()
            redirects += 1
            guard redirects <= configuration.maximumRedirects else {
                throw RemoteFetchError(
                    code: .tooManyRedirects, url: originalURL,
                    reason: "more than \(configuration.maximumRedirects) redirects (last to \(current)); "
                        + "fix the link or raise the redirect limit")
            }
            guard let location = response.headers.first(name: "Location"),
                let next = URL(string: location, relativeTo: URL(string: current))?.absoluteString
            else {
                throw RemoteFetchError(
                    code: .tooManyRedirects, url: originalURL,
                    reason:
                        "HTTP \(response.status.code) from \(current) without a usable Location header; fix the link")
            }
            current = next
        }
    }

    /// What one hop of ``send(_:originalURL:headers:deadline:resource:execute:)`` answers: a streamed response, or
    /// one whose body a delegate collects (``CollectedResponse``).
    protocol HopAnswer {
        var status: HTTPResponseStatus { get }
        var headers: HTTPHeaders { get }
        /// Lets go of a response that is not read (a redirect's).
        func abandon()
    }

    /// Whether a request failed before any server answered at that address (refused, unreachable, timed out
    /// connecting), so another address of the host may be tried.
    static func isConnectionRefusal(_ error: any Error) -> Bool {
        if let error = error as? HTTPClientError { return error == .connectTimeout }
        if error is NIOConnectionError || error is IOError { return true }
        if let error = error as? ChannelError, case .connectTimeout = error { return true }
        return false
    }

    /// Refuses URLs that are not http(s) and, unless allowed, hosts that are or resolve to
    /// private addresses.
    ///
    /// The name is resolved once here, and every address it resolves to must be public; the request then connects
    /// to these addresses, never resolving the name again.
    /// - Returns: The host (as the URL writes it) and its vetted addresses, in the resolver's order; `nil` when the
    ///   request connects by name (private networks allowed; the name resolved) or to the URL's own IP literal.
    private func checkDestination(
        _ url: String, originalURL: String
    ) async throws -> (host: String, addresses: [String])? {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host,
            !host.isEmpty
        else {
            throw RemoteFetchError(
                code: .invalidURL, url: originalURL, reason: "\(url) is not a valid URL with a host; fix the link")
        }
        guard scheme == "http" || scheme == "https" else {
            throw RemoteFetchError(
                code: .unsupportedScheme, url: originalURL,
                reason: "only http and https URLs are fetched, not \(scheme) (\(url))")
        }
        if NetworkAddressPolicy.isRestricted(literal: host) != nil {
            if !configuration.allowPrivateNetwork, isRestrictedAddress(host) {
                throw privateAddress(originalURL, host: host, address: host)
            }
            return nil
        }
        let addresses: [String]
        do {
            addresses = try await resolver.addresses(of: host)
        } catch let error as RemoteFetchError {
            throw error
        } catch {
            throw RemoteFetchError(
                code: .nameResolution, url: originalURL,
                reason: "cannot resolve \(host) (\(error)); check the host name and the network")
        }
        // With private networks allowed the request connects by name, but a name that does not resolve has failed
        // here at once, as without the flag: the HTTP client spends its whole connect timeout on it (5 s), and says
        // "DNS error" or "connect timeout" depending on the machine's load.
        guard !configuration.allowPrivateNetwork else { return nil }
        if let refused = addresses.first(where: isRestrictedAddress) {
            throw privateAddress(originalURL, host: host, address: refused)
        }
        if addresses.isEmpty {
            throw RemoteFetchError(
                code: .nameResolution, url: originalURL, reason: "\(host) resolves to no address; check the host name")
        }
        return (host, addresses)
    }

    private func privateAddress(_ url: String, host: String, address: String) -> RemoteFetchError {
        RemoteFetchError(
            code: .privateAddress, url: url,
            reason: "\(host) is\(host == address ? "" : " (or resolves to)") \(address == host ? "" : address + ", ")"
                + "a private, loopback, link-local or unspecified address; such addresses are refused unless "
                + "private networks are allowed (--allow-private-network)")
    }

    private func totalTimeout(_ url: String) -> RemoteFetchError {
        RemoteFetchError(
            code: .timeout, url: url,
            reason:
                "the fetch took longer than \(configuration.totalTimeout) in all; try again later or raise the timeout")
    }

    func tooLarge(_ url: String, cap: Int? = nil) -> RemoteFetchError {
        RemoteFetchError(
            code: .tooLarge, url: url,
            reason:
                "the body is larger than the byte cap of \(cap ?? configuration.maximumBytes) bytes; raise the cap if the resource is trusted"
        )
    }

    private func incomplete(_ url: String, at count: Int) -> RemoteFetchError {
        RemoteFetchError(
            code: .connection, url: url,
            reason: "the response ended after \(count) bytes, before enough was read; try again")
    }

    /// Parses `bytes START-END/TOTAL` (TOTAL may be `*`).
    static func contentRange(_ header: String?) -> (start: Int, end: Int, total: Int?)? {
        guard let header, header.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = header.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int(bounds[0].trimmingCharacters(in: .whitespaces)),
            let end = Int(bounds[1].trimmingCharacters(in: .whitespaces))
        else { return nil }
        return (start, end, Int(parts[1].trimmingCharacters(in: .whitespaces)))
    }

    /// Turns whatever AsyncHTTPClient, NIO or the task threw into a ``RemoteFetchError``.
    func mapError(_ error: any Error, url: String) -> RemoteFetchError {
        Self.mapError(error, url: url, configuration: configuration)
    }

    static func silentServer(_ url: String, configuration: RemoteFetchConfiguration) -> RemoteFetchError {
        RemoteFetchError(
            code: .timeout, url: url,
            reason: "the server sent nothing for \(configuration.readTimeout); try again later or raise the read timeout")
    }

    static func mapError(_ error: any Error, url: String, configuration: RemoteFetchConfiguration) -> RemoteFetchError {
        if let error = error as? RemoteFetchError { return error }
        if error is CancellationError {
            return RemoteFetchError(code: .cancelled, url: url, reason: "the fetch was cancelled")
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout:
                return RemoteFetchError(
                    code: .timeout, url: url,
                    reason:
                        "connecting took longer than \(configuration.connectTimeout); the server is down or unreachable"
                )
            case .readTimeout:
                return silentServer(url, configuration: configuration)
            case .deadlineExceeded:
                return RemoteFetchError(
                    code: .timeout, url: url,
                    reason:
                        "the fetch took longer than \(configuration.totalTimeout) in all; try again later or raise the timeout"
                )
            case .cancelled:
                return RemoteFetchError(code: .cancelled, url: url, reason: "the fetch was cancelled")
            default:
                break
            }
        }
        return RemoteFetchError(
            code: .connection, url: url, reason: "the request failed (\(error)); check the URL and the network")
    }
}

/// A streamed response is let go of by dropping it.
extension HTTPClientResponse: RemoteFetcher.HopAnswer {
    func abandon() {}
}

/// The body of a response, as a stream of byte chunks, with the byte cap enforced.
public struct RemoteBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    let body: HTTPClientResponse.Body
    let url: String
    let maximumBytes: Int
    /// The end of the total timeout, or `nil` when only the read timeout between bytes bounds the body.
    let deadline: NIODeadline?
    let configuration: RemoteFetchConfiguration
    /// The client whose connection carries the body: kept up while the body or an iterator of it exists.
    var lease: VettedAddressClients.Lease? = nil

    /// Iterates the chunks; `next()` throws ``RemoteFetchError``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let base: ResponseChunks
        let lease: VettedAddressClients.Lease?
        let url: String
        let maximumBytes: Int
        let deadline: NIODeadline?
        let configuration: RemoteFetchConfiguration
        var received = 0

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> [UInt8]? {
            do {
                guard let chunk = try await base.next() else { return nil }
                received += chunk.readableBytes
                try RemoteBody.check(
                    received: received, url: url, maximumBytes: maximumBytes, deadline: deadline,
                    configuration: configuration)
                return Array(chunk.readableBytesView)
            } catch let error as RemoteFetchError {
                throw error
            } catch {
                throw RemoteFetcher.mapError(error, url: url, configuration: configuration)
            }
        }
    }

    /// What every chunk of a body passes, however the body is read (``AsyncIterator``, ``collected(capacity:admit:)``):
    /// the total timeout of a bounded body, and the byte cap over the `received` bytes so far.
    static func check(
        received: Int, url: String, maximumBytes: Int, deadline: NIODeadline?, configuration: RemoteFetchConfiguration
    ) throws(RemoteFetchError) {
        if let deadline, NIODeadline.now() > deadline {
            throw RemoteFetchError(
                code: .timeout, url: url,
                reason:
                    "the download took longer than \(configuration.totalTimeout) in all; try again later or raise the timeout"
            )
        }
        if received > maximumBytes {
            throw RemoteFetchError(
                code: .tooLarge, url: url,
                reason:
                    "the body is larger than the byte cap of \(maximumBytes) bytes; raise the cap if the resource is trusted"
            )
        }
    }

    /// Starts iterating.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(
            base: ResponseChunks(body, url: url, configuration: configuration), lease: lease, url: url,
            maximumBytes: maximumBytes,
            deadline: deadline,
            configuration: configuration)
    }
}


/// A response body read chunk by chunk, each wait for the server bounded by the read timeout.
///
/// Only the time spent waiting for the server counts: the time the caller takes between chunks does not, however
/// long (the server is then held back by the connection's flow control, not silent).
final class ResponseChunks: @unchecked Sendable {
    // Unchecked: `iterator` is only touched by `next()`, whose callers await one chunk at a time, and inside it
    // by one child task at a time.
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    private let url: String
    private let configuration: RemoteFetchConfiguration

    init(_ body: HTTPClientResponse.Body, url: String, configuration: RemoteFetchConfiguration) {
        iterator = body.makeAsyncIterator()
        self.url = url
        self.configuration = configuration
    }

    /// The next chunk, or `nil` at the end of the body.
    /// - Throws: ``RemoteFetchError`` with code `timeout` when the server sends nothing for the read timeout.
    func next() async throws -> ByteBuffer? {
        let readTimeout = configuration.readTimeout
        return try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await self.iterator.next() }
            group.addTask {
                try await Task.sleep(for: readTimeout)
                throw RemoteFetcher.silentServer(self.url, configuration: self.configuration)
            }
            // The loser is cancelled: a cancelled read drops the response, which only happens on a timeout.
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}
