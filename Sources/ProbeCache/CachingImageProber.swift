import Foundation
import ImageProbe
import LocalFileAccess
import Logging
import RemoteFetch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What probing one source produced.
public struct ProbeResult: Sendable {
    /// The header facts, or why they could not be read.
    public var info: Result<ImageInfo, ImageProbeError>
    /// The placeholder, when one was asked for (and the header could be read).
    public var placeholder: Result<ImagePlaceholder, ImageProbeError>?
    /// Whether the header came from the cache (for a URL: after the server confirmed it with a 304).
    public var fromCache: Bool
}

/// An ``ImageProber`` in front of an optional cache (``ProbeCacheStorage``).
///
/// Files are validated by size and modification time (nanoseconds), without reading a byte when
/// the entry is current. A URL's entry is used without any request while it is fresh by its response's own HTTP
/// freshness (`Cache-Control: max-age`, `Expires`, `Age`: ``HTTPFreshness``, on ``now``'s clock); once stale, one
/// with a stored ETag or Last-Modified is revalidated with a conditional range request: a 304 costs one round trip
/// and no body (and renews the freshness). A response with `no-store` is not kept. Standard input is never
/// cached. A cache that fails while running is logged and bypassed: probing must not fail because
/// a cache did. ``ProbeCache``'s reads and writes are synchronous SQLite calls of well under a millisecond
/// (WAL mode: readers never wait for the writer), so they run inline rather than on another thread; a cache
/// across the network is awaited, within the time it allows itself.
public struct CachingImageProber: Sendable {
    /// The prober behind the cache.
    public var prober: ImageProber
    /// The cache, or `nil` to probe every time.
    public var cache: (any ProbeCacheStorage)?
    /// Limits for placeholder decoding.
    public var decodeOptions: PixelDecodeOptions
    /// The clock URL entries' freshness is read on (tests pass one they move by hand).
    public var now: @Sendable () -> Date = { Date() }
    /// Which local files go through the cache (URLs always do).
    public var localFiles: LocalFileCaching
    private let logger: Logger

    /// Which probes of local files the cache keeps.
    public enum LocalFileCaching: Sendable {
        /// Only those that decode pixels (placeholders): reading a header costs one `open` and one `read`, less
        /// than the `stat`, the SQLite lookup and the insert an entry costs, so a header-only probe of a local
        /// file reads the file (10,000 distinct files: 3.5× a C loop that opens, reads 4 KiB and closes each
        /// with the cache, 1.6× without it).
        case whenDecoding
        /// Every probe, header-only ones too.
        case always
    }

    /// Creates a caching prober.
    /// - Parameters:
    ///   - prober: Probes files and URLs.
    ///   - cache: The cache, or `nil`.
    ///   - decodeOptions: Pixel budget and scan cap for placeholders.
    ///   - localFiles: Which probes of local files the cache keeps (by default those that decode pixels).
    ///   - logger: Where cache failures are reported.
    public init(
        prober: ImageProber, cache: (any ProbeCacheStorage)?, decodeOptions: PixelDecodeOptions = PixelDecodeOptions(),
        localFiles: LocalFileCaching = .whenDecoding, logger: Logger
    ) {
        self.prober = prober
        self.cache = cache
        self.decodeOptions = decodeOptions
        self.localFiles = localFiles
        self.logger = logger
    }

    /// Whether a probe of a local file goes through the cache.
    private func cachesLocalFile(withPlaceholder: Bool) -> Bool {
        switch localFiles {
        case .always: return true
        case .whenDecoding: return withPlaceholder
        }
    }

    /// Probes one source, through the cache.
    /// - Parameters:
    ///   - source: A path, `-`, or an http(s) URL.
    ///   - withPlaceholder: Also build (or fetch from the cache) the placeholder.
    /// - Returns: The header, the placeholder if asked for, and whether the cache answered.
    public func probe(_ source: String, withPlaceholder: Bool) async -> ProbeResult {
        await probe(source, withPlaceholder: withPlaceholder, prefetched: nil)
    }

    /// The cache's entries for the URLs among `sources`, read at once (files are left out: their probes are
    /// answered as ``probe(_:withPlaceholder:)`` answers them). A window of photos then costs one cache read, not
    /// one per photo, for ``probe(_:withPlaceholder:prefetched:)``.
    /// - Returns: Each URL's entry, `nil` for a URL the cache has none for; empty without a cache.
    public func remoteEntries(for sources: [String]) async -> [String: CachedProbe?] {
        let urls = sources.filter { ImageProber.isRemote($0) }
        guard let cache, !urls.isEmpty else { return [:] }
        let found = await lookup(urls, in: cache)
        var entries: [String: CachedProbe?] = [:]
        for url in urls { entries[url] = found[url] }
        return entries
    }

