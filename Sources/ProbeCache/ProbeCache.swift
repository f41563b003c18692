import Foundation
import GRDB
import ImageProbe
import RemoteFetch

/// Says whether a cached probe still describes its source.
public enum ProbeValidator: Sendable, Hashable {
    /// A local file: its size and modification time in nanoseconds (any write changes one of them).
    case file(size: Int, modifiedNanoseconds: Int64)
    /// A URL: what the server said identifies the version (revalidated with a conditional request).
    case remote(RemoteValidator)
}

/// One cached probe.
public struct CachedProbe: Sendable, Equatable {
    /// The validator the entry was stored with.
    public var validator: ProbeValidator
    /// The header facts.
    public var info: ImageInfo
    /// The placeholder, when one was computed.
    public var placeholder: ImagePlaceholder?
    /// For a URL: until when the entry may be used without asking the server (its response's HTTP freshness, see
    /// `HTTPFreshness`); `nil` when it must be revalidated at every use.
    public var freshUntil: Date?

    /// Creates an entry.
    public init(validator: ProbeValidator, info: ImageInfo, placeholder: ImagePlaceholder?, freshUntil: Date? = nil) {
        self.validator = validator
        self.info = info
        self.placeholder = placeholder
        self.freshUntil = freshUntil
    }
}

/// A SQLite cache of image probes, keyed by source (path or URL) and validator: one machine's ``ProbeCacheStorage``.
///
/// The file lives wherever the caller says (``defaultPath(environment:)`` is the CLI's default).
/// It is opened in WAL mode through a GRDB `DatabasePool`, so many tasks and several processes may
/// read and write it at once. The schema carries a version; a file from a newer, incompatible
/// version or one that is not a database at all is reported with its path rather than overwritten.
public final class ProbeCache: ProbeCacheStorage {
    /// The schema version this code reads and writes.
    public static let schemaVersion = 1

    /// The cache file.
    public let path: String
    private let database: DatabasePool

    /// Opens (or creates) the cache file, creating its folder if needed.
    /// - Parameter path: The SQLite file.
    /// - Throws: ``ProbeCacheError``: `.corrupt` when the file is not a database, `.incompatibleSchema`,
    ///   `.unavailable` when it cannot be created or opened.
    public convenience init(path: String) throws(ProbeCacheError) {
        try self.init(path: path, whileLocked: {})
    }

