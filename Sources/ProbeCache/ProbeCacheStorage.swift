/// Where ``CachingImageProber`` keeps what it learnt: ``ProbeCache`` (a SQLite file, one machine's), or a database
/// several machines share, so that a photo one of them probed is not probed again by another.
///
/// A storage that fails throws ``ProbeCacheError``, and the prober goes on without it: a cache failure never fails a
/// probe. The prober awaits every call, so a storage across a network must bound its own waits (a database that does
/// not answer must make probes miss, not hang).
public protocol ProbeCacheStorage: Sendable {
    /// The cached entry for a source, whatever its validator.
    /// - Parameter source: A path or URL exactly as probed.
    /// - Returns: The entry, or `nil`.
    /// - Throws: ``ProbeCacheError``.
    func entry(for source: String) async throws(ProbeCacheError) -> CachedProbe?

    /// The cached entries of several sources, read at once.
    /// - Parameter sources: Paths or URLs exactly as probed.
    /// - Returns: The entries found, by source; sources without one are left out.
    /// - Throws: ``ProbeCacheError``.
    func entries(for sources: [String]) async throws(ProbeCacheError) -> [String: CachedProbe]

    /// Stores (or replaces) several entries at once.
    /// - Parameter entries: Sources (paths or URLs exactly as probed) and their entries; a later entry for the same
    ///   source replaces an earlier one.
    /// - Throws: ``ProbeCacheError``; then none of the entries is stored.
    func store(_ entries: [(source: String, entry: CachedProbe)]) async throws(ProbeCacheError)
}
