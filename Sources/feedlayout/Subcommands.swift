import ArgumentParser
import FeedLayout
import Foundation
import ImageProbe
import Logging
import PreviewRender
import ProbeCache
import RemoteFetch
import TextMeasure
import WaterfallLayout

extension FeedLayoutCommand {
    struct Layout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lay out feeds and write their pages.",
            discussion: """
                Several feeds, or folders of feeds, are laid out one after the other: with --out each gets \
                DIR/NAME/ (NAME from its file name); on standard output every page carries "feed". Given - \
                alone, standard input is either a feed (it starts with < or {) or a list of feed paths or URLs, \
                one per line, laid out as the lines arrive (Hadoop Streaming, Spark's pipe). A feed that fails \
                is reported (on standard output as {"feed": …, "error": …}) and the others go on; exit code 1.

                Examples:
                  Write out/page-0001.json, out/page-0002.json, …:
                    feedlayout layout sample-feed/feed.xml --out out/
                  The first page of a phone layout, as NDJSON, then the next:
                    feedlayout layout feed.xml --width 375 --columns 2 \\
                      --page-size 20 --max-pages 1
                    feedlayout layout feed.xml --width 375 --columns 2 \\
                      --page-size 20 --max-pages 1 --resume fl1.…
                  Three layouts from one pass (out/375/, out/768/, out/1280/):
                    feedlayout layout feed.xml --breakpoints 375:2,768:3,1280:5 \\
                      --out out/
                  Every feed in a folder; a list of feeds on standard input:
                    feedlayout layout feeds/ --out out/
                    find feeds -name '*.xml' | feedlayout layout - > pages.ndjson
                """)

        @Argument(help: "Feeds: file paths, http(s) URLs, folders of feeds, or - for standard input (a feed or a list).")
        var feeds: [String]

        @Option(help: "Write DIR/page-0001.json … (several feeds: DIR/NAME/page-0001.json …; default: NDJSON pages on standard output).")
        var out: String?

        @Flag(help: "Indent page files for reading.")
        var pretty = false

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @OptionGroup(title: "Grid") var grid: GridOptions
        @OptionGroup(title: "Flow, horizontal axis and sections") var arrangement: ArrangementOptions
        @OptionGroup(title: "Text") var text: TextOptions
        @OptionGroup(title: "Pages") var pages: PageOptions
        @OptionGroup(title: "Input") var input: InputOptions

        func validate() throws {
            guard !feeds.isEmpty else { throw ValidationError("name at least one feed (or - for standard input)") }
            if feeds.contains("-") && feeds.count > 1 {
                throw ValidationError("- (standard input) stands alone: it is a feed or a list of feeds by itself")
            }
        }

        func run() async throws {
            let options = try LayoutOptions(
                grid: grid, arrangement: arrangement, text: text, pages: pages, input: input)
            let pipeline = try LayoutPipeline(options: options)
            let progress = ProgressLine(quiet: quiet)
            switch try FeedBatch.input(for: feeds) {
            case .feeds(let list) where list.count == 1:
                try await layOut(list[0], pipeline: pipeline, progress: progress, batch: nil)
            case .standardInputFeed(let prefix):
                try await layOut("-", prefix: prefix, pipeline: pipeline, progress: progress, batch: nil)
            case .feeds(let list):
                let batch = try BatchState(resume: pages.resume)
                for feed in list { try await layOut(feed, pipeline: pipeline, progress: progress, batch: batch) }
                try batch.finish(quiet: quiet)
            case .standardInputList(let prefix):
                let batch = try BatchState(resume: pages.resume)
                try await FeedBatch.forEachListedFeed(startingWith: prefix) { feed in
                    try await layOut(feed, pipeline: pipeline, progress: progress, batch: batch)
                }
                try batch.finish(quiet: quiet)
            }
        }

        /// What a batch run keeps between feeds.
        final class BatchState {
            var folderNames: Set<String> = []
            var feeds = 0
            var failedFeeds = 0
            var someInputsFailed = false
            var items = 0
            var pages = 0
            let started = ContinuousClock.now

            init(resume: String?) throws {
                if resume != nil {
                    throw ValidationError("--resume continues one feed's layout: pass that feed alone")
                }
            }

            func finish(quiet: Bool) throws {
                if !quiet {
                    var line = "\(feeds) feed\(feeds == 1 ? "" : "s"): \(items) items in \(pages) page\(pages == 1 ? "" : "s")"
                    line += ", \(failedFeeds) feed\(failedFeeds == 1 ? "" : "s") failed"
                    line += "; \(Int(((ContinuousClock.now - started).seconds * 1000).rounded())) ms"
                    Terminal.note(line)
                }
                if someInputsFailed || failedFeeds > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
            }
        }

        /// Lays out one feed. Alone (`batch` nil) its errors end the command; in a batch they are reported — on
        /// standard output as a record when pages go there — and the batch goes on.
        private func layOut(
            _ feed: String, prefix: Data = Data(), pipeline: LayoutPipeline, progress: ProgressLine,
            batch: BatchState?
        ) async throws {
            let name = feed == "-" ? "stdin" : feed
            var directory = out
            if let batch, let out {
                directory = out + "/" + FeedBatch.folderName(for: feed, used: &batch.folderNames)
            }
            progress.start()
            do {
                let sink = try PageWriter(
                    directory: directory, pretty: pretty, breakpoints: pipeline.options.breakpoints,
                    feed: batch == nil ? nil : feed)
                let started = ContinuousClock.now
                let summary = try await pipeline.run(
                    feedPath: feed, resume: pages.resume, standardInputPrefix: prefix,
                    onProgress: { progress.update($0, feed: name) }, onPage: { try sink.write($0) })
                try sink.finish()
                progress.clear()
                try finishRun(
                    summary, grids: pipeline.grids, destination: directory, started: started, quiet: quiet,
                    feed: batch == nil ? nil : name)
                guard let batch else { return }
                batch.feeds += 1
                batch.items += summary.items
                batch.pages += summary.pages
                if summary.imageFailures > 0 { batch.someInputsFailed = true }
            } catch let error as LayoutError {
                progress.clear()
                guard let batch, CommandLineFailure.exitCode(for: error) != CommandLineFailure.usage else { throw error }
                batch.feeds += 1
                batch.failedFeeds += 1
                Terminal.error(error.message.hasPrefix(feed) ? error.message : "\(feed): \(error.message)")
                if out == nil {
                    var json = JSONWriter()
                    Records.writeFeedError(feed: feed, error: error, into: &json)
                    json.appendRaw("\n")
                    Terminal.write(json.takeBytes())
                }
            }
        }
    }

    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Parse a feed and print one JSON record per item (NDJSON).",
            discussion: """
                Warnings go inside the record of the item they concern; feed-wide ones and a summary go to \
                standard error.
                Examples:
                  feedlayout ingest sample-feed/feed.xml | head -1
                  curl -s https://example.com/feed.xml | feedlayout ingest -
                  feedlayout ingest feed.xml | jq -r '.image.url // empty'
                """)

        @Argument(help: "The feed: a file path, an http(s) URL, or - for standard input.")
        var feed: String

        @Option(help: "Local images may also live under this folder (besides the feed's own).")
        var imageRoot: String?

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @Flag(help: "Also fetch a feed URL from private, loopback and link-local addresses (refused by default).")
        var allowPrivateNetwork = false

        func run() async throws {
            var json = JSONWriter(reservingCapacity: 1 << 16)
            let summary = try await ingestFeed(at: feed, imageRoot: imageRoot, allowPrivateNetwork: allowPrivateNetwork) { item in
                Records.write(item, into: &json)
                json.appendRaw("\n")
                if json.bytes.count > 1 << 16 { Terminal.write(json.takeBytes()) }
            }
            Terminal.write(json.takeBytes())
            if !quiet {
                var line = "\(feed): \(summary.items) items (\(summary.format ?? "unknown format"))"
                line += ", \(summary.itemsWithWarnings) with warnings"
                Terminal.note(line)
                for warning in summary.feedWarnings {
                    Terminal.note("warning: \(feed)\(warning.line.map { ":\($0)" } ?? ""): \(warning.message)")
                }
            }
        }
    }

    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "probe",
            abstract: "Read image sizes and EXIF orientation from file headers (NDJSON, one record per image).",
            discussion: """
                Inputs are file paths, - for standard input, or http(s) URLs (fetched with Range requests, \
                usually one request for the first 16 KiB). Records come out in input order; a failed input \
                still gets a record, with "error", and the exit code is then 1.
                Results are cached in $XDG_CACHE_HOME/feedlayout/probe.sqlite (files by size and modification \
                time, URLs by ETag / Last-Modified, revalidated); --no-cache bypasses it.
                Examples:
                  feedlayout probe sample-feed/photos/*.jpg
                  feedlayout probe --placeholders https://example.com/a.jpg
                """)

        @Argument(help: "Image files, - for standard input, or http(s) URLs.")
        var images: [String] = []

        @Option(
            help: ArgumentHelp(
                "Also probe the inputs listed in this file, one per line (- reads the list from standard input).",
                discussion: "For thousands of inputs: parsing them as arguments costs more than probing them."))
        var inputList: String?

        @Option(help: "How many images are probed at once.")
        var concurrency: Int = 16

        @Flag(
            help:
                "Decode JPEG and PNG pixels (libjpeg, libpng) and report whether they are decodable; warnings are fatal."
        )
        var verify = false

        @Option(help: "With --verify or --placeholders: refuse to decode images above this many pixels.")
        var pixelBudget: Int = ImageInfo.defaultPixelBudget

        @Option(help: "With --verify: the most scans a progressive JPEG may have (0: no limit).")
        var maxScans: Int = 100

        @Flag(help: "Add a placeholder (average colour and ThumbHash) to each record.")
        var placeholders = false

        @OptionGroup var cache: CacheOptions

        @OptionGroup(title: "Remote images") var remote: RemoteOptions

        func validate() throws {
            guard !images.isEmpty || inputList != nil else { throw ValidationError("name at least one image") }
            if inputList == "-" && images.contains("-") {
                throw ValidationError("standard input cannot hold both the input list and an image")
            }
            guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
            guard pixelBudget >= 1 else { throw ValidationError("--pixel-budget must be at least 1") }
            guard maxScans >= 0 else { throw ValidationError("--max-scans must be 0 or more") }
            if images.filter({ $0 == "-" }).count > 1 { throw ValidationError("- (standard input) can be given once") }
        }

        /// The arguments, then the lines of `--input-list` (blank lines skipped).
        private func sources() throws -> [String] {
            guard let inputList else { return images }
            let text: String
            do {
                text =
                    inputList == "-"
                    ? String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
                    : try readWholeFile(inputList)
            } catch let error as POSIXError {
                throw LayoutError(
                    .invalidOptions, "--input-list \(inputList): cannot be read (\(String(cString: strerror(error.code.rawValue))))")
            } catch {
                throw LayoutError(
                    .invalidOptions, "--input-list \(inputList): cannot be read (\(error.localizedDescription))")
            }
            let listed = Self.lines(of: text)
            if listed.contains("-") && (inputList == "-" || images.contains("-")) {
                throw LayoutError(.invalidOptions, "--input-list \(inputList): standard input (-) can be used once")
            }
            return images + listed
        }

        /// The non-empty lines of a list, split where `Character.isNewline` splits (LF, CR, CRLF, VT, FF, NEL,
        /// U+2028, U+2029) but over UTF-8 bytes: splitting thousands of paths by Character costs more than
        /// probing them.
        static func lines(of text: String) -> [String] {
            var text = text
            return text.withUTF8 { bytes in
                var lines: [String] = []
                var start = 0
                var index = 0
                func endLine(before end: Int, resumingAt next: Int) {
                    if end > start {
                        lines.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
                    }
                    (start, index) = (next, next)
                }
                while index < bytes.count {
                    let byte = bytes[index]
                    if (0x0A...0x0D).contains(byte) {
                        endLine(before: index, resumingAt: index + 1)
                    } else if byte == 0xC2, index + 1 < bytes.count, bytes[index + 1] == 0x85 {
                        endLine(before: index, resumingAt: index + 2)
                    } else if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80,
                        bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9
                    {
                        endLine(before: index, resumingAt: index + 3)
                    } else {
                        index += 1
                    }
                }
                endLine(before: bytes.count, resumingAt: bytes.count)
                return lines
            }
        }

        func run() async throws {
            let images = try sources()
            let decodeOptions = PixelDecodeOptions(pixelBudget: pixelBudget, maximumProgressiveScans: maxScans)
            var probeCache: ProbeCache?
            do {
                if let path = cache.path { probeCache = try ProbeCache(path: path) }
            } catch {
                throw LayoutError(.invalidOptions, error.message)
            }
            let logger = Logger(label: "feedlayout.probe")
            let needsFetcher = images.contains(where: ImageProber.isRemote)
            let fetcher = needsFetcher ? RemoteFetcher(configuration: remote.configuration, logger: logger) : nil
            let prober = CachingImageProber(
                prober: ImageProber(remote: fetcher.map { RemoteImageProber(fetcher: $0) }), cache: probeCache,
                decodeOptions: decodeOptions, logger: logger)
            let failures = await probeAll(images, prober: prober, decodeOptions: decodeOptions)
            try await fetcher?.shutdown()
            if failures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }

        /// Probes with at most `concurrency` images in flight and prints each record as soon as every
        /// earlier one is printed, so output keeps input order without waiting for the slowest image.
        private func probeAll(_ images: [String], prober: CachingImageProber, decodeOptions: PixelDecodeOptions) async
            -> Int
        {
            let verify = verify
            let placeholders = placeholders
            typealias Probed = (ProbeResult, Result<PixelDecodeReport, ImageProbeError>?)
            let batches = Self.batches(
                images, headerOnly: !verify && !placeholders,
                workers: min(concurrency, ProcessInfo.processInfo.activeProcessorCount))
            var json = JSONWriter(reservingCapacity: 1 << 16)
            var failures = 0
            // Finished batches that wait for an earlier one, by their first index.
            var pending: [Int: [Probed]] = [:]
            var nextToPrint = 0
            await withTaskGroup(of: (Int, [Probed]).self) { group in
                var nextBatch = 0
                func startNext() {
                    guard nextBatch < batches.count else { return }
                    let batch = batches[nextBatch]
                    nextBatch += 1
                    group.addTask {
                        let results = await prober.probe(Array(images[batch]), withPlaceholder: placeholders)
                        guard verify else { return (batch.lowerBound, results.map { ($0, nil) as Probed }) }
                        var probed: [Probed] = []
                        for (source, result) in zip(images[batch], results) {
                            guard case .success(let header) = result.info else {
                                probed.append((result, nil))
                                continue
                            }
                            do throws(ImageProbeError) {
                                let report = try await prober.prober.verifyDecodable(
                                    source, options: decodeOptions, header: header)
                                probed.append((result, .success(report)))
                            } catch {
                                probed.append((result, .failure(error)))
                            }
                        }
                        return (batch.lowerBound, probed)
                    }
                }
                for _ in 0..<concurrency { startNext() }
                for await (first, probed) in group {
                    startNext()
                    pending[first] = probed
                    while let batch = pending.removeValue(forKey: nextToPrint) {
                        for (result, decoding) in batch {
                            let source = images[nextToPrint]
                            if case .failure = result.info {
                                failures += 1
                            } else if case .failure(let error) = decoding, !Records.isUnverifiable(error) {
                                failures += 1
                            }
                            Records.writeProbe(
                                source: source, result: result.info, decoding: decoding,
                                placeholder: result.placeholder, into: &json)
                            json.appendRaw("\n")
                            nextToPrint += 1
                        }
                    }
                    if json.bytes.count > 1 << 15 { Terminal.write(json.takeBytes()) }
                }
            }
            Terminal.write(json.takeBytes())
            return failures
        }

        /// Splits the inputs into the batches one child task probes in turn.
        ///
        /// A child task per image costs more than reading a file's header, so runs of local files are
        /// probed in batches of up to 64 — small enough that each worker still gets about four batches,
        /// so the work stays spread over the threads. Each batch is one image in flight, so
        /// `--concurrency` keeps its meaning. URLs go alone (their time is waiting for the network), and
        /// so does every image when pixels are decoded.
        /// - Parameters:
        ///   - images: The sources, in order.
        ///   - headerOnly: Whether only headers are read (no `--verify`, no `--placeholders`).
        ///   - workers: How many threads can probe at once.
        /// - Returns: Consecutive index ranges covering `images`.
        static func batches(_ images: [String], headerOnly: Bool, workers: Int) -> [Range<Int>] {
            let size = headerOnly ? max(1, min(64, images.count / (4 * max(1, workers)))) : 1
            var batches: [Range<Int>] = []
            var start = 0
            for (index, source) in images.enumerated() {
                let alone = source == "-" || ImageProber.isRemote(source)
                if alone || index - start == size {
                    if index > start { batches.append(start..<index) }
                    start = index
                }
                if alone {
                    batches.append(index..<index + 1)
                    start = index + 1
                }
            }
            if images.count > start { batches.append(start..<images.count) }
            return batches
        }

        /// Limits for fetching http(s) images and feeds.
        struct RemoteOptions: ParsableArguments {
            @Flag(help: "Allow URLs on private, loopback and link-local addresses (refused by default).")
            var allowPrivateNetwork = false

            @Option(help: "Seconds to wait for a connection.")
            var connectTimeout: Double = 5

            @Option(help: "Seconds the server may stay silent while a response is read.")
            var readTimeout: Double = 10

            @Option(help: "Seconds one fetch may take in all (redirects and further ranges included).")
            var timeout: Double = 30

            @Option(help: "The most redirects followed.")
            var maxRedirects: Int = 5

            @Option(help: "The most bytes read from one URL.")
            var maxBytes: Int = 64 * 1024 * 1024

            @Option(help: "The most requests in flight at once.")
            var maxRequests: Int = 16

            func validate() throws {
                for (name, value) in [
                    ("--connect-timeout", connectTimeout), ("--read-timeout", readTimeout), ("--timeout", timeout),
                ] {
                    guard value > 0, value.isFinite else { throw ValidationError("\(name) must be above 0 seconds") }
                }
                guard maxRedirects >= 0 else { throw ValidationError("--max-redirects must be 0 or more") }
                guard maxBytes >= 1 else { throw ValidationError("--max-bytes must be at least 1") }
                guard maxRequests >= 1 else { throw ValidationError("--max-requests must be at least 1") }
            }

            var configuration: RemoteFetchConfiguration {
                RemoteFetchConfiguration(
                    connectTimeout: .milliseconds(Int(connectTimeout * 1000)),
                    readTimeout: .milliseconds(Int(readTimeout * 1000)),
                    totalTimeout: .milliseconds(Int(timeout * 1000)), maximumRedirects: maxRedirects,
                    maximumBytes: maxBytes,
                    maximumConcurrentRequests: maxRequests, allowPrivateNetwork: allowPrivateNetwork)
            }
        }
    }

    struct Measure: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure how texts wrap at a width (NDJSON, one record per text).",
            discussion: """
                With no TEXT, each line of standard input is one text. Lines wrap as Chromium wraps \
                them (white-space: normal; overflow-wrap: break-word), with the same fonts.
                Examples:
                  feedlayout measure --width 200 --max-lines 2 "A caption that wraps"
                  feedlayout measure --width 236 --font "Noto Sans CJK JP" --line-height 1.4x \\
                    < captions.txt
                """)

        @Option(help: "The box width in CSS pixels.")
        var width: Double

        @Option(help: "A font file path or a family name.")
        var font: String = "DejaVu Sans"

        @Option(help: "Font size in pixels.")
        var fontSize: Double = 13

        @Option(help: "Font weight (400 regular, 700 bold).")
        var weight: Int = 400

        @Option(help: "Line height: 'normal', pixels ('20' or '20px') or a multiple ('1.4x').")
        var lineHeight: String = "normal"

        @Option(help: "At most this many lines, the last one ending in an ellipsis.")
        var maxLines: Int?

        @Argument(help: "Texts to measure.")
        var texts: [String] = []

        func validate() throws {
            guard width > 0, width.isFinite else { throw ValidationError("--width must be above 0") }
            guard fontSize > 0 else { throw ValidationError("--font-size must be above 0") }
            if let maxLines, maxLines < 1 { throw ValidationError("--max-lines must be at least 1") }
            _ = try LineHeightParser.parse(lineHeight)
        }

        func run() throws {
            let style = TextStyle(font: font, size: fontSize, lineHeight: try LineHeightParser.parse(lineHeight), weight: weight)
            let measurer: TextMeasurer
            do {
                measurer = try TextMeasurer(style: style)
            } catch {
                throw LayoutError(.fontUnavailable, "--font: \(error)")
            }
            var json = JSONWriter()
            func emit(_ text: String) {
                Records.write(measurer.measure(text, width: width, maxLines: maxLines), into: &json)
                json.appendRaw("\n")
            }
            if texts.isEmpty {
                while let line = readLine(strippingNewline: true) {
                    emit(line)
                    if json.bytes.count > 1 << 16 { Terminal.write(json.takeBytes()) }
                }
            } else {
                texts.forEach(emit)
            }
            Terminal.write(json.takeBytes())
        }
    }
}