    /// As ``init(path:)``, calling `whileLocked` each time another connection's lock has refused the opening, before
    /// it is tried again: a test lets the lock go there, so it knows the opening met the lock and waited for it.
    init(path: String, whileLocked: () -> Void) throws(ProbeCacheError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw ProbeCacheError(
                    code: .unavailable, path: path,
                    reason:
                        "cannot create the folder \(folder) (\(error.localizedDescription)); choose another path with --cache or pass --no-cache"
                )
            }
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "ProbeCache"
        do {
            database = try Self.openRetryingWhileBusy(whileLocked: whileLocked) { () throws -> DatabasePool in
                let database = try DatabasePool(path: path, configuration: configuration)
                try Self.migrate(database)
                return database
            }
        } catch let error as ProbeCacheError {
            throw ProbeCacheError(code: error.code, path: path, reason: error.reason)
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// Keeps the cache in a database a program already holds (a service's store), in its own table.
    ///
    /// Every write then goes through that database's one writer: two pools writing one file would wait for each
    /// other's locks with SQLite's busy handler, which sleeps.
    /// - Parameters:
    ///   - database: The open database.
    ///   - path: Its file, for messages.
    /// - Throws: ``ProbeCacheError`` as ``init(path:)`` does.
    public init(sharing database: DatabasePool, path: String) throws(ProbeCacheError) {
        self.path = path
        self.database = database
        do {
            try Self.migrate(database)
        } catch let error as ProbeCacheError {
            throw ProbeCacheError(code: error.code, path: path, reason: error.reason)
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// `$XDG_CACHE_HOME/feedlayout/probe.sqlite`, else `~/.cache/feedlayout/probe.sqlite`.
    /// - Parameter environment: The process environment.
    /// - Returns: The default cache file path.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
            return base + "/feedlayout/probe.sqlite"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.cache/feedlayout/probe.sqlite"
    }

    private static func migrate(_ database: DatabasePool) throws {
        let stored = try database.read { try Int.fetchOne($0, sql: "PRAGMA user_version") ?? 0 }
        if stored > schemaVersion {
            throw ProbeCacheError(
                code: .incompatibleSchema, path: "",
                reason: "the file has schema version \(stored), this feedlayout knows \(schemaVersion); "
                    + "use a newer feedlayout, another --cache path, or delete the file")
        }
        guard stored < schemaVersion else {
            try addFreshness(database)
            return
        }
        try database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS probe (
                        source TEXT PRIMARY KEY NOT NULL,
                        fileSize INTEGER, fileModified INTEGER, entityTag TEXT, lastModified TEXT,
                        format TEXT NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL,
                        orientation INTEGER NOT NULL, bytesRead INTEGER NOT NULL, flags INTEGER NOT NULL,
                        bitDepth INTEGER, warnings TEXT NOT NULL,
                        placeholderColor INTEGER, placeholderHash BLOB,
                        storedAt REAL NOT NULL
                    ) WITHOUT ROWID;
                    PRAGMA user_version = \(schemaVersion);
                    """)
        }
        try addFreshness(database)
    }

    /// The column of each entry's freshness, added to files made without it. Additive, under the same schema
    /// version: an older feedlayout reads and writes the file as before (its entries have no freshness, so they are
    /// revalidated at their next use).
    private static func addFreshness(_ database: DatabasePool) throws {
        let present = try database.read { db in try db.columns(in: "probe").contains { $0.name == "freshUntil" } }
        guard !present else { return }
        try database.write { db in
            guard try !db.columns(in: "probe").contains(where: { $0.name == "freshUntil" }) else { return }
            try db.execute(sql: "ALTER TABLE probe ADD COLUMN freshUntil REAL")
        }
    }

    /// Opens the database, trying again for up to 10 s while SQLite answers SQLITE_BUSY.
    ///
    /// The busy timeout does not cover opening: switching a new file to WAL needs an exclusive lock, and when
    /// another process holds the file's reserved lock SQLite answers SQLITE_BUSY at once instead of waiting (its
    /// deadlock rule), so processes that open one new cache together could fail.
    private static func openRetryingWhileBusy<Database>(
        whileLocked: () -> Void, _ open: () throws -> Database
    ) throws -> Database {
        let deadline = ContinuousClock.now + .seconds(10)
        var pauseMilliseconds = 5.0
        while true {
            do {
                return try open()
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && ContinuousClock.now < deadline
            {
                whileLocked()
                Thread.sleep(forTimeInterval: pauseMilliseconds / 1000)
                pauseMilliseconds = min(pauseMilliseconds * 2, 200)
            }
        }
    }

    private static func translate(_ error: any Error, path: String) -> ProbeCacheError {
        if let error = error as? DatabaseError,
            [ResultCode.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode)
        {
            return ProbeCacheError(
                code: .corrupt, path: path,
                reason: "the file is not a SQLite database or is damaged (\(error.message ?? "\(error.resultCode)")); "
                    + "delete it (it is only a cache), choose another path with --cache, or pass --no-cache")
        }
        return ProbeCacheError(
            code: .unavailable, path: path,
            reason: "SQLite failed (\(error)); check the file's permissions and free space, or pass --no-cache")
    }

    /// The cached entry for a source, whatever its validator.
    /// - Parameter source: A path or URL exactly as probed.
    /// - Returns: The entry, or `nil`.
    /// - Throws: ``ProbeCacheError``.
    public func entry(for source: String) throws(ProbeCacheError) -> CachedProbe? {
        do {
            return try database.read { db in
                // Cached: a service looks photos up one by one, and preparing the statement each time (GRDB's
                // authorizer visits every column) cost more than the lookup.
                try Row.fetchOne(db.cachedStatement(sql: Self.selection), arguments: [source])
                    .flatMap(Self.decode)
            }
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// The cached entry for a source if it was stored with exactly this validator.
    public func entry(for source: String, validator: ProbeValidator) throws(ProbeCacheError) -> CachedProbe? {
        guard let entry = try entry(for: source), entry.validator == validator else { return nil }
        return entry
    }

    /// The cached entries of several sources, read in one transaction.
    /// - Parameter sources: Paths or URLs exactly as probed.
    /// - Returns: The entries found, by source; sources without one are left out.
    /// - Throws: ``ProbeCacheError``.
    public func entries(for sources: [String]) throws(ProbeCacheError) -> [String: CachedProbe] {
        do {
            return try database.read { db in
                let statement = try db.cachedStatement(sql: Self.selection)
                var found: [String: CachedProbe] = [:]
                for source in sources {
                    if let entry = try Row.fetchOne(statement, arguments: [source]).flatMap(Self.decode) {
                        found[source] = entry
                    }
                }
                return found
            }
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// Stores (or replaces) the entry for a source.
    /// - Parameters:
    ///   - entry: The validator, header facts and optional placeholder.
    ///   - source: A path or URL exactly as probed.
    /// - Throws: ``ProbeCacheError``.
    public func store(_ entry: CachedProbe, for source: String) throws(ProbeCacheError) {
        try store([(source, entry)])
    }

    /// Stores (or replaces) several entries in one transaction: one commit per entry would cost more
    /// than probing the image.
    /// - Parameter entries: Sources (paths or URLs exactly as probed) and their entries; a later entry for
    ///   the same source replaces an earlier one.
    /// - Throws: ``ProbeCacheError``; then none of the entries is stored.
    public func store(_ entries: [(source: String, entry: CachedProbe)]) throws(ProbeCacheError) {
        guard !entries.isEmpty else { return }
        let storedAt = Date().timeIntervalSince1970
        do {
            try database.write { db in
                let statement = try db.cachedStatement(
                    sql: """
                        INSERT OR REPLACE INTO probe (source, fileSize, fileModified, entityTag, lastModified, format,
                            width, height, orientation, bytesRead, flags, bitDepth, warnings, placeholderColor,
                            placeholderHash, storedAt, freshUntil)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                for (source, entry) in entries {
                    try statement.execute(arguments: Self.arguments(entry, source: source, storedAt: storedAt))
                }
            }
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    private static func arguments(_ entry: CachedProbe, source: String, storedAt: Double) -> StatementArguments {
        let row = ProbeColumns(entry)
        return [
            source, row.fileSize, row.fileModified, row.entityTag, row.lastModified, row.format, row.width, row.height,
            row.orientation, row.bytesRead, row.flags, row.bitDepth, row.warnings, row.placeholderColor,
            row.placeholderHash.map { Data($0) }, storedAt, row.freshUntil,
        ]
    }

    /// How many entries the cache holds.
    public func count() throws(ProbeCacheError) -> Int {
        do {
            return try database.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM probe") ?? 0 }
        } catch {
            throw Self.translate(error, path: path)
        }
    }

    /// An entry's columns in the order ``decode(_:)`` reads them by position: by name, GRDB lowercases every
    /// column name at every read, which was a tenth of the CPU of a layout whose photos all came from the cache.
    private static let selection = """
        SELECT fileSize, fileModified, entityTag, lastModified, format, width, height, orientation, bytesRead, flags,
            bitDepth, warnings, placeholderColor, placeholderHash, freshUntil
        FROM probe WHERE source = ?
        """

    private static func decode(_ row: Row) -> CachedProbe? {
        // Each column's type spelt out: one expression of sixteen generic subscripts is too much for the type checker.
        let fileSize: Int? = row[0]
        let fileModified: Int64? = row[1]
        let entityTag: String? = row[2]
        let lastModified: String? = row[3]
        let format: String = row[4]
        let width: Int = row[5]
        let height: Int = row[6]
        let orientation: Int = row[7]
        let bytesRead: Int = row[8]
        let flags: Int = row[9]
        let bitDepth: Int? = row[10]
        let warnings: String = row[11]
        let placeholderColor: Int64? = row[12]
        let placeholderHash: Data? = row[13]
        let freshUntil: Double? = row[14]
        return ProbeColumns(
            fileSize: fileSize, fileModified: fileModified, entityTag: entityTag, lastModified: lastModified,
            format: format, width: width, height: height, orientation: orientation, bytesRead: bytesRead, flags: flags,
            bitDepth: bitDepth, warnings: warnings, placeholderColor: placeholderColor,
            placeholderHash: placeholderHash.map { Array($0) }, freshUntil: freshUntil
        ).entry
    }
}
