import ArgumentParser
import FeedLayout
import LayoutCommandLine

extension FeedLayoutCommand {
    struct Layout: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "layout",
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

        @Argument(
            help: "Feeds: file paths, http(s) URLs, folders of feeds, or - for standard input (a feed or a list).")
        var feeds: [String]

        @Option(
            help:
                "Write DIR/page-0001.json … (several feeds: DIR/NAME/page-0001.json …; default: NDJSON pages on standard output)."
        )
        var out: String?

        @Flag(help: "Indent page files for reading.")
        var pretty = false

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @OptionGroup var layout: LayoutCommandOptions

        func validate() throws {
            guard !feeds.isEmpty else { throw ValidationError("name at least one feed (or - for standard input)") }
            if feeds.contains("-") && feeds.count > 1 {
                throw ValidationError("- (standard input) stands alone: it is a feed or a list of feeds by itself")
            }
        }

        func run() async throws {
            let pipeline = try LayoutPipeline(options: try layout.options())
            let progress = ProgressLine(quiet: quiet)
            let job = LayoutJob(pipeline: pipeline, output: out, pretty: pretty, resume: layout.pages.resume) { event in
                switch event {
                case .started: progress.start()
                case .progress(let counts, let feed): progress.update(counts, feed: feed)
                case .ended: progress.clear()
                case .note(let line): if !quiet { Terminal.note(line) }
                case .failed(_, let message, let record):
                    Terminal.error(message)
                    if let record { Terminal.write(record) }
                }
            }
            if try await job.run(arguments: feeds) { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }
    }
}
