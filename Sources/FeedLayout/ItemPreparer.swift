import ByteTools
import FeedIngest
import ImageProbe
import LayoutPages
import ProbeCache
import Synchronization
import TextMeasure
import WaterfallLayout

/// The images one run has probed, by source: a feed that shows the same photo many times (avatars, a photo in
/// several items, a sample reused) reads it once. Bounded; shared by the run's concurrent tasks. (Texts are
/// remembered by their measurer: ``MeasurementCache``.)
final class RunProbeMemo: Sendable {
    private let results = Mutex<[ExactText: ProbeResult]>([:])
    private let limit: Int
    /// Where a process that shares its resources counts probes and cache hits (a server's metrics).
    private let statistics: ProbeStatistics?

    init(limit: Int = 16_384, statistics: ProbeStatistics? = nil) {
        self.limit = limit
        self.statistics = statistics
    }

    /// Reads the cache's entries for the URLs among `sources` this run has not probed yet, at once: the probes of a
    /// window's photos then cost one cache read, not one each. The window carries them to its probes
    /// (``probe(_:withPlaceholder:prober:cached:)``), so the next window's read can overlap this one's probes.
    func cachedEntries(for sources: [String], prober: CachingImageProber) async -> [String: CachedProbe?] {
        let unknown = results.withLock { results in sources.filter { results[ExactText($0)] == nil } }
        return unknown.isEmpty ? [:] : await prober.remoteEntries(for: Array(Set(unknown)))
    }

    /// The result for a source, probed by `prober` unless this run already has it.
    /// - Parameter cached: The cache entries read for the source's window (``cachedEntries(for:prober:)``); a
    ///   source not among them is looked up by the probe.
    func probe(
        _ source: String, withPlaceholder: Bool, prober: CachingImageProber, cached: [String: CachedProbe?]
    ) async -> ProbeResult {
        let key = ExactText(source)
        if let known = results.withLock({ $0[key] }) { return known }
        let result = await prober.probe(source, withPlaceholder: withPlaceholder, prefetched: cached[source])
        statistics?.record(fromCache: result.fromCache)
        results.withLock { results in
            if results.count < limit { results[key] = result }
        }
        return result
    }
}

/// Probes photos and measures annotations: the per-item work, safe to run for many items at once.
struct ItemPreparer: Sendable {
    let options: LayoutOptions
    /// The geometry of every layout of the run: one, or one per breakpoint. They share scale and text styles.
    var geometries: [LayoutGeometry] = []
    let titleMeasurer: TextMeasurer
    let textMeasurer: TextMeasurer
    /// The font files both measurers use, as pages record them.
    var fonts: LayoutFonts { LayoutFonts(title: titleMeasurer.fontFaces, caption: textMeasurer.fontFaces) }
    let cache: (any ProbeCacheStorage)?

    /// - Parameter resources: A process's shared resources: their probe cache and measurers are used instead of
    ///   opening the cache at `options.probeCachePath` and loading the fonts for this pipeline alone.
    init(options: LayoutOptions, resources: LayoutResources? = nil) throws(LayoutError) {
        self.options = options
        if let resources {
            cache = resources.probeCache
            titleMeasurer = try .annotation(options.annotation.title, role: "title", from: resources.measurers)
            textMeasurer = try .annotation(options.annotation.text, role: "caption", from: resources.measurers)
            return
        }
        do {
            cache = try options.probeCachePath.map { path throws(ProbeCacheError) in try ProbeCache(path: path) }
        } catch {
            throw LayoutError(.invalidOptions, error.message)
        }
        titleMeasurer = try .annotation(options.annotation.title, role: "title")
        textMeasurer = try .annotation(options.annotation.text, role: "caption")
    }