extension FeedLayoutCommand {
    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lay out a feed; write an offline HTML preview (DIR/index.html) and DIR/preview.png.",
            discussion: """
                Takes the same layout options as `layout`. The folder holds index.html, the font files \
                it loads, and preview.png: the first pages (see --png-max-height and --png-max-pages) at the \
                layout's device scale. Photos are linked where they are. With --breakpoints, one preview \
                per width (DIR/375/, …).
                Examples:
                  feedlayout preview sample-feed/feed.xml --out preview/
                  xdg-open preview/index.html
                  feedlayout preview feed.xml --out preview/ --width 375 --columns 2 \\
                    --placeholders
                """)

        @Argument(help: "The feed: a file path, an http(s) URL, or - for standard input.")
        var feed: String

        @Option(help: "The folder to write index.html into.")
        var out: String

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @Option(help: "preview.png is at most this many device pixels tall.")
        var pngMaxHeight: Int = 4000

        @Option(help: "preview.png shows at most this many pages.")
        var pngMaxPages: Int = 10

        @OptionGroup(title: "Grid") var grid: GridOptions
        @OptionGroup(title: "Flow, horizontal axis and sections") var arrangement: ArrangementOptions
        @OptionGroup(title: "Text") var text: TextOptions
        @OptionGroup(title: "Pages") var pages: PageOptions
        @OptionGroup(title: "Input") var input: InputOptions

        func validate() throws {
            guard pngMaxHeight >= 1 else { throw ValidationError("--png-max-height must be at least 1") }
            guard pngMaxPages >= 1 else { throw ValidationError("--png-max-pages must be at least 1") }
        }

        func run() async throws {
            let options = try LayoutOptions(
                grid: grid, arrangement: arrangement, text: text, pages: pages, input: input)
            let pipeline = try LayoutPipeline(options: options)
            // With breakpoints, one preview per layout in a folder named after its width.
            let folders =
                options.breakpoints.isEmpty ? [out] : options.breakpoints.map { out + "/" + PageWriter.folderName(for: $0) }
            var previews = zip(pipeline.grids, folders).map { grid, folder in
                HTMLPreview(options: options, grid: grid, feedPath: feed, outputDirectory: folder)
            }
            var pngs = zip(pipeline.grids, folders).map { grid, folder in
                PNGPreview(
                    options: options, grid: grid, feedPath: feed, outputDirectory: folder,
                    limits: PNGPreviewOptions(maximumHeight: pngMaxHeight, maximumPages: pngMaxPages))
            }
            let started = ContinuousClock.now
            let summary = try await pipeline.run(feedPath: feed, resume: pages.resume) { page in
                previews[page.layoutIndex].add(page)
                pngs[page.layoutIndex].add(page)
            }
            for preview in previews { try preview.write(title: feed) }
            for index in pngs.indices {
                let drawn = try pngs[index].write()
                guard !quiet else { continue }
                for failure in drawn.photoFailures { Terminal.note("preview.png: photo not drawn: \(failure)") }
                if drawn.remotePhotos > 0 {
                    Terminal.note(
                        "preview.png: \(drawn.remotePhotos) remote photos are not fetched; their slots show the placeholder")
                }
            }
            let destination = folders.count == 1 ? out + "/index.html, preview.png" : out + "/*/index.html, preview.png"
            try finishRun(summary, grids: pipeline.grids, destination: destination, started: started, quiet: quiet)
        }
    }
}

