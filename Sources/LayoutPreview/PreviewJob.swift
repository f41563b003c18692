import FeedLayout

/// `feedlayout preview`: lays out a feed once and writes, for each of its layouts, `index.html` (with the fonts it
/// loads) and `preview.png` into the output folder (with breakpoints, one folder per width).
public struct PreviewJob {
    public let pipeline: LayoutPipeline
    /// The feed: a file path, an http(s) URL, or `-`.
    public var feed: String
    /// The folder to write into.
    public var output: String
    /// A cursor to continue from.
    public var resume: String?
    /// How much of the layout preview.png shows.
    public var png: PNGPreviewOptions

    public init(pipeline: LayoutPipeline, feed: String, output: String, resume: String?, png: PNGPreviewOptions) {
        self.pipeline = pipeline
        self.feed = feed
        self.output = output
        self.resume = resume
        self.png = png
    }

    /// Lays the feed out and writes the previews.
    ///
    /// - Parameter report: Receives the lines a person is told: photos the PNG could not draw, the run's summary
    ///   and the feed's warnings.
    /// - Returns: Whether some images could not be read (exit code 1 for a command).
    /// - Throws: `LayoutError` when the feed cannot be laid out or a file cannot be written.
    public func run(report: (String) -> Void) async throws -> Bool {
        let options = pipeline.options
        // With breakpoints, one preview per layout in a folder named after its width.
        let folders =
            options.breakpoints.isEmpty
            ? [output] : options.breakpoints.map { output + "/" + PageWriter.folderName(for: $0) }
        var previews = zip(pipeline.grids, folders).map { grid, folder in
            HTMLPreview(options: options, grid: grid, outputDirectory: folder)
        }
        let fileGate = pipeline.fileGate(forFeed: feed)
        var pngs = zip(pipeline.grids, folders).map { grid, folder in
            PNGPreview(options: options, grid: grid, fileGate: fileGate, outputDirectory: folder, limits: png)
        }
        let started = ContinuousClock.now
        let summary = try await pipeline.run(feedPath: feed, resume: resume) { page in
            previews[page.layoutIndex].add(page)
            pngs[page.layoutIndex].add(page)
        }
        for preview in previews { try preview.write(title: feed) }
        for index in pngs.indices {
            let drawn = try pngs[index].write()
            for failure in drawn.photoFailures { report("preview.png: photo not drawn: \(failure)") }
            if drawn.remotePhotos > 0 {
                report(
                    "preview.png: \(drawn.remotePhotos) remote photos are not fetched; their slots show the placeholder"
                )
            }
        }
        let destination =
            folders.count == 1 ? output + "/index.html, preview.png" : output + "/*/index.html, preview.png"
        summary.report(grids: pipeline.grids, destination: destination, elapsed: ContinuousClock.now - started)
            .forEach(report)
        return summary.imageFailures > 0
    }
}
