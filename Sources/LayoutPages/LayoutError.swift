/// A failure of the pipeline as a whole (a single broken item or image is a warning instead).
///
/// Like async-http-client's `HTTPClientError`, the code is a struct with static members, so new codes can be
/// added without breaking callers that switch over the known ones.
public struct LayoutError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let name: String
        public var description: String { name }

        public static let invalidOptions = Code(name: "invalidOptions")
        public static let feedUnreadable = Code(name: "feedUnreadable")
        public static let feedInvalid = Code(name: "feedInvalid")
        public static let fontUnavailable = Code(name: "fontUnavailable")
        public static let invalidCursor = Code(name: "invalidCursor")
        public static let cursorMismatch = Code(name: "cursorMismatch")
        public static let outputFailed = Code(name: "outputFailed")
        /// `feedlayout place`: a prepared item that cannot be read, was prepared with other options or fonts, or
        /// leaves a gap or an overlap in the indices.
        public static let preparedItemsInvalid = Code(name: "preparedItemsInvalid")
    }

    public var code: Code
    /// What went wrong, with which input and where, and what to do about it.
    public var message: String
    /// For `.invalidOptions`, the option at fault as the CLI names it (`width`, `page-size`), when one option is;
    /// a service names its request's field from it.
    public var option: String?

    public init(_ code: Code, _ message: String, option: String? = nil) {
        self.code = code
        self.message = message
        self.option = option
    }

    public var description: String { message }
}