    /// Probes one source, through the cache.
    /// - Parameter prefetched: For a URL, its cache entry as ``remoteEntries(for:)`` read it (`.some(nil)`: none);
    ///   `nil` reads it now.
    public func probe(_ source: String, withPlaceholder: Bool, prefetched: CachedProbe??) async -> ProbeResult {
        guard let cache, source != "-" else { return await probeUncached(source, withPlaceholder: withPlaceholder) }
        if ImageProber.isRemote(source) {
            let cached: CachedProbe?
            if let prefetched { cached = prefetched } else { cached = await lookup(source, in: cache) }
            return await probeRemote(source, cached: cached, cache: cache, withPlaceholder: withPlaceholder)
        }
        guard cachesLocalFile(withPlaceholder: withPlaceholder) else {
            return await probeUncached(source, withPlaceholder: withPlaceholder)
        }
        let cached = await lookup(source, in: cache)
        let (result, learnt) = await probeFile(source, cached: cached, withPlaceholder: withPlaceholder)
        if let learnt { await save([(source, learnt)], cache) }
        return result
    }

    /// Probes several sources, results in the same order.
    ///
    /// Same results as ``probe(_:withPlaceholder:)`` one by one, but the cache entries of the files are read
    /// in one transaction and what was learnt about them is written in one more: per image, a transaction
    /// costs more than probing the file. URLs and standard input are probed one by one as usual. Files whose probe
    /// the cache does not keep (``LocalFileCaching``) are read without it.
    /// - Parameters:
    ///   - sources: Paths, `-`, or http(s) URLs.
    ///   - withPlaceholder: Also build (or fetch from the cache) the placeholders.
    /// - Returns: One result per source.
    public func probe(_ sources: [String], withPlaceholder: Bool) async -> [ProbeResult] {
        var results: [ProbeResult] = []
        results.reserveCapacity(sources.count)
        guard let cache else {
            for source in sources { results.append(await probeUncached(source, withPlaceholder: withPlaceholder)) }
            return results
        }
        guard cachesLocalFile(withPlaceholder: withPlaceholder) else {
            // URLs through the cache, files straight from their headers: no transaction to batch.
            for source in sources { results.append(await probe(source, withPlaceholder: withPlaceholder)) }
            return results
        }
        let files = sources.filter { $0 != "-" && !ImageProber.isRemote($0) }
        let cached = files.isEmpty ? [:] : await lookup(files, in: cache)
        var learnt: [(source: String, entry: CachedProbe)] = []
        for source in sources {
            guard source != "-", !ImageProber.isRemote(source) else {
                results.append(await probe(source, withPlaceholder: withPlaceholder))
                continue
            }
            let (result, entry) = await probeFile(source, cached: cached[source], withPlaceholder: withPlaceholder)
            results.append(result)
            if let entry { learnt.append((source, entry)) }
        }
        await save(learnt, cache)
        return results
    }

    /// Probes a file unless its cache entry is current; also returns the entry to store, if any.
    private func probeFile(_ source: String, cached: CachedProbe?, withPlaceholder: Bool) async -> (
        ProbeResult, CachedProbe?
    ) {
        guard let validator = ProbeValidator.file(atPath: source) else {
            return (await probeUncached(source, withPlaceholder: withPlaceholder), nil)
        }
        if let cached, cached.validator == validator, !withPlaceholder || cached.placeholder != nil {
            // The cache answers by path without opening the file: the gate's check comes first all the same (a miss
            // opens the file through the gate, which checks it then).
            do {
                _ = try prober.local.gate.admit(source)
            } catch {
                return (
                    ProbeResult(info: .failure(ImageProbeError(refusal: error)), placeholder: nil, fromCache: false), nil
                )
            }
            // A placeholder an earlier run cached is only handed out when asked for: output must not depend on
            // what the cache happens to hold.
            let placeholder: Result<ImagePlaceholder, ImageProbeError>? =
                withPlaceholder ? cached.placeholder.map { .success($0) } : nil
            return (ProbeResult(info: .success(cached.info), placeholder: placeholder, fromCache: true), nil)
        }
        let result = await probeUncached(source, withPlaceholder: withPlaceholder)
        guard case .success(let info) = result.info else { return (result, nil) }
        return (result, CachedProbe(validator: validator, info: info, placeholder: try? result.placeholder?.get()))
    }

