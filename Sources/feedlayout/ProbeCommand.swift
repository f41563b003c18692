import ArgumentParser
import FeedLayout
import ImageProbe
import LayoutCommandLine
import Logging
import ProbeCache
import RemoteFetch

extension FeedLayoutCommand {
    struct Probe: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "probe",
            abstract: "Read image sizes and EXIF orientation from file headers (NDJSON, one record per image).",
            discussion: """
                Inputs are file paths, - for standard input, or http(s) URLs (fetched with Range requests, \
                usually one request for the first 16 KiB). Records come out in input order; a failed input \
                still gets a record, with "error", and the exit code is then 1.
                Results are cached in $XDG_CACHE_HOME/feedlayout/probe.sqlite (URLs by ETag / Last-Modified, \
                revalidated; files with --placeholders by size and modification time: a header alone is read \
                faster from the file than from the cache); --no-cache bypasses it.
                Examples:
                  feedlayout probe sample-feed/photos/*.jpg
                  feedlayout probe --placeholders https://example.com/a.jpg
                """)

        @Argument(help: "Image files, - for standard input, or http(s) URLs.")
        var images: [String] = []

        @Option(
            help: ArgumentHelp(
                "Also probe the inputs listed in this file, one per line (- reads the list from standard input).",
                discussion: "For more inputs than a command line holds, or a list another program writes."))
        var inputList: String?

        @Option(help: bounded("How many images are probed at once", OptionLimits.concurrency))
        var concurrency: Int = 16

        @Flag(
            help:
                "Decode JPEG and PNG pixels (libjpeg, libpng) and report whether they are decodable; warnings are fatal."
        )
        var verify = false

        @Option(
            help: bounded(
                "With --verify or --placeholders: refuse to decode images above this many pixels",
                OptionLimits.pixelBudget))
        var pixelBudget: Int = ImageInfo.defaultPixelBudget

        @Option(
            help: bounded(
                "With --verify: the most scans a progressive JPEG may have (0: no limit)", OptionLimits.jpegScans))
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
            try asUsageError {
                try OptionLimits.concurrency.check(concurrency, option: "concurrency")
                try OptionLimits.pixelBudget.check(pixelBudget, option: "pixel-budget")
                try OptionLimits.jpegScans.check(maxScans, option: "max-scans")
            }
            if images.filter({ $0 == "-" }).count > 1 { throw ValidationError("- (standard input) can be given once") }
        }

        /// The arguments, then the lines of `--input-list` (blank lines skipped).
        private func sources() throws -> [String] {
            guard let inputList else { return images }
            let listed = try InputList.read(inputList, option: "--input-list")
            if listed.contains("-") && (inputList == "-" || images.contains("-")) {
                throw LayoutError(.invalidOptions, "--input-list \(inputList): standard input (-) can be used once")
            }
            return images + listed
        }

        func run() async throws {
            let images = try sources()
            var probeCache: ProbeCache?
            do {
                if let path = cache.path { probeCache = try ProbeCache(path: path) }
            } catch {
                throw LayoutError(.invalidOptions, error.message)
            }
            let logger = Logger(label: "feedlayout.probe")
            let needsFetcher = images.contains(where: ImageProber.isRemote)
            let fetcher = needsFetcher ? RemoteFetcher(configuration: remote.configuration, logger: logger) : nil
            let decodeOptions = PixelDecodeOptions(pixelBudget: pixelBudget, maximumProgressiveScans: maxScans)
            let prober = ImageBatchProber(
                prober: CachingImageProber(
                    prober: ImageProber(remote: fetcher.map { RemoteImageProber(fetcher: $0) }), cache: probeCache,
                    decodeOptions: decodeOptions, logger: logger),
                concurrency: concurrency, verify: verify, placeholders: placeholders, decodeOptions: decodeOptions)
            var json = JSONWriter(reservingCapacity: 1 << 16)
            var failures = 0
            await prober.probe(images) { outcomes in
                for outcome in outcomes {
                    if outcome.isFailure { failures += 1 }
                    Records.writeProbe(
                        source: outcome.source, result: outcome.result.info, decoding: outcome.decoding,
                        placeholder: outcome.result.placeholder, into: &json)
                    json.appendRaw("\n")
                }
                Terminal.writeWhenFull(&json, limit: 1 << 15)
            }
            Terminal.write(&json)
            try await fetcher?.shutdown()
            if failures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }

        /// Limits for fetching http(s) images and feeds.
        struct RemoteOptions: ParsableArguments {
            @Flag(help: "Allow URLs on private, loopback and link-local addresses (refused by default).")
            var allowPrivateNetwork = false

            @Option(help: bounded("Seconds to wait for a connection", OptionLimits.timeout))
            var connectTimeout: Double = 5

            @Option(help: bounded("Seconds the server may stay silent while a response is read", OptionLimits.timeout))
            var readTimeout: Double = 10

            @Option(
                help: bounded(
                    "Seconds one fetch may take in all (redirects and further ranges included)", OptionLimits.timeout))
            var timeout: Double = 30

            @Option(help: bounded("The most redirects followed", OptionLimits.redirects))
            var maxRedirects: Int = 5

            @Option(help: bounded("The most bytes read from one URL", OptionLimits.fetchBytes))
            var maxBytes: Int = 64 * 1024 * 1024

            @Option(help: bounded("The most requests in flight at once", OptionLimits.concurrency))
            var maxRequests: Int = 16

            func validate() throws {
                try asUsageError {
                    for (option, value) in [
                        ("connect-timeout", connectTimeout), ("read-timeout", readTimeout), ("timeout", timeout),
                    ] {
                        try OptionLimits.timeout.check(value, option: option)
                    }
                    try OptionLimits.redirects.check(maxRedirects, option: "max-redirects")
                    try OptionLimits.fetchBytes.check(maxBytes, option: "max-bytes")
                    try OptionLimits.concurrency.check(maxRequests, option: "max-requests")
                }
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
}
