/// A store operation that failed: a ``Code`` a caller can act on, and a message that names the store (its path or
/// URL) and says what to do.
///
/// Callers decide by the code, never by the message: the service answers ``Code/unavailable`` and
/// ``Code/timeout`` with a 503 and a `Retry-After` (``isTransient``), and a layout that meets them waits and tries
/// again; ``Code/storageFull`` is a `507 Insufficient Storage`, and ends a running layout as failed;
/// ``Code/leaseLost`` makes an instance stop computing a layout another one took over.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure; more codes may come, so switch with a default.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// The store cannot be reached now (PostgreSQL restarting, a connection refused): try again in a moment.
        public static let unavailable = Code("unavailable")
        /// The store did not answer within the operation's time limit.
        public static let timeout = Code("timeout")
        /// Another instance took over the layout this one was computing (this one was paused past its lease).
        public static let leaseLost = Code("leaseLost")
        /// The store cannot be opened: a path or URL that names no store, a lock another process holds, a schema
        /// that cannot be made.
        public static let cannotOpen = Code("cannotOpen")
        /// Something the store holds cannot be read back as written (a page that is not gzip, a feed file cut short).
        public static let damaged = Code("damaged")
        /// A read or a write failed (a folder without permission, a device error).
        public static let ioFailed = Code("ioFailed")
        /// The store cannot write because its disk is full (SQLite's `SQLITE_FULL`, `ENOSPC` or `EDQUOT` writing a
        /// feed file, PostgreSQL's `53100 disk_full`). What the operation would have written was not kept: a feed
        /// file is removed, a transaction is rolled back.
        public static let storageFull = Code("storageFull")
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Whether the same operation may succeed if tried again in a moment (the store is restarting or slow).
    public var isTransient: Bool { code == .unavailable || code == .timeout }

    public var description: String { message }
}
