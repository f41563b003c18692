import Foundation
import LayoutPages
import Logging
import NIOCore
import PostgresNIO
import Synchronization

/// The store several `feedlayout serve` instances share: PostgreSQL through postgres-nio, in the schema
/// `feedlayout` of the database the URL names.
///
/// A layout is computed by one instance at a time, the holder of its lease: a row's owner and expiry, taken with
/// one conditional `UPDATE` and renewed while the layout runs. Every page is written in a transaction that first
/// locks the layout's row and checks the lease, so an instance that lost its lease (paused past the expiry while
/// another took over) can never add a page. An instance killed mid-layout stops renewing; once the lease expires,
/// another claims it and resumes from the last stored page's cursor. Each page's commit sends a notification
/// (`NOTIFY feedlayout`), which every instance listens for to wake the requests waiting for that layout.
///
/// When PostgreSQL does not answer (restarting, say), operations fail with a transient ``StoreError`` (the service
/// answers 503) and the layouts being computed wait and try again: nothing is lost, and a page is never stored twice.
final class PostgresLayoutStore: LayoutStore {
    /// The URL without its password, for messages.
    let displayURL: String
    /// Where the server is and how to connect to it (TLS, the password).
    private let settings: PostgresConnectionSettings
    let client: PostgresClient
    private let clientTask: Task<Void, Never>
    /// Who holds a lease: this process, unique across hosts and restarts.
    let owner: String
    let leaseDuration: Duration
    /// How long one store operation may wait for PostgreSQL before the request gets a 503.
    private let operationTimeout: Duration
    let logger: Logger
    private let renewals = Mutex<[String: Task<Void, Never>]>([:])
    /// Layouts that failed on a full disk before their failure could be written (shown by this instance only).
    private let unrecordedFailures = UnrecordedFailures()
    /// Feeds written at once. Twenty feeds posted together were written together: each took all twenty as long to
    /// store (they shared the server's writes and held every pooled connection, so pages waited too), and no layout
    /// could start before the end. Two at a time, the first layouts start after their own feed.
    private let feedWrites = AsyncPermits(2)
    static let channel = "feedlayout"

    /// Whether a `--store` value names a PostgreSQL database rather than a file.
    static func isURL(_ store: String) -> Bool {
        store.hasPrefix("postgres://") || store.hasPrefix("postgresql://")
    }

    /// Connects and brings the schema up to date.
    /// - Parameters:
    ///   - url: `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=…&sslrootcert=…]` (also `postgresql://`;
    ///     see ``PostgresConnectionSettings``).
    ///   - password: The password from the environment or a file; it wins over one in the URL.
    ///   - leaseDuration: How long a layout stays with an instance that stopped renewing its lease.
    /// - Throws: ``StoreError`` naming the URL: it is not a PostgreSQL URL, the server does not answer, TLS or the
    ///   password is refused, or the schema cannot be created.
    static func open(
        url: String, password: StorePassword? = nil, leaseDuration: Duration, logger: Logger
    ) async throws(StoreError) -> PostgresLayoutStore {
        let store = try PostgresLayoutStore(url: url, password: password, leaseDuration: leaseDuration, logger: logger)
        // The pool would only say, after its circuit breaker's wait, that it could not connect: one connection of
        // its own says at once why the server refuses this instance (TLS refused or not verified, the password,
        // pg_hba.conf). A server that does not answer yet is left to the pool, which waits for it.
        if let refusal = await store.connectionRefusal() {
            store.close()
            throw StoreError(.cannotOpen, "\(store.displayURL): cannot open the store: \(refusal)")
        }
        do {
            try await store.migrate()
        } catch {
            store.close()
            throw StoreError(.cannotOpen, "\(store.displayURL): cannot open the store: \(Self.describe(error))")
        }
        return store
    }

