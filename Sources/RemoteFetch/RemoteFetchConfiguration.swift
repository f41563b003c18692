/// Limits and policies for fetching http(s) resources.
public struct RemoteFetchConfiguration: Sendable, Equatable {
    /// How long establishing a connection (TCP and TLS) may take.
    public var connectTimeout: Duration
    /// How long the server may stay silent while a response is being read.
    public var readTimeout: Duration
    /// How long one fetch may take in all: every redirect hop and every range request.
    public var totalTimeout: Duration
    /// The most redirects followed for one fetch.
    public var maximumRedirects: Int
    /// The most body bytes read for one fetch; more is an error (``RemoteFetchError/Code/tooLarge``).
    public var maximumBytes: Int
    /// The most requests in flight at once through one ``RemoteFetcher``.
    public var maximumConcurrentRequests: Int
    /// Whether private, loopback, link-local and unspecified addresses may be fetched.
    ///
    /// Off by default: a feed is untrusted input, and its image URLs must not make this process
    /// probe the machine's own network (server-side request forgery).
    public var allowPrivateNetwork: Bool
    /// The `User-Agent` header sent with every request.
    public var userAgent: String

    /// Creates a configuration; the defaults suit probing images from the public web.
    public init(
        connectTimeout: Duration = .seconds(5),
        readTimeout: Duration = .seconds(10),
        totalTimeout: Duration = .seconds(30),
        maximumRedirects: Int = 5,
        maximumBytes: Int = 64 * 1024 * 1024,
        maximumConcurrentRequests: Int = 16,
        allowPrivateNetwork: Bool = false,
        userAgent: String = "feedlayout/1 (+https://github.com/feedlayout)"
    ) {
        self.connectTimeout = connectTimeout
        self.readTimeout = readTimeout
        self.totalTimeout = totalTimeout
        self.maximumRedirects = max(0, maximumRedirects)
        self.maximumBytes = max(1, maximumBytes)
        self.maximumConcurrentRequests = max(1, maximumConcurrentRequests)
        self.allowPrivateNetwork = allowPrivateNetwork
        self.userAgent = userAgent
    }
}
