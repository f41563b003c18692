/// Why an image could not be probed (or decoded).
///
/// A struct rather than an enum so that new codes can be added without breaking callers that
/// switch over them: compare ``code`` against the static members of ``Code``.
/// ``message`` is meant for people: it names the input, the byte offset, and what to do.
public struct ImageProbeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure; compare with `==` against the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case notFound, unreadable, unknownFormat, truncated, invalidHeader
            case invalidDimensions, notDecodable, exceedsPixelBudget, exceedsMemoryBudget
            case refused, timeout, httpStatus, tooLarge, network
        }

        private let kind: Kind

        private init(_ kind: Kind) { self.kind = kind }

        /// A URL was refused before any request (a private or loopback address, or not http(s)), or a local file
        /// the file gate does not open (outside the allowed folders, or not a regular file).
        public static let refused = Code(.refused)
        /// Fetching a URL took longer than a configured timeout.
        public static let timeout = Code(.timeout)
        /// The server answered a URL with an error status (404, 500, ...).
        public static let httpStatus = Code(.httpStatus)
        /// A remote body was larger than the byte cap.
        public static let tooLarge = Code(.tooLarge)
        /// Fetching a URL failed otherwise: name resolution, connection, redirects, cancellation.
        public static let network = Code(.network)
        /// The file does not exist.
        public static let notFound = Code(.notFound)
        /// The file exists but could not be opened or read (permissions, a directory, I/O error).
        public static let unreadable = Code(.unreadable)
        /// The bytes do not start with the signature of any supported format.
        public static let unknownFormat = Code(.unknownFormat)
        /// The input ends before the header does.
        public static let truncated = Code(.truncated)
        /// The header is malformed: bad lengths, bad CRC, impossible field values.
        public static let invalidHeader = Code(.invalidHeader)
        /// The header declares a zero (or, for JPEG, deferred by DNL) width or height.
        public static let invalidDimensions = Code(.invalidDimensions)
        /// The pixel data could not be decoded by libjpeg / libpng.
        public static let notDecodable = Code(.notDecodable)
        /// Decoding was refused because the image has more pixels than allowed.
        public static let exceedsPixelBudget = Code(.exceedsPixelBudget)
        /// Decoding would need more memory than the decoding budget all decodes share (``DecodeMemoryBudget``).
        public static let exceedsMemoryBudget = Code(.exceedsMemoryBudget)

        /// The code's name, such as `truncated`.
        public var description: String { kind.rawValue }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do, without the input's name: for callers that name the input
    /// their own way (the layout names images by their URL in the feed, never by a local path).
    public var reason: String
    /// A sentence for people: which input, where, what went wrong, what to do.
    public var message: String { source.isEmpty ? reason : "\(source): \(reason)" }
    /// The input: a path, `-` for standard input, a URL, or empty for an in-memory buffer.
    public var source: String
    /// The byte offset in the input where the problem was found, when there is one.
    public var offset: Int?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: The explanation; it should say what to do. When `source` is not empty it is
    ///     prefixed to the message.
    ///   - source: The input's name, or empty for an in-memory buffer.
    ///   - offset: The byte offset of the problem, if any.
    public init(code: Code, message: String, source: String = "", offset: Int? = nil) {
        self.code = code
        self.source = source
        self.offset = offset
        self.reason = message
    }

    /// The same error, attributed to a named input (its message then starts with the name).
    /// - Parameter source: A path, URL or `-`.
    /// - Returns: A copy whose ``source`` is `source` and whose ``message`` names it.
    public func attributed(to source: String) -> ImageProbeError {
        guard self.source.isEmpty else { return self }
        return ImageProbeError(code: code, message: reason, source: source, offset: offset)
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
