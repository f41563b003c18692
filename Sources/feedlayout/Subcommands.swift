import ArgumentParser
import FeedLayout
import Foundation
import ImageProbe
import TextMeasure

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

        @Argument(help: "The feed: a file path, or - for standard input.")
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
            if !quiet {
                Terminal.note(summary.line(grid: pipeline.grid, destination: out, elapsed: ContinuousClock.now - started))
            }
            if summary.imageFailures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }
    }

    struct Ingest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Parse a feed and print one JSON record per item (NDJSON).",
            discussion: "Example:\n  feedlayout ingest sample-feed/feed.xml | head -1")

        @Argument(help: "The feed: a file path, or - for standard input.")
        var feed: String

        @Option(help: "Local images may also live under this folder (besides the feed's own).")
        var imageRoot: String?

        @Flag(help: "No summary on standard error.")
        var quiet = false

        func run() throws {
            var json = JSONWriter(reservingCapacity: 1 << 16)
            let summary = try ingestFeed(at: feed, imageRoot: imageRoot) { item in
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

    struct Probe: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read image sizes and EXIF orientation from file headers (NDJSON, one record per image).",
            discussion: "Example:\n  feedlayout probe sample-feed/photos/*.jpg")

        @Argument(help: "Image files (- for standard input).")
        var images: [String]

        func validate() throws {
            guard !images.isEmpty else { throw ValidationError("name at least one image") }
        }

        func run() throws {
            let prober = LocalImageProber()
            var json = JSONWriter()
            var failures = 0
            for source in images {
                let result: Result<ImageInfo, ImageProbeError>
                do {
                    result = .success(try prober.probe(path: source))
                } catch {
                    result = .failure(error)
                    failures += 1
                }
                Records.writeProbe(source: source, result: result, into: &json)
                json.appendRaw("\n")
            }
            Terminal.write(json.takeBytes())
            if failures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
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

        @Argument(help: "The feed: a file path, or - for standard input.")
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
            if !quiet {
                Terminal.note(summary.line(grid: pipeline.grid, destination: out + "/index.html", elapsed: ContinuousClock.now - started))
            }
            if summary.imageFailures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }
    }
}
