/// Why a remote resource could not be fetched.
///
/// A struct rather than an enum so that new codes can be added without breaking callers: compare
/// ``code`` against the static members of ``Code``. ``message`` names the URL and says what to do.
public struct RemoteFetchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; compare with `==` against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case invalidURL, unsupportedScheme, privateAddress, nameResolution, connection, timeout
            case httpStatus, tooManyRedirects, tooLarge, cancelled
        }

        private let kind: Kind

        private init(_ kind: Kind) { self.kind = kind }

        /// The URL could not be parsed or has no host.
        public static let invalidURL = Code(.invalidURL)
        /// Only `http` and `https` are fetched.
        public static let unsupportedScheme = Code(.unsupportedScheme)
        /// The host is (or resolves to) a private, loopback, link-local or unspecified address.
        public static let privateAddress = Code(.privateAddress)
        /// The host name did not resolve.
        public static let nameResolution = Code(.nameResolution)
        /// Connecting or reading failed.
        public static let connection = Code(.connection)
        /// A connect, read or total timeout expired.
        public static let timeout = Code(.timeout)
        /// The server answered with a status other than 200, 206 (or 304 for a conditional request).
        public static let httpStatus = Code(.httpStatus)
        /// More redirects than allowed, or a redirect without a usable `Location`.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// The body is larger than the byte cap.
        public static let tooLarge = Code(.tooLarge)
        /// The task was cancelled.
        public static let cancelled = Code(.cancelled)

        /// The code's name, such as `timeout`.
        public var description: String { kind.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// The URL being fetched (the original one, before redirects).
    public var url: String
    /// What went wrong and what to do, without the URL.
    public var reason: String
    /// The HTTP status, for ``Code/httpStatus``.
    public var status: Int?

    /// A sentence for people: the URL, what went wrong, what to do.
    public var message: String { "\(url): \(reason)" }

    /// Creates an error.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - url: The URL being fetched.
    ///   - reason: What went wrong and what to do.
    ///   - status: The HTTP status, when the server answered.
    public init(code: Code, url: String, reason: String, status: Int? = nil) {
        self.code = code
        self.url = url
        self.reason = reason
        self.status = status
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
