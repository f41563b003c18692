import Foundation
import GRDB
import LayoutPages
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The store of one process: SQLite through GRDB, in WAL mode (requests read while a layout writes), in a file a
/// lock keeps to one process; the posted feeds are files beside it (``FeedFiles``).
///
/// Every page is stored in one transaction with its pins and the layout's running counts, so a reader sees a page
/// whole or not at all, and a process killed at any moment leaves a store whose pages are a prefix of the layout:
/// the next start resumes from the last stored page's cursor.
final class SQLiteLayoutStore: LayoutStore {
    let path: String
    /// The store's database; the probe cache shares it (one writer for the whole file).
    let database: DatabasePool
    let feeds: FeedFiles
    /// The lock file that keeps a second process off the same store: its descriptor, open until ``close()`` or
    /// the end of this instance, whichever comes first (`-1` once closed).
    private let lockDescriptor: Mutex<Int32>
    /// Layouts that failed on a full disk before their failure could be written.
    private let unrecordedFailures = UnrecordedFailures()

    /// Opens (or creates) the store.
    /// - Throws: ``StoreError`` naming the path: another process holds it, it is not a database, or it cannot be
    ///   created.
    init(path: String) throws(StoreError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            } catch {
                throw StoreError(.cannotOpen, "\(path): cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }
        // One process per store: two would each resume the other's running layouts.
        let lockPath = path + ".lock"
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw StoreError(.cannotOpen, "\(path): cannot open the lock file \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: lockPath, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            Glibc.close(descriptor)
            throw StoreError(
                .cannotOpen,
                "\(path): another process is using this store (feedlayout serve\(holder.map { ", process \($0)" } ?? ""))"
                    + "; stop it or pass another --store")
        }
        let pid = "\(getpid())\n"
        _ = ftruncate(descriptor, 0)
        _ = pid.withCString { pwrite(descriptor, $0, strlen($0), 0) }
        lockDescriptor = Mutex(descriptor)
        var configuration = Configuration()
        // A store that another program holds locked (a backup, a sqlite3 shell) is refused after a short wait
        // with a message, instead of hanging the start.
        configuration.busyMode = .timeout(3)
        configuration.label = "LayoutStore"
        let layoutIDs: [String]
        do {
            database = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator(feedsFolder: path + ".feeds").migrate(database)
            layoutIDs = try database.read { db in try String.fetchAll(db, sql: "SELECT id FROM layout") }
        } catch let error as DatabaseError {
            Glibc.close(descriptor)
            if error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED {
                throw StoreError(.cannotOpen, "\(path): the database is locked by another program; close it and start again")
            }
            if error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT {
                throw StoreError(.cannotOpen, "\(path): not a FeedLayout store (not an SQLite database, or damaged)")
            }
            throw StoreError(.cannotOpen, "\(path): cannot open the store: \(error.message ?? "\(error.resultCode)")")
        } catch {
            Glibc.close(descriptor)
            throw StoreError(.cannotOpen, "\(path): cannot open the store: \(error)")
        }
        do {
            feeds = try FeedFiles(storePath: path)
        } catch {
            Glibc.close(descriptor)
            throw error
        }
        feeds.removeStray(keeping: Set(layoutIDs))
    }

    deinit { releaseLock() }

    /// Lets the store's lock go, once.
    private func releaseLock() {
        lockDescriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// A read, with GRDB's errors turned into the store's own (``storeError(_:)``).
    func reading<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        do { return try await database.read(body) } catch { throw storeError(error) }
    }

    /// One `SELECT 1` on a reader connection (the file is there and is a database that answers).
    func checkAvailability() async throws {
        _ = try await reading { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    /// A write transaction, with GRDB's errors turned into the store's own (``storeError(_:)``).
    func writing<Value: Sendable>(_ body: @escaping @Sendable (Database) throws -> Value) async throws -> Value {
        do { return try await database.write(body) } catch { throw storeError(error) }
    }

    /// An error of SQLite's as a ``StoreError`` that names the file: callers decide by its code, and no SQL reaches
    /// a client. Cancellation stays cancellation.
    private func storeError(_ error: any Error) -> any Error {
        if error is StoreError || error is CancellationError { return error }
        guard let error = error as? DatabaseError else { return StoreError(.ioFailed, "\(path): \(error)") }
        switch error.resultCode {
        case .SQLITE_FULL:
            return StoreError(.storageFull, "\(path): the disk under the store is full")
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return StoreError(.damaged, "\(path): the store's database is damaged: \(error.message ?? "\(error.resultCode)")")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(.timeout, "\(path): the store's database stayed locked by another program")
        default:
            return StoreError(.ioFailed, "\(path): \(error.message ?? "\(error.resultCode)")")
        }
    }

    /// The schema, in versioned steps; GRDB records which ran, so each runs once per store.
    private static func migrator(feedsFolder: String) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("layouts-v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE layout (
                        id TEXT PRIMARY KEY,
                        status TEXT NOT NULL,
                        arguments TEXT NOT NULL,
                        feedName TEXT NOT NULL,
                        baseURL TEXT,
                        itemCount INTEGER NOT NULL DEFAULT 0,
                        warnings TEXT NOT NULL DEFAULT '{}',
                        errorCode TEXT,
                        errorMessage TEXT,
                        createdAt REAL NOT NULL
                    );
                    -- The feed in a table of its own: in the layout's row, every update of its counts (one per page)
                    -- would rewrite the feed's pages, and every read of a column after it would walk them. Only stores
                    -- made before feeds became files (FeedFiles) have rows here; they are still read.
                    CREATE TABLE feed (
                        layoutId TEXT PRIMARY KEY REFERENCES layout(id) ON DELETE CASCADE,
                        bytes BLOB NOT NULL
                    );
                    CREATE TABLE part (
                        layoutId TEXT NOT NULL REFERENCES layout(id) ON DELETE CASCADE,
                        layoutIndex INTEGER NOT NULL,
                        width REAL NOT NULL,
                        columns INTEGER NOT NULL,
                        pageCount INTEGER NOT NULL DEFAULT 0,
                        contentHeight REAL NOT NULL DEFAULT 0,
                        lastCursor TEXT,
                        PRIMARY KEY (layoutId, layoutIndex)
                    );
                    CREATE TABLE page (
                        layoutId TEXT NOT NULL REFERENCES layout(id) ON DELETE CASCADE,
                        layoutIndex INTEGER NOT NULL,
                        pageIndex INTEGER NOT NULL,
                        json BLOB NOT NULL,
                        gzip BLOB NOT NULL,
                        cursor TEXT,
                        PRIMARY KEY (layoutId, layoutIndex, pageIndex)
                    );
                    CREATE INDEX page_by_cursor ON page(cursor);
                    CREATE TABLE pin (
                        layoutId TEXT NOT NULL REFERENCES layout(id) ON DELETE CASCADE,
                        layoutIndex INTEGER NOT NULL,
                        itemIndex INTEGER NOT NULL,
                        columnIndex INTEGER NOT NULL,
                        columnSpan INTEGER NOT NULL,
                        x INTEGER NOT NULL, y INTEGER NOT NULL, width INTEGER NOT NULL, height INTEGER NOT NULL,
                        pageIndex INTEGER NOT NULL,
                        jsonOffset INTEGER NOT NULL,
                        jsonLength INTEGER NOT NULL,
                        PRIMARY KEY (layoutId, layoutIndex, itemIndex)
                    );
                    """)
        }
        migrator.registerMigration("pages-gzipped-only") { db in
            // Pages are kept gzipped only (see LayoutStore.page(_:layoutIndex:pageIndex:gzip:)).
            try db.execute(sql: "ALTER TABLE page DROP COLUMN json")
        }
        migrator.registerMigration("options-json") { db in
            // Options were kept as `feedlayout layout` arguments; they are the request's named options as JSON now.
            // A layout keeps its id and pages: the same options give the same LayoutOptions either way.
            try db.execute(sql: "ALTER TABLE layout ADD COLUMN options TEXT NOT NULL DEFAULT ''")
            let rows = try Row.fetchAll(db, sql: "SELECT id, arguments FROM layout")
            for row in rows {
                let arguments = try JSONDecoder().decode([String].self, from: Data((row["arguments"] as String).utf8))
                let options = LayoutOptionValues.storedJSON(LayoutOptionValues.named(storedArguments: arguments))
                try db.execute(sql: "UPDATE layout SET options = ? WHERE id = ?", arguments: [options, row["id"] as String])
            }
            try db.execute(sql: "ALTER TABLE layout DROP COLUMN arguments")
        }
        migrator.registerMigration("sizes-and-reads") { db in
            // What each layout holds (its feed's bytes; each part's pages, cursors and pins, kept up to date as
            // pages are stored) and when it was last read: for GET /v1/layouts and the evictor.
            try db.execute(
                sql: """
                    ALTER TABLE layout ADD COLUMN feedBytes INTEGER NOT NULL DEFAULT 0;
                    ALTER TABLE layout ADD COLUMN lastReadAt REAL;
                    ALTER TABLE part ADD COLUMN storedBytes INTEGER NOT NULL DEFAULT 0;
                    UPDATE part SET storedBytes =
                        coalesce((SELECT sum(length(gzip) + coalesce(length(cursor), 0)) FROM page
                            WHERE page.layoutId = part.layoutId AND page.layoutIndex = part.layoutIndex), 0)
                        + \(LayoutListing.pinRecordBytes) * (SELECT count(*) FROM pin
                            WHERE pin.layoutId = part.layoutId AND pin.layoutIndex = part.layoutIndex);
                    UPDATE layout SET feedBytes = coalesce((SELECT length(bytes) FROM feed WHERE layoutId = layout.id), 0);
                    -- Creation times in whole microseconds, as new layouts get them: a listing's cursor names one
                    -- exactly (round() and the division are the ones Swift does, so the doubles are the same).
                    UPDATE layout SET createdAt = round(createdAt * 1000000) / 1000000.0;
                    CREATE INDEX layout_by_creation ON layout(createdAt, id);
                    """)
            for id in try String.fetchAll(db, sql: "SELECT id FROM layout") {
                let attributes = try? FileManager.default.attributesOfItem(atPath: feedsFolder + "/" + id)
                if let size = attributes?[.size] as? Int {
                    try db.execute(sql: "UPDATE layout SET feedBytes = ? WHERE id = ?", arguments: [size, id])
                }
            }
        }
        // Feed subscriptions (SQLiteLayoutStore+Subscriptions.swift).
        registerSubscriptionMigrations(&migrator)
        migrator.registerMigration("page-counts") { db in
            // Each page's warnings by code and the layout's height after it, so that a new version of a feed can
            // take an older version's pages as its own with their counts (adoptPages). Pages stored before have
            // NULL here, and are never adopted.
            try db.execute(
                sql: """
                    ALTER TABLE page ADD COLUMN warnings TEXT;
                    ALTER TABLE page ADD COLUMN contentHeight REAL;
                    """)
        }
        migrator.registerMigration("pin-blocks") { db in
            // A page's pins in one row (PinBlock) instead of a row each; itemEnd (the item after its last pin)
            // finds the pages that hold pins from an item on.
            try db.execute(
                sql: """
                    CREATE TABLE pin_block (
                        layoutId TEXT NOT NULL REFERENCES layout(id) ON DELETE CASCADE,
                        layoutIndex INTEGER NOT NULL,
                        pageIndex INTEGER NOT NULL,
                        itemEnd INTEGER NOT NULL,
                        pins BLOB NOT NULL,
                        PRIMARY KEY (layoutId, layoutIndex, pageIndex)
                    )
                    """)
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT layoutId, layoutIndex, itemIndex, columnIndex, columnSpan, x, y, width, height, pageIndex,
                        jsonOffset, jsonLength
                    FROM pin ORDER BY layoutId, layoutIndex, pageIndex, itemIndex
                    """)
            var page: (id: String, layoutIndex: Int, pageIndex: Int)?
            var pins: [PinRecord] = []
            func flush() throws {
                guard let page, let last = pins.last else { return }
                try db.execute(
                    sql: "INSERT INTO pin_block (layoutId, layoutIndex, pageIndex, itemEnd, pins) VALUES (?, ?, ?, ?, ?)",
                    arguments: [page.id, page.layoutIndex, page.pageIndex, last.itemIndex + 1, Data(PinBlock.encode(pins))])
                pins.removeAll(keepingCapacity: true)
            }
            while let row = try rows.next() {
                let key = (id: row["layoutId"] as String, layoutIndex: row["layoutIndex"] as Int, pageIndex: row["pageIndex"] as Int)
                if let current = page, current != key {
                    try flush()
                }
                page = key
                pins.append(Self.pinRecord(row))
            }
            try flush()
            try db.execute(sql: "DROP TABLE pin")
        }
        // Pages a layout takes from another by reference (SQLiteLayoutStore+Adoption.swift).
        registerPageShareMigration(&migrator)
        return migrator
    }

