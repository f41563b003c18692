import ArgumentParser
import FeedLayout

extension FeedLayoutCommand {
    struct Ingest: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "ingest",
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

        @Option(
            help: """
                Local images may also live under this folder (besides the feed's own); for a feed from a URL, the \
                only folder its file: URLs may name.
                """)
        var imageRoot: String?

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @Flag(help: "Also fetch a feed URL from private, loopback and link-local addresses (refused by default).")
        var allowPrivateNetwork = false

        func run() async throws {
            var json = JSONWriter(reservingCapacity: 1 << 16)
            let summary = try await ingestFeed(at: feed, imageRoot: imageRoot, allowPrivateNetwork: allowPrivateNetwork)
            { item in
                Records.write(item, into: &json)
                json.appendRaw("\n")
                Terminal.writeWhenFull(&json)
            }
            Terminal.write(&json)
            if !quiet { summary.report(feed: feed).forEach(Terminal.note) }
        }
    }
}