    /// Why the server refuses one connection made as the pool makes them, or `nil` when it takes it or does not
    /// answer (yet).
    private func connectionRefusal() async -> String? {
        do {
            var configuration = PostgresConnection.Configuration(
                host: settings.host, port: settings.port, username: settings.user, password: settings.password,
                database: settings.database, tls: try settings.connectionTLS())
            configuration.options.connectTimeout = .seconds(3)
            let connection = try await PostgresConnection.connect(
                configuration: configuration, id: 0, logger: logger)
            try? await connection.close()
            return nil
        } catch {
            return Self.isRefusal(error) ? Self.describe(error) : nil
        }
    }

    /// Whether a failed connection was refused for good: by TLS (unsupported, the handshake, the certificate), or by
    /// the server itself (authentication, pg_hba.conf, no such database), not for being down or starting.
    static func isRefusal(_ error: any Error) -> Bool {
        if describeTLS(error) != nil { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .sslUnsupported, .failedToAddSSLHandler:
            return true
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            return !(state.hasPrefix("08") || state.hasPrefix("57P"))
        default:
            return error.underlying.map { describeTLS($0) != nil } ?? false
        }
    }

    private init(url: String, password: StorePassword?, leaseDuration: Duration, logger: Logger) throws(StoreError) {
        var settings = try PostgresConnectionSettings(url: url)
        settings.password = password?.password ?? settings.urlPassword
        self.settings = settings
        displayURL = settings.displayURL
        if settings.urlPassword != nil {
            let warning =
                password == nil
                ? "the store URL holds a password, which any user of this machine can read in ps; give it in "
                    + "FEEDLAYOUT_STORE_PASSWORD, PGPASSWORD or --store-password-file instead"
                : "the store URL holds a password, ignored for the one from \(password!.source); remove it "
                    + "from the URL"
            logger.warning("\(warning)", metadata: ["store": "\(settings.displayURL)"])
        }
        var configuration = PostgresClient.Configuration(
            host: settings.host, port: settings.port, username: settings.user,
            password: settings.password, database: settings.database, tls: try settings.clientTLS())
        configuration.options.connectTimeout = .seconds(3)
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let client = self.client
        clientTask = Task { await client.run() }
        owner = "\(ProcessInfo.processInfo.hostName):\(getpid()):\(UUID().uuidString.prefix(8))"
        self.leaseDuration = leaseDuration
        operationTimeout = .seconds(5)
        self.logger = logger
    }

    var takeoverInterval: Duration? { leaseDuration / 2 }

    /// The probe cache in this store's database, on the store's connections: every instance sharing the store
    /// shares its probes.
    func probeCache() -> PostgresProbeCache {
        PostgresProbeCache(client: client, displayURL: displayURL, logger: logger)
    }

    /// Stops renewing leases and closes the connections.
    func close() {
        renewals.withLock { tasks in
            for task in tasks.values { task.cancel() }
            tasks.removeAll()
        }
        clientTask.cancel()
    }

    deinit { close() }

    /// The bytes of a feed in one stored chunk (and in one message to or from PostgreSQL).
    static let feedChunkSize = 1 << 20

    // MARK: Layouts

    /// With `sharing`, the chunks that lie wholly inside the shared prefix are referenced, not stored again
    /// (PostgresLayoutStore+Sharing): a new version stores the rest of the last of them and what follows.
    func insertLayout(
        id: String, options: String, feedName: String, baseURL: String?, feed: [UInt8], sharing: LayoutFeedPrefix?,
        parts: [(width: Double, columns: Int)]
    ) async throws -> Bool {
        let widths = parts.map(\.width)
        let columns = parts.map(\.columns)
        return try await feedWrites.withPermit {
            try await insertLayoutRows(
                id: id, options: options, feedName: feedName, baseURL: baseURL, feed: feed, sharing: sharing,
                widths: widths, columns: columns)
        }
    }