    private func probeRemote(
        _ url: String, cached: CachedProbe?, cache: any ProbeCacheStorage, withPlaceholder: Bool
    ) async -> ProbeResult {
        guard let remote = prober.remote else { return await probeUncached(url, withPlaceholder: withPlaceholder) }
        // Fresh: the server said the photo may be used this long without asking again.
        if let cached, case .remote = cached.validator, let freshUntil = cached.freshUntil, now() < freshUntil,
            !withPlaceholder || cached.placeholder != nil
        {
            let placeholder = withPlaceholder ? cached.placeholder.map { Result<ImagePlaceholder, ImageProbeError>.success($0) } : nil
            return ProbeResult(info: .success(cached.info), placeholder: placeholder, fromCache: true)
        }
        var revalidating: RemoteValidator?
        if let cached, case .remote(let validator) = cached.validator, !validator.isEmpty { revalidating = validator }
        let outcome: RemoteImageProber.Outcome
        do {
            outcome = try await remote.probe(url: url, revalidating: revalidating)
        } catch {
            return ProbeResult(info: .failure(error), placeholder: nil, fromCache: false)
        }
        switch outcome {
        case .notModified(let resource):
            guard let cached else { return await probeUncached(url, withPlaceholder: withPlaceholder) }
            var placeholder = cached.placeholder.map { Result<ImagePlaceholder, ImageProbeError>.success($0) }
            // The 304's freshness replaces the stored one (RFC 9111 §4.3.4); an entry that stays without any is
            // not written again.
            var entry = cached
            entry.freshUntil = freshUntil(resource)
            var changed = entry.freshUntil != nil || cached.freshUntil != nil
            if resource.freshness?.noStore == true {
                changed = false
            }
            if withPlaceholder && placeholder == nil {
                placeholder = await makePlaceholder(url, header: cached.info)
                if case .success(let value) = placeholder {
                    entry.placeholder = value
                    changed = resource.freshness?.noStore != true
                }
            }
            if changed { await save([(url, entry)], cache) }
            return ProbeResult(
                info: .success(cached.info), placeholder: withPlaceholder ? placeholder : nil, fromCache: true)
        case .probed(let info, let resource):
            let placeholder = withPlaceholder ? await makePlaceholder(url, header: info) : nil
            let freshUntil = freshUntil(resource)
            if resource.freshness?.noStore != true, !resource.validator.isEmpty || freshUntil != nil {
                let entry = CachedProbe(
                    validator: .remote(resource.validator), info: info, placeholder: try? placeholder?.get(),
                    freshUntil: freshUntil)
                await save([(url, entry)], cache)
            }
            return ProbeResult(info: .success(info), placeholder: placeholder, fromCache: false)
        }
    }

    /// Until when a response may be used without asking again; `nil` when it must be revalidated at every use.
    private func freshUntil(_ resource: RemoteResource) -> Date? {
        guard let freshness = resource.freshness, !freshness.noStore, freshness.lifetime > 0 else { return nil }
        return now().addingTimeInterval(freshness.lifetime)
    }

    private func probeUncached(_ source: String, withPlaceholder: Bool) async -> ProbeResult {
        let info: Result<ImageInfo, ImageProbeError>
        do {
            info = .success(try await prober.probe(source))
        } catch {
            return ProbeResult(info: .failure(error), placeholder: nil, fromCache: false)
        }
        // Standard input cannot be read twice: its placeholder would need the bytes kept, so none is made.
        let placeholder =
            withPlaceholder && source != "-" ? await makePlaceholder(source, header: try? info.get()) : nil
        return ProbeResult(info: info, placeholder: placeholder, fromCache: false)
    }

    private func makePlaceholder(_ source: String, header: ImageInfo?) async -> Result<
        ImagePlaceholder, ImageProbeError
    > {
        do {
            return .success(try await prober.placeholder(source, options: decodeOptions, header: header))
        } catch {
            return .failure(error)
        }
    }

    private func lookup(_ source: String, in cache: any ProbeCacheStorage) async -> CachedProbe? {
        do {
            return try await cache.entry(for: source)
        } catch {
            logger.warning("probe cache read failed; probing without it", metadata: ["error": "\(error.message)"])
            return nil
        }
    }

    private func lookup(_ sources: [String], in cache: any ProbeCacheStorage) async -> [String: CachedProbe] {
        do {
            return try await cache.entries(for: sources)
        } catch {
            logger.warning("probe cache read failed; probing without it", metadata: ["error": "\(error.message)"])
            return [:]
        }
    }

    private func save(_ entries: [(source: String, entry: CachedProbe)], _ cache: any ProbeCacheStorage) async {
        guard !entries.isEmpty else { return }
        do {
            try await cache.store(entries)
        } catch {
            logger.warning("probe cache write failed", metadata: ["error": "\(error.message)"])
        }
    }

}

extension ProbeValidator {
    /// The validator of a regular file: its size and modification time (ns); `nil` when it cannot be stat'ed.
    /// - Parameter path: A file path.
    /// - Returns: The validator, or `nil` for a missing file, a folder, a pipe or a device.
    public static func file(atPath path: String) -> ProbeValidator? {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        #if canImport(Darwin)
            let time = status.st_mtimespec
        #else
            let time = status.st_mtim
        #endif
        return .file(
            size: Int(status.st_size), modifiedNanoseconds: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }
}