    /// The horizontal axis' annotation band in CSS pixels: room for the most title and caption lines allowed.
    /// `nil` when a line count has no limit (then there is no band to reserve; the pipeline refuses the axis).
    var annotationBand: Double? {
        let annotation = options.annotation
        guard let titleLines = annotation.titleLines, let textLines = annotation.textLines else { return nil }
        let scale = options.waterfall.scale
        func rounded(_ length: Double) -> Double { (length * scale).rounded(.up) / scale }
        let title = titleLines > 0 ? rounded(Double(titleLines) * titleMeasurer.lineHeightInPixels) : 0
        let text = textLines > 0 ? rounded(Double(textLines) * textMeasurer.lineHeightInPixels) : 0
        let gap = title > 0 && text > 0 ? rounded(annotation.titleTextGap) : 0
        return title + gap + text
    }

    /// Probes the item's photo once (a local file or an http(s) URL, through the cache) and measures its title
    /// and caption at the content width each layout gives it: once per distinct width, so breakpoints that share
    /// a content width share the work.
    ///
    /// - Parameters:
    ///   - prober: The run's prober: it owns the HTTP client, which lives as long as the run.
    ///   - cached: The probe cache's entries read for the item's window (``RunProbeMemo/cachedEntries(for:prober:)``).
    func prepare(
        _ item: FeedItem, prober: CachingImageProber, memo: RunProbeMemo, cached: [String: CachedProbe?]
    ) async -> PreparedItem {
        var warnings = item.warnings
        let clock = ContinuousClock()
        let started = clock.now
        let photo = await resolvePhoto(
            item.image, fallbacks: item.imageFallbacks, prober: prober, memo: memo, cached: cached,
            warnings: &warnings)
        let probed = clock.now
        let span = item.columnSpan
        var byWidth: [(width: Int, annotation: PreparedAnnotation)] = []
        let annotations = geometries.map { geometry in
            let width = geometry.annotationWidth(photo: photo.size, span: span)
            if let done = byWidth.first(where: { $0.width == width }) { return done.annotation }
            let annotation = measureAnnotation(item, contentWidth: width, grid: geometry.grid, memo: memo)
            byWidth.append((width, annotation))
            return annotation
        }
        return PreparedItem(
            item: item, photo: photo, annotations: annotations, warnings: warnings, probeTime: probed - started,
            measureTime: clock.now - probed)
    }

    /// Measures the title and caption at a content width in device pixels.
    private func measureAnnotation(
        _ item: FeedItem, contentWidth: Int, grid: WaterfallGrid, memo: RunProbeMemo
    ) -> PreparedAnnotation {
        let annotation = options.annotation
        let width = Double(contentWidth) / grid.scale
        return PreparedAnnotation(
            title: measure(
                item.title, isTitle: true, width: width, maxLines: annotation.titleLines, grid: grid, memo: memo),
            text: measure(
                item.text, isTitle: false, width: width, maxLines: annotation.textLines, grid: grid, memo: memo))
    }

    private func measure(
        _ text: String?, isTitle: Bool, width: Double, maxLines: Int?, grid: WaterfallGrid, memo: RunProbeMemo
    ) -> MeasuredText? {
        guard let text, !text.isEmpty, maxLines != 0 else { return nil }
        let measurer = isTitle ? titleMeasurer : textMeasurer
        let measurement = measurer.measure(text, width: width, maxLines: maxLines)
        guard measurement.lines > 0 else { return nil }
        return MeasuredText(
            text: text, measurement: measurement, deviceHeight: grid.deviceLengthRoundingUp(measurement.height))
    }