    private func insertLayoutRows(
        id: String, options: String, feedName: String, baseURL: String?, feed: [UInt8], sharing: LayoutFeedPrefix?,
        widths: [Double], columns: [Int]
    ) async throws -> Bool {
        try await operation { [client, logger] in
            try await client.withTransaction(logger: logger) { connection in
                let inserted = try await connection.query(
                    """
                    INSERT INTO feedlayout.layout (id, status, options, feed_name, base_url, feed_bytes)
                    VALUES (\(id), 'running', \(options), \(feedName), \(baseURL), \(feed.count))
                    ON CONFLICT (id) DO NOTHING RETURNING id
                    """, logger: logger
                ).collect()
                guard !inserted.isEmpty else { return false }
                let sharedChunks = try await Self.shareFeedChunks(
                    id: id, sharing: sharing, feedCount: feed.count, connection: connection, logger: logger)
                for start in stride(from: sharedChunks * Self.feedChunkSize, to: feed.count, by: Self.feedChunkSize) {
                    let chunk = Data(feed[start..<min(feed.count, start + Self.feedChunkSize)])
                    try await connection.query(
                        """
                        INSERT INTO feedlayout.feed_chunk (layout_id, chunk_index, bytes)
                        VALUES (\(id), \(start / Self.feedChunkSize), \(chunk))
                        """, logger: logger)
                }
                try await connection.query(
                    """
                    INSERT INTO feedlayout.part (layout_id, layout_index, width, columns)
                    SELECT \(id), ordinality - 1, width, columns
                    FROM UNNEST(\(widths)::float8[], \(columns)::int8[]) WITH ORDINALITY AS p(width, columns, ordinality)
                    """, logger: logger)
                return true
            }
        }
    }

    /// References the chunks of `sharing`'s feed that lie wholly inside the shared prefix, when they are all there
    /// whole.
    /// - Returns: How many chunks, from the first, are referenced (0: the feed is stored whole).
    private static func shareFeedChunks(
        id: String, sharing: LayoutFeedPrefix?, feedCount: Int, connection: PostgresConnection, logger: Logger
    ) async throws -> Int {
        guard let sharing, sharing.layoutId != id, sharing.prefixLength <= feedCount else { return 0 }
        let count = sharing.prefixLength / feedChunkSize
        guard count > 0,
            let sourceShares = try await lockedShares(
                of: sharing.layoutId, .feedChunks, part: 0, connection: connection, logger: logger)
        else { return 0 }
        let shares = RowSharing.adopted(from: sharing.layoutId, sourceShares: sourceShares, count: count)
        for try await (chunks, bytes) in try await connection.query(
            """
            SELECT count(*)::int8, coalesce(sum(length(c.bytes)), 0)::int8
            FROM UNNEST(\(shares.map(\.owner))::text[], \(shares.map(\.rows.lowerBound))::int8[],
                \(shares.map(\.rows.upperBound))::int8[]) AS r(owner_id, chunk_start, chunk_end)
            JOIN feedlayout.feed_chunk c ON c.layout_id = r.owner_id
                AND c.chunk_index >= r.chunk_start AND c.chunk_index < r.chunk_end
            """, logger: logger
        ).decode((Int, Int).self) {
            // Chunks of another size (a store written with another chunk size) are not shared.
            guard chunks == count, bytes == count * feedChunkSize else { return 0 }
        }
        try await insertShares(shares, of: id, .feedChunks, part: 0, connection: connection, logger: logger)
        return count
    }

    func layout(_ id: String) async throws -> LayoutRecord? {
        unrecordedFailures.applied(to: try await storedLayout(id))
    }

    private func storedLayout(_ id: String) async throws -> LayoutRecord? {
        try await operation { [client, logger] in
            let rows = try await client.query(
                """
                SELECT status, options, feed_name, base_url, item_count, warnings, error_code, error_message
                FROM feedlayout.layout WHERE id = \(id)
                """, logger: logger
            ).collect()
            guard let row = rows.first else { return nil }
            let (status, options, feedName, baseURL, itemCount, warnings, errorCode, errorMessage) = try row.decode(
                (String, String, String, String?, Int, String, String?, String?).self)
            var parts: [PartRecord] = []
            for try await (index, width, columns, pageCount, height, cursor) in try await client.query(
                """
                SELECT layout_index, width, columns, page_count, content_height, last_cursor
                FROM feedlayout.part WHERE layout_id = \(id) ORDER BY layout_index
                """, logger: logger
            ).decode((Int, Double, Int, Int, Double, String?).self) {
                parts.append(
                    PartRecord(
                        layoutIndex: index, width: width, columns: columns, pageCount: pageCount,
                        contentHeight: height, lastCursor: cursor))
            }
            return LayoutRecord(
                id: id, status: status,
                options: options, feedName: feedName,
                baseURL: baseURL, itemCount: itemCount,
                warnings: try JSONDecoder().decode([String: Int].self, from: Data(warnings.utf8)),
                errorCode: errorCode, errorMessage: errorMessage, parts: parts)
        }
    }