    // MARK: Layouts

    func insertLayout(
        id: String, options: String, feedName: String, baseURL: String?, feed: [UInt8], sharing: LayoutFeedPrefix?,
        parts: [(width: Double, columns: Int)]
    ) async throws -> Bool {
        let exists = try await reading { db in
            try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM layout WHERE id = ?"), arguments: [id]) ?? false
        }
        guard !exists else { return false }
        // The file first, flushed to disk: the row that names it must never exist without it. The row goes in only
        // while the file is there (checked holding the writer): a removal of the same layout that ran meanwhile
        // takes its file away, holding the writer too, and the file is then written again.
        let feeds = self.feeds
        do {
            for _ in 0..<3 {
                try await FeedFiles.onQueue { try feeds.write(feed, id: id, sharing: sharing) }
                if let isNew = try await insertLayoutRow(
                    id: id, options: options, feedName: feedName, baseURL: baseURL, feedBytes: feed.count, parts: parts)
                {
                    await writeUnrecordedFailures()
                    return isNew
                }
            }
        } catch {
            // No row names the file (a full disk refused the row): it goes now, not at the next start. A row another
            // request committed meanwhile for the same feed keeps it.
            let named = (try? await reading { db in
                try Bool.fetchOne(db.cachedStatement(sql: "SELECT 1 FROM layout WHERE id = ?"), arguments: [id]) ?? false
            }) ?? true
            if !named { feeds.remove(id: id) }
            throw error
        }
        throw StoreError(.ioFailed, "\(path): the feed of layout \(id) was removed three times while it was stored")
    }

