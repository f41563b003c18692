import ArgumentParser
import FeedLayout
import Foundation
import ImageProbe
import Logging
import ProbeCache
import RemoteFetch
import TextMeasure
import WaterfallLayout

extension FeedLayoutCommand {
    struct Layout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lay out a feed and write its pages.",
            discussion: """
                Examples:
                  Write out/page-0001.json, out/page-0002.json, …:
                    feedlayout layout sample-feed/feed.xml --out out/
                  The first page of a phone-sized layout, as NDJSON:
                    feedlayout layout feed.xml --width 375 --columns 2 --page-size 20 --max-pages 1
                  The page after it, from the first page's cursor:
                    feedlayout layout feed.xml --width 375 --columns 2 --page-size 20 --max-pages 1 --resume fl1.…
                """)

        @Argument(help: "The feed: a file path, an http(s) URL, or - for standard input.")
        var feed: String

        @Option(help: "Write DIR/page-0001.json … (default: NDJSON pages on standard output).")
        var out: String?

        @Flag(help: "Indent page files for reading.")
        var pretty = false

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @OptionGroup(title: "Grid") var grid: GridOptions
        @OptionGroup(title: "Text") var text: TextOptions
        @OptionGroup(title: "Pages") var pages: PageOptions
        @OptionGroup(title: "Input") var input: InputOptions

        func run() async throws {
            let options = try LayoutOptions(grid: grid, text: text, pages: pages, input: input)
            let pipeline = try LayoutPipeline(options: options)
            let sink = try PageWriter(directory: out, pretty: pretty, grid: pipeline.grid)
            let started = ContinuousClock.now
            let summary = try await pipeline.run(feedPath: feed, resume: pages.resume) { try sink.write($0) }
            try sink.finish()
            try finishRun(summary, grid: pipeline.grid, destination: out, started: started, quiet: quiet)
        }
    }

    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Parse a feed and print one JSON record per item (NDJSON).",
            discussion: "Example:\n  feedlayout ingest sample-feed/feed.xml | head -1")

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
                    : try String(contentsOfFile: inputList, encoding: .utf8)
            } catch {
                throw LayoutError(
                    .invalidOptions, "--input-list \(inputList): cannot be read (\(error.localizedDescription))")
            }
            let listed = text.split(whereSeparator: \.isNewline).map(String.init).filter { !$0.isEmpty }
            if listed.contains("-") && (inputList == "-" || images.contains("-")) {
                throw LayoutError(.invalidOptions, "--input-list \(inputList): standard input (-) can be used once")
            }
            return images + listed
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
            var json = JSONWriter(reservingCapacity: 1 << 16)
            var failures = 0
            var pending: [Int: (ProbeResult, Result<PixelDecodeReport, ImageProbeError>?)] = [:]
            var nextToPrint = 0
            await withTaskGroup(of: (Int, ProbeResult, Result<PixelDecodeReport, ImageProbeError>?).self) { group in
                var nextToStart = 0
                func startNext() {
                    guard nextToStart < images.count else { return }
                    let index = nextToStart
                    let source = images[index]
                    nextToStart += 1
                    group.addTask {
                        let result = await prober.probe(source, withPlaceholder: placeholders)
                        guard verify, case .success(let header) = result.info else { return (index, result, nil) }
                        do throws(ImageProbeError) {
                            let report = try await prober.prober.verifyDecodable(
                                source, options: decodeOptions, header: header)
                            return (index, result, .success(report))
                        } catch {
                            return (index, result, .failure(error))
                        }
                    }
                }
                for _ in 0..<concurrency { startNext() }
                for await (index, result, decoding) in group {
                    startNext()
                    pending[index] = (result, decoding)
                    while let (result, decoding) = pending.removeValue(forKey: nextToPrint) {
                        let source = images[nextToPrint]
                        if case .failure = result.info {
                            failures += 1
                        } else if case .failure(let error) = decoding, !Records.isUnverifiable(error) {
                            failures += 1
                        }
                        Records.writeProbe(
                            source: source, result: result.info, decoding: decoding, placeholder: result.placeholder,
                            into: &json)
                        json.appendRaw("\n")
                        nextToPrint += 1
                    }
                    if json.bytes.count > 1 << 15 { Terminal.write(json.takeBytes()) }
                }
            }
            Terminal.write(json.takeBytes())
            return failures
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
                With no TEXT, each line of standard input is one text.
                Example:
                  feedlayout measure --width 200 --max-lines 2 "A caption that wraps"
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
            abstract: "Lay out a feed and write an HTML preview (DIR/index.html) that works offline.",
            discussion: """
                Takes the same layout options as `layout`.
                Example:
                  feedlayout preview sample-feed/feed.xml --out preview/ --width 800 && open preview/index.html
                """)

        @Argument(help: "The feed: a file path, an http(s) URL, or - for standard input.")
        var feed: String

        @Option(help: "The folder to write index.html into.")
        var out: String

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @OptionGroup(title: "Grid") var grid: GridOptions
        @OptionGroup(title: "Text") var text: TextOptions
        @OptionGroup(title: "Pages") var pages: PageOptions
        @OptionGroup(title: "Input") var input: InputOptions

        func run() async throws {
            let options = try LayoutOptions(grid: grid, text: text, pages: pages, input: input)
            let pipeline = try LayoutPipeline(options: options)
            var preview = HTMLPreview(options: options, grid: pipeline.grid, feedPath: feed, outputDirectory: out)
            let started = ContinuousClock.now
            let summary = try await pipeline.run(feedPath: feed, resume: pages.resume) { preview.add($0) }
            try preview.write(title: feed)
            try finishRun(summary, grid: pipeline.grid, destination: out + "/index.html", started: started, quiet: quiet)
        }
    }
}

/// Ends a `layout` or `preview` run: the summary line on standard error (unless quiet), and exit code 1 when
/// some images could not be read (their items are laid out all the same, with warnings).
func finishRun(
    _ summary: LayoutSummary, grid: WaterfallGrid, destination: String?, started: ContinuousClock.Instant, quiet: Bool
) throws {
    if !quiet {
        Terminal.note(summary.line(grid: grid, destination: destination, elapsed: ContinuousClock.now - started))
    }
    if summary.imageFailures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
}