    func feed(of id: String) async throws -> [UInt8]? {
        try await operation { [client, logger] in
            var feed: [UInt8] = []
            var found = false
            for try await (size, bytes) in try await client.query(
                """
                SELECT sum(length(bytes)) OVER (), bytes FROM (
                    SELECT chunk_index, bytes FROM feedlayout.feed_chunk WHERE layout_id = \(id)
                    UNION ALL
                    SELECT chunk.chunk_index, chunk.bytes FROM feedlayout.feed_chunk_share share
                    JOIN feedlayout.feed_chunk chunk ON chunk.layout_id = share.owner_id
                        AND chunk.chunk_index >= share.chunk_start AND chunk.chunk_index < share.chunk_end
                    WHERE share.layout_id = \(id)
                ) AS chunks
                ORDER BY chunk_index
                """, logger: logger
            ).decode((Int, Data).self) {
                if !found { feed.reserveCapacity(size) }
                found = true
                feed.append(contentsOf: bytes)
            }
            // A layout of an empty feed has no chunks: it exists when its layout does.
            if !found, try await client.query("SELECT 1 FROM feedlayout.layout WHERE id = \(id)", logger: logger)
                .collect().isEmpty
            {
                return nil
            }
            return feed
        }
    }

    func claimableLayouts() async throws -> [String] {
        try await operation { [client, logger] in
            var ids: [String] = []
            for try await id in try await client.query(
                """
                SELECT id FROM feedlayout.layout
                WHERE status = 'running' AND (lease_owner IS NULL OR lease_expires < clock_timestamp())
                ORDER BY created_at, id
                """, logger: logger
            ).decode(String.self) {
                ids.append(id)
            }
            return ids
        }
    }

    func claim(_ id: String) async throws -> Bool {
        let seconds = leaseDuration.seconds
        let claimed = try await operation { [client, logger, owner] in
            try await !client.query(
                """
                UPDATE feedlayout.layout
                SET lease_owner = \(owner), lease_expires = clock_timestamp() + \(seconds) * interval '1 second'
                WHERE id = \(id) AND status = 'running'
                    AND (lease_owner IS NULL OR lease_owner = \(owner) OR lease_expires < clock_timestamp())
                RETURNING id
                """, logger: logger
            ).collect().isEmpty
        }
        if claimed { startRenewing(id) }
        return claimed
    }

    /// Renews the lease three times per lease duration while the layout runs; a renewal that fails (PostgreSQL
    /// away) is tried again at the next beat, and a lease another instance took is left to it (the next page's
    /// write then stops this computation).
    private func startRenewing(_ id: String) {
        let beat = leaseDuration / 3
        let seconds = leaseDuration.seconds
        let task = Task { [client, logger, owner] in
            while !Task.isCancelled {
                try? await Task.sleep(for: beat)
                if Task.isCancelled { break }
                do {
                    try await client.query(
                        """
                        UPDATE feedlayout.layout
                        SET lease_expires = clock_timestamp() + \(seconds) * interval '1 second'
                        WHERE id = \(id) AND lease_owner = \(owner) AND status = 'running'
                        """, logger: logger)
                } catch {
                    logger.debug("cannot renew a lease", metadata: ["layout": "\(id)", "error": "\(error)"])
                }
            }
        }
        renewals.withLock { tasks in
            tasks.removeValue(forKey: id)?.cancel()
            tasks[id] = task
        }
    }

    private func stopRenewing(_ id: String) {
        renewals.withLock { $0.removeValue(forKey: id)?.cancel() }
    }

