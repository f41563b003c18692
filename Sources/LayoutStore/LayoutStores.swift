import Logging
import ProbeCache

/// Opening the store a service is given: where layouts and probes are kept, by one name.
public enum LayoutStores {
    /// Opens (or creates) the store `location` names, with the probe cache kept in it.
    ///
    /// A `postgres://` (or `postgresql://`) URL is a database several instances share: layouts are computed by one
    /// instance at a time through leases, and a photo one instance probed is not probed again by another. Anything
    /// else is the path of an SQLite file of one process, which holds the probe cache too (one file holds all the
    /// service keeps) and its posted feeds in a folder beside it (`PATH.feeds/`).
    /// - Parameters:
    ///   - location: The `--store` value: a PostgreSQL URL or a file path.
    ///   - leaseDuration: With a shared store, how long a layout stays with an instance that stopped renewing its
    ///     lease before another takes it over.
    ///   - password: With a PostgreSQL store, its password from the environment or a file (``StorePassword``); it
    ///     wins over a password in the URL. An SQLite store has none.
    /// - Returns: The layout store and the probe cache in it.
    /// - Throws: ``StoreError`` with ``StoreError/Code/cannotOpen``, naming the store and saying what to do (another
    ///   process holds it, it is not a store, the server does not answer).
    public static func open(
        _ location: String, leaseDuration: Duration, password: StorePassword? = nil, logger: Logger
    ) async throws(StoreError) -> (layouts: any LayoutStore, probes: any ProbeCacheStorage) {
        if PostgresLayoutStore.isURL(location) {
            let shared = try await PostgresLayoutStore.open(
                url: location, password: password, leaseDuration: leaseDuration, logger: logger)
            return (shared, shared.probeCache())
        }
        let file = try SQLiteLayoutStore(path: location)
        do {
            return (file, try ProbeCache(sharing: file.database, path: location))
        } catch {
            throw StoreError(.cannotOpen, "\(location): the probe cache in the store cannot be opened: \(error.reason)")
        }
    }
}