    /// The layout's row and its parts, while its feed file is there (checked holding the writer); nil when a removal
    /// took the file away meanwhile.
    private func insertLayoutRow(
        id: String, options: String, feedName: String, baseURL: String?, feedBytes: Int,
        parts: [(width: Double, columns: Int)]
    ) async throws -> Bool? {
        let feeds = self.feeds
        return try await writing { db -> Bool? in
            guard feeds.exists(id: id) else { return nil }
            try db.execute(
                sql: """
                    INSERT OR IGNORE INTO layout (id, status, options, feedName, baseURL, createdAt, feedBytes)
                    VALUES (?, 'running', ?, ?, ?, ?, ?)
                    """,
                arguments: [id, options, feedName, baseURL, Self.creationTime(), feedBytes])
            guard db.changesCount > 0 else { return false }
            for (index, part) in parts.enumerated() {
                try db.execute(
                    sql: "INSERT INTO part (layoutId, layoutIndex, width, columns) VALUES (?, ?, ?, ?)",
                    arguments: [id, index, part.width, part.columns])
            }
            return true
        }
    }

    func layout(_ id: String) async throws -> LayoutRecord? {
        let record = try await reading { db -> LayoutRecord? in
            guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM layout WHERE id = ?"), arguments: [id]) else {
                return nil
            }
            let parts = try Row.fetchAll(
                db.cachedStatement(sql: "SELECT * FROM part WHERE layoutId = ? ORDER BY layoutIndex"), arguments: [id]
            ).map { part in
                PartRecord(
                    layoutIndex: part["layoutIndex"], width: part["width"], columns: part["columns"],
                    pageCount: part["pageCount"], contentHeight: part["contentHeight"], lastCursor: part["lastCursor"])
            }
            let warnings = try JSONDecoder().decode([String: Int].self, from: Data((row["warnings"] as String).utf8))
            return LayoutRecord(
                id: id, status: row["status"], options: row["options"], feedName: row["feedName"], baseURL: row["baseURL"],
                itemCount: row["itemCount"], warnings: warnings, errorCode: row["errorCode"],
                errorMessage: row["errorMessage"], parts: parts)
        }
        return unrecordedFailures.applied(to: record)
    }

    func feed(of id: String) async throws -> [UInt8]? {
        let feeds = self.feeds
        if let bytes = try await FeedFiles.onQueue({ try feeds.read(id: id) }) { return bytes }
        return try await reading { db in
            // Copied once, from SQLite's memory into the array (fetching a `Data` would copy it twice).
            let rows = try Row.fetchCursor(db, sql: "SELECT bytes FROM feed WHERE layoutId = ?", arguments: [id])
            return try rows.next()?.withUnsafeData(atIndex: 0) { data in data.map { [UInt8]($0) } ?? [] }
        }
    }

    func claimableLayouts() async throws -> [String] {
        try await reading { db in
            try String.fetchAll(db, sql: "SELECT id FROM layout WHERE status = 'running' ORDER BY createdAt, id")
        }
    }

    func storePage(_ write: PageWrite, layoutId id: String) async throws {
        try await storePages([write], layoutId: id)
    }

    func storePages(_ writes: [PageWrite], layoutId id: String) async throws {
        try await writing { db in
            for write in writes { try Self.insertPage(write, layoutId: id, db) }
        }
        await writeUnrecordedFailures()
    }

    /// A page, its pins, the part's progress and the counts it adds, in the caller's transaction; nothing for a
    /// page stored before.
    private static func insertPage(_ write: PageWrite, layoutId id: String, _ db: Database) throws {
        // Cached statements: preparing the same five statements anew for every page was a measurable share of
        // storing it.
        let exists =
            try Bool.fetchOne(
                db.cachedStatement(
                    sql: "SELECT 1 FROM page WHERE layoutId = \(pageHolder) AND layoutIndex = ?2 AND pageIndex = ?3"),
                arguments: [id, write.layoutIndex, write.pageIndex]) ?? false
        guard !exists else { return }
        try write.gzip.withBlob { gzip in
            try db.cachedStatement(
                sql: """
                    INSERT INTO page (layoutId, layoutIndex, pageIndex, gzip, cursor, warnings, contentHeight)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(arguments: [
                id, write.layoutIndex, write.pageIndex, gzip, write.cursor, PageCounts.json(write.warnings),
                write.contentHeight,
            ])
        }
        if let last = write.pins.last {
            try PinBlock.encode(write.pins).withBlob { pins in
                try db.cachedStatement(
                    sql: """
                        INSERT OR REPLACE INTO pin_block (layoutId, layoutIndex, pageIndex, itemEnd, pins)
                        VALUES (?, ?, ?, ?, ?)
                        """
                ).execute(arguments: [id, write.layoutIndex, write.pageIndex, last.itemIndex + 1, pins])
            }
        }
        try db.cachedStatement(
            sql: """
                UPDATE part SET pageCount = pageCount + 1, contentHeight = ?, lastCursor = ?,
                    storedBytes = storedBytes + ?
                WHERE layoutId = ? AND layoutIndex = ?
                """
        ).execute(
            arguments: [write.contentHeight, write.cursor, LayoutListing.bytes(of: write), id, write.layoutIndex])
        if write.itemCount > 0 || !write.warnings.isEmpty {
            try addCounts(db, id: id, items: write.itemCount, warnings: write.warnings)
        }
    }

    static func addCounts(_ db: Database, id: String, items: Int, warnings: [String: Int]) throws {
        var merged = try JSONDecoder().decode(
            [String: Int].self,
            from: Data((try String.fetchOne(db.cachedStatement(sql: "SELECT warnings FROM layout WHERE id = ?"), arguments: [id]) ?? "{}").utf8))
        for (code, count) in warnings { merged[code, default: 0] += count }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try db.cachedStatement(sql: "UPDATE layout SET itemCount = itemCount + ?, warnings = ? WHERE id = ?").execute(
            arguments: [items, String(decoding: try encoder.encode(merged), as: UTF8.self), id])
    }

    func finishLayout(_ id: String, feedWarnings: [String: Int]) async throws {
        try await writing { db in
            if !feedWarnings.isEmpty { try Self.addCounts(db, id: id, items: 0, warnings: feedWarnings) }
            try db.execute(sql: "UPDATE layout SET status = 'done' WHERE id = ?", arguments: [id])
        }
    }

    /// On a full disk the failure is kept in memory until it can be written (``UnrecordedFailures``).
    func failLayout(_ id: String, code: String, message: String) async throws {
        do {
            try await writeFailure(id, code: code, message: message)
        } catch let error as StoreError where error.code == .storageFull {
            unrecordedFailures.remember(id, code: code, message: message)
        }
    }

    private func writeFailure(_ id: String, code: String, message: String) async throws {
        try await writing { db in
            try db.execute(
                sql: "UPDATE layout SET status = 'failed', errorCode = ?, errorMessage = ? WHERE id = ?",
                arguments: [code, message, id])
        }
        unrecordedFailures.forget(id)
    }

    /// Writes the failures a full disk kept in memory, now that a write went through.
    private func writeUnrecordedFailures() async {
        guard !unrecordedFailures.isEmpty else { return }
        await unrecordedFailures.writePending { id, failure in
            try await writeFailure(id, code: failure.code, message: failure.message)
        }
    }

    /// The store's lock file keeps other processes off: every layout is this process's.
    func claim(_ id: String) async throws -> Bool { true }

    func release(_ id: String) async {}

    var takeoverInterval: Duration? { nil }

    func watchChanges(_ changed: @escaping @Sendable (String?) async -> Void) async {}

    /// Lets the lock go when the service stops, not when the last reference to this instance does: that can
    /// outlive the service for a while (GRDB's queues finishing up, a task ending), and a service started again in
    /// the same process (a test's restart) was refused as "another process" meanwhile.
    func close() { releaseLock() }

    // MARK: Pages and pins

    func gzippedPage(_ id: String, layoutIndex: Int, pageIndex: Int) async throws -> Data? {
        try await reading { db in
            try Data.fetchOne(
                db.cachedStatement(
                    sql: "SELECT gzip FROM page WHERE layoutId = \(Self.pageHolder) AND layoutIndex = ?2 AND pageIndex = ?3"),
                arguments: [id, layoutIndex, pageIndex])
        }
    }

    func pageWithCursor(_ cursor: String, layoutId: String?) async throws -> (id: String, layoutIndex: Int, pageIndex: Int)? {
        try await reading { db in
            // The rows with the cursor, each as a page of the layout whose row it is and of every layout that shares it.
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT layout.id AS layoutId, page.layoutIndex, page.pageIndex, layout.createdAt FROM page
                        JOIN layout ON layout.id = page.layoutId
                        WHERE page.cursor = ?1 AND (?2 IS NULL OR page.layoutId = ?2)
                        UNION ALL
                        SELECT layout.id, page.layoutIndex, page.pageIndex, layout.createdAt FROM page
                        JOIN page_share AS share ON share.ownerId = page.layoutId AND share.layoutIndex = page.layoutIndex
                            AND share.pageStart <= page.pageIndex AND share.pageEnd > page.pageIndex
                        JOIN layout ON layout.id = share.layoutId
                        WHERE page.cursor = ?1 AND (?2 IS NULL OR share.layoutId = ?2)
                        ORDER BY createdAt DESC LIMIT 1
                        """), arguments: [cursor, layoutId])
            return row.map { ($0["layoutId"], $0["layoutIndex"], $0["pageIndex"]) }
        }
    }

    func pins(_ id: String, layoutIndex: Int, from itemIndex: Int) async throws -> [PinRecord] {
        try await reading { db in
            var pins: [PinRecord] = []
            let blocks = try Data.fetchCursor(
                db.cachedStatement(
                    sql: """
                        SELECT pins, pageIndex FROM pin_block WHERE layoutId = ?1 AND layoutIndex = ?2 AND itemEnd > ?3
                        UNION ALL
                        SELECT block.pins, block.pageIndex FROM page_share AS share
                        JOIN pin_block AS block ON block.layoutId = share.ownerId
                            AND block.layoutIndex = share.layoutIndex AND block.pageIndex >= share.pageStart
                            AND block.pageIndex < share.pageEnd
                        WHERE share.layoutId = ?1 AND share.layoutIndex = ?2 AND block.itemEnd > ?3
                        ORDER BY 2
                        """), arguments: [id, layoutIndex, itemIndex])
            while let block = try blocks.next() { PinBlock.decode(block, from: itemIndex, into: &pins) }
            return pins
        }
    }

    /// A row of the pin table that pin blocks replaced (the "pin-blocks" migration).
    private static func pinRecord(_ row: Row) -> PinRecord {
        PinRecord(
            itemIndex: row["itemIndex"], column: row["columnIndex"], columnSpan: row["columnSpan"], x: row["x"],
            y: row["y"], width: row["width"], height: row["height"], pageIndex: row["pageIndex"],
            jsonOffset: row["jsonOffset"], jsonLength: row["jsonLength"])
    }
}

extension [UInt8] {
    /// The bytes as a `Data` that borrows them, for binding to a statement inside `body`: SQLite copies what it
    /// binds, so copying into a `Data` first only added a copy (for a large feed, its page faults too).
    fileprivate func withBlob<Result>(_ body: (Data) throws -> Result) rethrows -> Result {
        try withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else { return try body(Data()) }
            return try body(Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: bytes.count, deallocator: .none))
        }
    }
}