    func release(_ id: String) async {
        stopRenewing(id)
        _ = try? await operation { [client, logger, owner] in
            try await client.query(
                """
                UPDATE feedlayout.layout SET lease_owner = NULL, lease_expires = NULL
                WHERE id = \(id) AND lease_owner = \(owner)
                """, logger: logger)
        }
    }

    func storePage(_ write: PageWrite, layoutId id: String) async throws {
        try await storePages([write], layoutId: id)
    }

    /// Pages a statement stores at most: a batch's bytes go in one message, which the connection's write buffer
    /// grows to and keeps.
    static let pagesPerStatement = 64

    func storePages(_ writes: [PageWrite], layoutId id: String) async throws {
        var start = writes.startIndex
        while start < writes.endIndex {
            let end = min(start + Self.pagesPerStatement, writes.endIndex)
            try await storeBatch(writes[start..<end], layoutId: id)
            start = end
        }
    }

    /// Stores pages in one statement, one round trip (``PageBatchStatement``).
    private func storeBatch(_ writes: ArraySlice<PageWrite>, layoutId id: String) async throws {
        let statement = try PageBatchStatement(writes, layoutId: id, owner: owner)
        let held = try await operation { [client, logger] in
            for try await held in try await client.execute(statement, logger: logger) { return held }
            return 0
        }
        // No row held: the lease is another instance's now (or the layout is gone). Pages already stored add
        // nothing and are no error.
        guard held == 1 else { throw Self.leaseLost(id) }
    }

