/// Why the probe cache could not be opened, read or written.
///
/// A struct with a code, extensible without breaking callers; ``message`` names the cache file
/// and says what to do.
public struct ProbeCacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file is not a SQLite database, or is damaged.
        public static let corrupt = Code("corrupt")
        /// The file was written by a newer version with an incompatible schema.
        public static let incompatibleSchema = Code("incompatibleSchema")
        /// The file or its folder could not be created, opened or written.
        public static let unavailable = Code("unavailable")

        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// The cache file.
    public var path: String
    /// What went wrong and what to do.
    public var reason: String

    /// A sentence naming the cache file.
    public var message: String { "probe cache \(path): \(reason)" }

    /// Creates an error.
    public init(code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
