import ArgumentParser
import FeedLayout
import LayoutCommandLine
import LayoutPreview

extension FeedLayoutCommand {
    struct Preview: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "preview",
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

        @Option(help: bounded("preview.png is at most this many device pixels tall", OptionLimits.previewHeight))
        var pngMaxHeight: Int = 4000

        @Option(help: bounded("preview.png shows at most this many pages", OptionLimits.previewPages))
        var pngMaxPages: Int = 10

        @OptionGroup var layout: LayoutCommandOptions

        func validate() throws {
            try asUsageError {
                try OptionLimits.previewHeight.check(pngMaxHeight, option: "png-max-height")
                try OptionLimits.previewPages.check(pngMaxPages, option: "png-max-pages")
            }
        }

        func run() async throws {
            let job = PreviewJob(
                pipeline: try LayoutPipeline(options: try layout.options()), feed: feed, output: out,
                resume: layout.pages.resume,
                png: PNGPreviewOptions(maximumHeight: pngMaxHeight, maximumPages: pngMaxPages))
            if try await job.run(report: { if !quiet { Terminal.note($0) } }) {
                throw ExitCode(CommandLineFailure.someInputsFailed)
            }
        }
    }
}