    /// Counts by code as a JSON object.
    static func warningsJSON(_ warnings: [String: Int]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(warnings), as: UTF8.self)
    }

    /// Locks the layout's row for the transaction and checks that this instance still holds its lease.
    static func lockHeldLayout(
        _ id: String, owner: String, connection: PostgresConnection, logger: Logger
    ) async throws {
        for try await holder in try await connection.query(
            "SELECT lease_owner FROM feedlayout.layout WHERE id = \(id) FOR UPDATE", logger: logger
        ).decode(String?.self) {
            guard holder == owner else { throw Self.leaseLost(id) }
            return
        }
        throw Self.leaseLost(id)
    }

    /// Tells every instance listening (``watchChanges(_:)``) that the layout changed, once the transaction commits.
    static func announce(_ id: String, connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query("SELECT pg_notify(\(channel), \(id))", logger: logger)
    }

    func finishLayout(_ id: String, feedWarnings: [String: Int]) async throws {
        let feedWarningsJSON = try Self.warningsJSON(feedWarnings)
        try await operation { [client, logger, owner] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.lockHeldLayout(id, owner: owner, connection: connection, logger: logger)
                try await connection.query(
                    """
                    UPDATE feedlayout.layout SET status = 'done', lease_owner = NULL, lease_expires = NULL,
                        warnings = feedlayout.add_counts(warnings, \(feedWarningsJSON))
                    WHERE id = \(id)
                    """, logger: logger)
                try await Self.announce(id, connection: connection, logger: logger)
            }
        }
        stopRenewing(id)
    }

    /// On a full disk the failure is kept in memory (``UnrecordedFailures``) and the lease is let go: another
    /// instance, or this one's next start, takes the layout up again once it expires.
    func failLayout(_ id: String, code: String, message: String) async throws {
        do {
            try await writeFailure(id, code: code, message: message)
        } catch let error as StoreError where error.code == .storageFull {
            unrecordedFailures.remember(id, code: code, message: message)
            stopRenewing(id)
        }
    }

    private func writeFailure(_ id: String, code: String, message: String) async throws {
        try await operation { [client, logger, owner] in
            try await client.withTransaction(logger: logger) { connection in
                try await Self.lockHeldLayout(id, owner: owner, connection: connection, logger: logger)
                try await connection.query(
                    """
                    UPDATE feedlayout.layout SET status = 'failed', error_code = \(code), error_message = \(message),
                        lease_owner = NULL, lease_expires = NULL
                    WHERE id = \(id)
                    """, logger: logger)
                try await Self.announce(id, connection: connection, logger: logger)
            }
        }
        unrecordedFailures.forget(id)
        stopRenewing(id)
    }

    /// Listens for the notifications of page commits; a lost connection is opened again, and the layouts that
    /// changed meanwhile are announced as `nil` (a waiter may have missed them).
    func watchChanges(_ changed: @escaping @Sendable (String?) async -> Void) async {
        while !Task.isCancelled {
            do {
                try await client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        // Listening: whatever changed while no one listened is looked at again.
                        await changed(nil)
                        for try await notification in notifications { await changed(notification.payload) }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                logger.debug("listening for layout changes again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(500))
            }
        }
    }

    // MARK: Pages and pins

    func gzippedPage(_ id: String, layoutIndex: Int, pageIndex: Int) async throws -> Data? {
        try await operation { [client, logger] in
            // The row is the layout's own, or the one of the layout a reference names.
            let query: PostgresQuery = """
                SELECT gzip FROM feedlayout.page
                WHERE layout_id = coalesce(
                        (SELECT owner_id FROM feedlayout.page_share
                            WHERE layout_id = \(id) AND layout_index = \(layoutIndex)
                                AND page_start <= \(pageIndex) AND page_end > \(pageIndex)),
                        \(id))
                    AND layout_index = \(layoutIndex) AND page_index = \(pageIndex)
                """
            for try await bytes in try await client.query(query, logger: logger).decode(Data.self) { return bytes }
            return nil
        }
    }

    func pageWithCursor(_ cursor: String, layoutId: String?) async throws -> (id: String, layoutIndex: Int, pageIndex: Int)? {
        try await operation { [client, logger] in
            // The rows with the cursor, each as a page of the layout whose row it is and of every layout that
            // references it; without a layout, the newest of them.
            let query: PostgresQuery = """
                SELECT layout.id, found.layout_index, found.page_index FROM (
                    SELECT page.layout_id, page.layout_index, page.page_index FROM feedlayout.page
                    WHERE page.cursor = \(cursor)
                    UNION ALL
                    SELECT share.layout_id, page.layout_index, page.page_index FROM feedlayout.page
                    JOIN feedlayout.page_share share ON share.owner_id = page.layout_id
                        AND share.layout_index = page.layout_index AND share.page_start <= page.page_index
                        AND share.page_end > page.page_index
                    WHERE page.cursor = \(cursor)
                ) AS found
                JOIN feedlayout.layout ON layout.id = found.layout_id
                WHERE \(layoutId)::text IS NULL OR layout.id = \(layoutId)
                ORDER BY layout.created_at DESC LIMIT 1
                """
            for try await (id, layoutIndex, pageIndex) in try await client.query(query, logger: logger).decode(
                (String, Int, Int).self)
            {
                return (id, layoutIndex, pageIndex)
            }
            return nil
        }
    }

    func pins(_ id: String, layoutIndex: Int, from itemIndex: Int) async throws -> [PinRecord] {
        try await operation { [client, logger] in
            var pins: [PinRecord] = []
            for try await block in try await client.query(
                """
                SELECT pins FROM (
                    SELECT page_index, pins FROM feedlayout.pin_block
                    WHERE layout_id = \(id) AND layout_index = \(layoutIndex) AND item_end > \(itemIndex)
                    UNION ALL
                    SELECT block.page_index, block.pins FROM feedlayout.page_share share
                    JOIN feedlayout.pin_block block ON block.layout_id = share.owner_id
                        AND block.layout_index = share.layout_index AND block.page_index >= share.page_start
                        AND block.page_index < share.page_end
                    WHERE share.layout_id = \(id) AND share.layout_index = \(layoutIndex)
                        AND block.item_end > \(itemIndex)
                ) AS blocks
                ORDER BY page_index
                """, logger: logger
            ).decode(ByteBuffer.self) {
                PinBlock.decode(block.readableBytesView, from: itemIndex, into: &pins)
            }
            return pins
        }
    }

    // MARK: Availability

    /// One `SELECT 1`, bounded by two seconds: a readiness probe is asked often and must answer soon.
    func checkAvailability() async throws {
        try await operation(timeout: .seconds(2)) { [client, logger] in
            _ = try await client.query("SELECT 1", logger: logger).collect()
        }
    }

    /// Runs one store operation, bounded in time: PostgreSQL that does not answer (down, restarting, unreachable)
    /// becomes a ``StoreError`` that ``StoreError/isTransient``: requests answer it with a 503, running layouts wait it
    /// out.
    func operation<Result: Sendable>(
        timeout: Duration? = nil, _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let timeout = timeout ?? operationTimeout
        do {
            return try await withTimeout(timeout, body)
        } catch {
            if Self.cause(error) is StoreTimeout {
                throw StoreError(.timeout, "\(displayURL): PostgreSQL did not answer within \(timeout)")
            }
            if Self.meansUnavailable(error) {
                throw StoreError(.unavailable, "\(displayURL): cannot reach PostgreSQL: \(Self.describe(error))")
            }
            let cause = Self.cause(error)
            if cause is StoreError || cause is CancellationError { throw cause }
            if Self.meansStorageFull(cause) {
                throw StoreError(.storageFull, "\(displayURL): PostgreSQL's disk is full: \(Self.describe(cause))")
            }
            throw StoreError(.ioFailed, "\(displayURL): \(Self.describe(cause))")
        }
    }

    /// The error inside a transaction's wrapper: the one that made it fail.
    private static func cause(_ error: any Error) -> any Error {
        guard let failed = error as? PostgresTransactionError else { return error }
        return failed.beginError ?? failed.closureError ?? failed.commitError ?? failed.rollbackError ?? error
    }

    static func meansUnavailable(_ error: any Error) -> Bool {
        let error = cause(error)
        if error is StoreTimeout { return true }
        guard let error = error as? PSQLError else { return false }
        switch error.code {
        case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
            return true
        case .server:
            // Class 08: connection exceptions; 57P0x: the server is shutting down or starting; class 53 but for a
            // full disk (53100, meansStorageFull): out of memory, of connections, of a configured resource.
            let state = error.serverInfo?[.sqlState] ?? ""
            return state.hasPrefix("08") || state.hasPrefix("57P") || (state.hasPrefix("53") && state != "53100")
        default:
            return false
        }
    }

    /// Whether PostgreSQL refused to write for want of disk: SQLSTATE 53100 (`disk_full`). The other codes of class
    /// 53, insufficient resources (memory, connections, a configured limit), pass with the server's load: they are
    /// answered as ``StoreError/Code/unavailable`` by ``meansUnavailable(_:)``.
    static func meansStorageFull(_ error: any Error) -> Bool {
        guard let error = cause(error) as? PSQLError, error.code == .server else { return false }
        return error.serverInfo?[.sqlState] == "53100"
    }

    static func describe(_ error: any Error) -> String {
        let error = cause(error)
        if error is StoreTimeout { return "the server did not answer; is PostgreSQL running there?" }
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if error.code == .sslUnsupported {
                return "the server does not accept TLS; turn ssl on there, or use sslmode=disable on a trusted network"
            }
            if let underlying = error.underlying, let tls = describeTLS(underlying) { return tls }
            if error.code == .connectionError { return "cannot connect; is PostgreSQL running there?" }
            return "\(error.code)"
        }
        if let tls = describeTLS(error) { return tls }
        return "\(error)"
    }
}

extension PostgresLayoutStore {
    /// A failed TLS handshake, said for an operator: which check failed and what to change.
    static func describeTLS(_ error: any Error) -> String? {
        if let error = error as? NIOSSLError {
            if case .handshakeFailed(let reason) = error {
                return "the TLS handshake failed (\(reason)); with sslmode=verify-full, sslrootcert must name the "
                    + "certificate authority that signed the server's certificate"
            }
            return "TLS failed (\(error))"
        }
        if let error = error as? NIOSSLExtraError {
            return "TLS failed (\(error)); with sslmode=verify-full the server's certificate must name the URL's host"
        }
        return nil
    }

    /// Another instance took the layout over (this one was paused past its lease): this one stops computing it.
    static func leaseLost(_ id: String) -> StoreError {
        StoreError(.leaseLost, "the lease of layout \(id) passed to another instance")
    }
}