/// Ends a `layout` or `preview` run: the summary line and the feed's own warnings on standard error (unless
/// quiet), and exit code 1 when some images could not be read (their items are laid out all the same, with
/// warnings) — unless the run is part of a batch, which decides the exit code at its end.
///
/// - Parameter feed: The feed's name, put before the summary in a batch; `nil` for a run of one feed.
func finishRun(
    _ summary: LayoutSummary, grids: [WaterfallGrid], destination: String?, started: ContinuousClock.Instant,
    quiet: Bool, feed: String? = nil
) throws {
    if !quiet {
        let line = summary.line(grids: grids, destination: destination, elapsed: ContinuousClock.now - started)
        Terminal.note(feed.map { "\($0): \(line)" } ?? line)
        for warning in summary.feedWarnings {
            Terminal.note("warning: \(feed ?? "feed")\(warning.line.map { ":\($0)" } ?? ""): \(warning.message)")
        }
    }
    if feed == nil, summary.imageFailures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
}

/// Reads a file to its end with plain reads, so pipes and process substitutions (`<(…)`, `/dev/fd/N`) work too:
/// Foundation's `String(contentsOfFile:)` refuses them.
func readWholeFile(_ path: String) throws -> String {
    guard let handle = FileHandle(forReadingAtPath: path) else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .ENOENT)
    }
    defer { try? handle.close() }
    var data = Data()
    while true {
        let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
        if chunk.isEmpty { break }
        data += chunk
    }
    return String(decoding: data, as: UTF8.self)
}
