import Foundation
import Logging
import PostgresNIO
import ProbeCache

/// The probe cache of the instances that share a PostgreSQL store, in its table `feedlayout.probe` (one of the
/// store's migrations), on the store's connections: a photo one instance probed is not probed again by another. As
/// with a local cache, a URL's entry is revalidated with a conditional request, and a file's is trusted while the file
/// at that path has the stored size and modification time, on whichever instance reads it.
///
/// Every call is bounded in time: PostgreSQL that does not answer makes probes miss (the prober logs it and reads
/// the photo), it never holds a layout up. A miss costs one photo request, so the bound is shorter than the store's.
public final class PostgresProbeCache: ProbeCacheStorage {
    private let client: PostgresClient
    /// The store's URL without its password, for messages.
    private let displayURL: String
    private let logger: Logger
    /// Far longer than a lookup or a store of a healthy server takes.
    static let operationTimeout: Duration = .seconds(2)

    init(client: PostgresClient, displayURL: String, logger: Logger) {
        self.client = client
        self.displayURL = displayURL
        self.logger = logger
    }

    public func entry(for source: String) async throws(ProbeCacheError) -> CachedProbe? {
        try await entries(for: [source])[source]
    }

    public func entries(for sources: [String]) async throws(ProbeCacheError) -> [String: CachedProbe] {
        guard !sources.isEmpty else { return [:] }
        return try await operation { [client, logger] in
            var found: [String: CachedProbe] = [:]
            let rows = try await client.query(
                """
                SELECT source, file_size, file_modified, entity_tag, last_modified, format, width, height, orientation,
                    bytes_read, flags, bit_depth, warnings, placeholder_color, placeholder_hash, fresh_until
                FROM feedlayout.probe WHERE source = ANY(\(sources))
                """, logger: logger)
            for try await row in rows.decode(
                (
                    String, Int?, Int64?, String?, String?, String, Int, Int, Int, Int, Int, Int?, String, Int64?,
                    Data?, Double?
                ).self)
            {
                let columns = ProbeColumns(
                    fileSize: row.1, fileModified: row.2, entityTag: row.3, lastModified: row.4, format: row.5,
                    width: row.6, height: row.7, orientation: row.8, bytesRead: row.9, flags: row.10, bitDepth: row.11,
                    warnings: row.12, placeholderColor: row.13, placeholderHash: row.14.map { [UInt8]($0) },
                    freshUntil: row.15)
                // A format this version does not know (a newer instance stored it) is a miss, as in ProbeCache.
                if let entry = columns.entry { found[row.0] = entry }
            }
            return found
        }
    }

    public func store(_ entries: [(source: String, entry: CachedProbe)]) async throws(ProbeCacheError) {
        // Of several entries for one source, the last is kept, as separate stores would keep it (and one statement
        // may not update a row twice). Rows go in source order, so two instances storing overlapping batches lock
        // them in the same order and never deadlock.
        var latest: [String: CachedProbe] = [:]
        for (source, entry) in entries { latest[source] = entry }
        let rows = latest.sorted { $0.key < $1.key }.map { (source: $0.key, columns: ProbeColumns($0.value)) }
        guard !rows.isEmpty else { return }
        try await operation { [client, logger] in
            // One statement for the batch: a round trip per photo would make every layout wait on the network.
            for chunk in stride(from: 0, to: rows.count, by: Self.rowsPerStatement) {
                let part = rows[chunk..<min(rows.count, chunk + Self.rowsPerStatement)]
                try await client.query(try Self.upsert(part), logger: logger)
            }
        }
    }

    /// Rows in one statement: 16 parameters each, far below PostgreSQL's 65,535.
    static let rowsPerStatement = 1_000

    /// Stores or replaces the entries of several sources, as ProbeCache's `INSERT OR REPLACE` does.
    private static func upsert(_ rows: ArraySlice<(source: String, columns: ProbeColumns)>) throws -> PostgresQuery {
        var bindings = PostgresBindings(capacity: rows.count * 16)
        var values: [String] = []
        for (source, row) in rows {
            let first = bindings.count + 1
            bindings.append(source)
            bindings.append(row.fileSize)
            bindings.append(row.fileModified)
            bindings.append(row.entityTag)
            bindings.append(row.lastModified)
            bindings.append(row.format)
            bindings.append(row.width)
            bindings.append(row.height)
            bindings.append(row.orientation)
            bindings.append(row.bytesRead)
            bindings.append(row.flags)
            bindings.append(row.bitDepth)
            bindings.append(row.warnings)
            bindings.append(row.placeholderColor)
            try bindings.append(row.placeholderHash.map { Data($0) })
            bindings.append(row.freshUntil)
            values.append("(" + (first..<first + 16).map { "$\($0)" }.joined(separator: ", ") + ")")
        }
        return PostgresQuery(
            unsafeSQL: """
                INSERT INTO feedlayout.probe (source, file_size, file_modified, entity_tag, last_modified, format, width,
                    height, orientation, bytes_read, flags, bit_depth, warnings, placeholder_color, placeholder_hash,
                    fresh_until)
                VALUES \(values.joined(separator: ", "))
                ON CONFLICT (source) DO UPDATE SET
                    file_size = EXCLUDED.file_size, file_modified = EXCLUDED.file_modified,
                    entity_tag = EXCLUDED.entity_tag, last_modified = EXCLUDED.last_modified, format = EXCLUDED.format,
                    width = EXCLUDED.width, height = EXCLUDED.height, orientation = EXCLUDED.orientation,
                    bytes_read = EXCLUDED.bytes_read, flags = EXCLUDED.flags, bit_depth = EXCLUDED.bit_depth,
                    warnings = EXCLUDED.warnings, placeholder_color = EXCLUDED.placeholder_color,
                    placeholder_hash = EXCLUDED.placeholder_hash, fresh_until = EXCLUDED.fresh_until,
                    stored_at = clock_timestamp()
                """, binds: bindings)
    }

    /// How many entries the table holds.
    func count() async throws(ProbeCacheError) -> Int {
        try await operation { [client, logger] in
            for try await count in try await client.query("SELECT count(*) FROM feedlayout.probe", logger: logger)
                .decode(Int.self)
            {
                return count
            }
            return 0
        }
    }

    /// Runs one call within ``operationTimeout``; any failure becomes the ``ProbeCacheError`` the prober logs.
    private func operation<Result: Sendable>(
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws(ProbeCacheError) -> Result {
        do {
            return try await withTimeout(Self.operationTimeout, body)
        } catch {
            throw ProbeCacheError(code: .unavailable, path: displayURL, reason: PostgresLayoutStore.describe(error))
        }
    }
}