    /// Finds the photo's display size: the image's header (read from the file, or from the first bytes at its
    /// URL), else the size the feed declares, else the fallback. Every step down is a warning on the item, so
    /// nothing is silently guessed.
    ///
    /// When the chosen image turns out missing, unreadable or not an image, the item's other usable images are
    /// tried in the feed reader's choice order, and the first one whose header reads becomes the photo: a broken
    /// `media:content` does not win over a good thumbnail or enclosure. A network failure (timeout, connection) is
    /// no verdict on the image, so it does not send the layout to the next one.
    private func resolvePhoto(
        _ image: FeedImage?, fallbacks: [FeedImage], prober: CachingImageProber, memo: RunProbeMemo,
        cached: [String: CachedProbe?], warnings: inout [FeedWarning]
    ) async -> ResolvedPhoto {
        let fallback = Size(width: options.fallbackAspectRatio, height: 1)
        guard let image else {
            warnings.append(
                FeedWarning(code: "noImage", message: "the item has no image; using the fallback aspect ratio"))
            return ResolvedPhoto(url: nil, size: fallback, sizeSource: .fallback, info: nil)
        }
        switch await probe(image, prober: prober, memo: memo, cached: cached, warnings: &warnings) {
        case .some(.success(let photo)):
            return photo
        case .some(.failure(let error)) where Self.condemnsTheImage(error):
            for candidate in fallbacks {
                var candidateWarnings: [FeedWarning] = []
                guard
                    case .some(.success(let photo)) = await probe(
                        candidate, prober: prober, memo: memo, cached: cached, warnings: &candidateWarnings)
                else { continue }
                warnings += candidateWarnings
                warnings.append(
                    FeedWarning(
                        code: "imageReplaced",
                        message: "\(image.url) could not be used; the item's \(candidate.origin) \(candidate.url) "
                            + "is its photo instead"))
                return photo
            }
        default:
            break
        }
        if let width = image.width, let height = image.height, width > 0, height > 0 {
            var photo = ResolvedPhoto(
                url: image.url, size: Size(width: Double(width), height: Double(height)), sizeSource: .declared,
                info: nil)
            photo.alt = image.alt
            return photo
        }
        warnings.append(
            FeedWarning(
                code: "imageSizeUnknown", message: "\(image.url): size unknown; using the fallback aspect ratio"))
        var photo = ResolvedPhoto(url: image.url, size: fallback, sizeSource: .fallback, info: nil)
        photo.alt = image.alt
        return photo
    }

    /// Reads an image's header: the photo it makes, or why not (also as a warning); nil when it cannot be read at
    /// all (a local reference outside the allowed folders, which already carries the reader's warning).
    private func probe(
        _ image: FeedImage, prober: CachingImageProber, memo: RunProbeMemo, cached: [String: CachedProbe?],
        warnings: inout [FeedWarning]
    ) async -> Result<ResolvedPhoto, ImageProbeError>? {
        // A local reference the feed reader accepted has a path; a remote one is probed at its URL.
        guard let source = image.localPath ?? (ImageProber.isRemote(image.url) ? image.url : nil) else { return nil }
        let result = await memo.probe(source, withPlaceholder: options.placeholders, prober: prober, cached: cached)
        switch result.info {
        case .success(let info):
            for warning in info.warnings {
                warnings.append(FeedWarning(code: "imageWarning", message: "\(image.url): \(warning)"))
            }
            var placeholder: ImagePlaceholder?
            switch result.placeholder {
            case .success(let built): placeholder = built
            case .failure(let error):
                // The size is still right: a missing placeholder is not an image failure.
                warnings.append(
                    FeedWarning(code: "placeholderUnavailable", message: "\(image.url): \(error.reason)"))
            case nil: break
            }
            var photo = ResolvedPhoto(
                url: image.url, size: Size(width: Double(info.displayWidth), height: Double(info.displayHeight)),
                sizeSource: .header, info: info, placeholder: placeholder, localPath: image.localPath)
            // The alternative text of the image used (a fallback image has its own).
            photo.alt = image.alt
            return .success(photo)
        case .failure(let error):
            // The reason alone: the error's own message names the local path, which differs per machine.
            warnings.append(
                FeedWarning(
                    code: "image\(capitalized(error.code.description))", message: "\(image.url): \(error.reason)"))
            return .failure(error)
        }
    }

    /// Whether a probe failure says the image itself is unusable (missing, unreadable, not an image, refused,
    /// too large), rather than that the network failed on the way to it.
    private static func condemnsTheImage(_ error: ImageProbeError) -> Bool {
        error.code != .timeout && error.code != .network
    }
}

private func capitalized(_ word: String) -> String {
    guard let first = word.first else { return word }
    return first.uppercased() + word.dropFirst()
}
