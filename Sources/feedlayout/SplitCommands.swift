import ArgumentParser
import FeedIngest
import FeedLayout
import Foundation
import LayoutCommandLine
import LayoutPages

extension FeedLayoutCommand {
    struct Prepare: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "prepare",
            abstract: "Parse, probe and measure a feed's items (or a range of them) for `place`: the parallel half of `layout`.",
            discussion: """
                Writes one NDJSON record per item to standard output, with its index and everything placement \
                needs (photo size and placeholder, each layout's measured title and caption, warnings). Prepare \
                ranges of one feed on many machines, then `feedlayout place` them in one process: the pages are \
                those `feedlayout layout` writes, byte for byte. Give every run the same layout options (and \
                machines the same fonts): each record names them, and `place` refuses others.

                Examples:
                  feedlayout prepare feed.xml --count    # {"items": 100000}
                  feedlayout prepare feed.xml --items 0..50000 --width 375 --columns 2 > part-0.ndjson
                  feedlayout prepare feed.xml --items 50000.. --width 375 --columns 2 > part-1.ndjson
                  feedlayout place part-0.ndjson part-1.ndjson --width 375 --columns 2 --out out/

                With --items alone every run parses the feed up to its range. To have each run read only its share \
                of a feed file, split it by bytes: `--split N` scans the file's markup once (no parsing) and prints \
                N ranges, each beginning at an item's line, as `{"bytes", "items", "firstLine"}`; pass each to a run \
                as --bytes, --items and --first-line:
                  feedlayout prepare sample-feed/feed.xml --split 2
                  # {"bytes":"0..14473","items":"0..26","firstLine":1}
                  # {"bytes":"14473..27505","items":"26..52","firstLine":259}
                  feedlayout prepare sample-feed/feed.xml --bytes 14473..27505 --items 26..52 --first-line 259 > part-1.ndjson
                """)

        @Argument(help: "The feed: a file path, an http(s) URL, or - for standard input.")
        var feed: String

        @Option(help: ArgumentHelp(
            "Only the items with 0-based index in [START, END) (END may be left out: to the end).",
            valueName: "START..END"))
        var items: String?

        @Flag(help: "Only count the feed's items (parsing it, nothing more) and print {\"items\": N}: the cheap first pass that splits a feed into ranges.")
        var count = false

        @Option(help: ArgumentHelp(
            "Scan a feed file's markup (no parsing) and print about N byte ranges, one JSON line each: {\"bytes\", \"items\", \"firstLine\"} for --bytes, --items and --first-line.",
            valueName: "N"))
        var split: Int?

        @Option(help: ArgumentHelp(
            "Only the items whose start tag begins in bytes [START, END) of the feed file, reading only the head and that share (a range from --split; give its --items and --first-line too).",
            valueName: "START..END"))
        var bytes: String?

        @Option(help: ArgumentHelp("With --bytes: the line the range begins on (from --split).", valueName: "LINE"))
        var firstLine = 1

        @OptionGroup var layout: LayoutCommandOptions

        func validate() throws {
            if let items { _ = try Self.range(items, option: "--items") }
            if let bytes { _ = try Self.range(bytes, option: "--bytes") }
            if count && (items != nil || bytes != nil) {
                throw ValidationError("--count counts the whole feed: leave out --items and --bytes")
            }
            if let split {
                guard split >= 1 else { throw ValidationError("--split takes a number of ranges, 1 or more: not \(split)") }
                guard items == nil, bytes == nil, !count else {
                    throw ValidationError("--split scans the whole file: leave out --count, --items and --bytes")
                }
            }
            if bytes != nil {
                guard items != nil else {
                    throw ValidationError("--bytes needs the range's --items (and --first-line): take all three from --split")
                }
                guard firstLine >= 1 else { throw ValidationError("--first-line is 1 or more: not \(firstLine)") }
            }
            if (split != nil || bytes != nil) && (feed == "-" || feed.contains("://")) {
                throw ValidationError("--split and --bytes read a feed file by bytes: '\(feed)' is not a file path")
            }
            if layout.pages.resume != nil { throw ValidationError("--resume is for layout; prepare takes --items") }
        }

        /// `START..END` or `START..` as a range.
        static func range(_ text: String, option: String = "--items") throws -> Range<Int> {
            let parts = text.components(separatedBy: "..")
            guard parts.count == 2, let start = Int(parts[0]), start >= 0,
                parts[1].isEmpty || Int(parts[1]).map({ $0 >= start }) == true
            else {
                throw ValidationError("\(option) is START..END (0-based, END excluded, END ≥ START) or START..: not '\(text)'")
            }
            return start..<(parts[1].isEmpty ? Int.max : Int(parts[1])!)
        }

        func run() async throws {
            let pipeline = try LayoutPipeline(options: try layout.options())
            if count {
                // Every item is skipped: parsed, and neither finished, probed nor measured.
                let counted = try await pipeline.prepare(.path(feed), items: Int.max..<Int.max) { _ in }
                Terminal.write(Array("{\"items\":\(counted.feedItems ?? 0)}\n".utf8))
                return
            }
            if let split {
                try printRanges(splitting: split)
                return
            }
            let identity = pipeline.preparedIdentity
            var json = JSONWriter()
            var failedImages = false
            func write(_ item: PreparedItem) {
                PreparedRecords.write(item, identity: identity, into: &json)
                if item.photo.isUnreadImage { failedImages = true }
                Terminal.writeWhenFull(&json)
            }
            if let bytes {
                let range = FeedByteRange(
                    bytes: try Self.range(bytes, option: "--bytes"), items: try Self.range(items!), firstLine: firstLine)
                _ = try await pipeline.prepare(file: feed, bytes: range) { write($0) }
            } else {
                _ = try await pipeline.prepare(.path(feed), items: try items.map { try Self.range($0) }) { write($0) }
            }
            Terminal.write(&json)
            if failedImages { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }

        /// One JSON line per range, with the values of --bytes, --items and --first-line.
        private func printRanges(splitting count: Int) throws {
            let ranges = try LayoutPipeline.byteRanges(ofFile: feed, count: count)
            var json = JSONWriter()
            for range in ranges {
                json.beginObject()
                json.field("bytes", FeedByteRange.text(range.bytes))
                json.field("items", FeedByteRange.text(range.items))
                json.field("firstLine", range.firstLine)
                json.endObject()
                json.appendRaw("\n")
            }
            Terminal.write(&json)
        }
    }

    struct Place: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "place",
            abstract: "Place items `prepare` wrote into pages, exactly as `layout` writes them.",
            discussion: """
                Reads prepared items from the files in the order given (or standard input), which together must \
                hold every index from 0 once, in order: a gap or an overlap is an error naming it. Takes the layout \
                options `prepare` was given; pages go to --out DIR or to standard output as NDJSON, as `layout` \
                writes them.
                """)

        @Argument(help: "Files of prepared items, in index order, or - for standard input (the default).")
        var files: [String] = []

        @Option(help: "Write DIR/page-0001.json … (default: NDJSON pages on standard output).")
        var out: String?

        @Flag(help: "Indent page files for reading.")
        var pretty = false

        @Flag(help: "No summary on standard error.")
        var quiet = false

        @OptionGroup var layout: LayoutCommandOptions

        func validate() throws {
            if layout.pages.resume != nil { throw ValidationError("--resume is for layout: place starts at item 0") }
            if files.contains("-") && files.count > 1 { throw ValidationError("- (standard input) stands alone") }
        }

        func run() async throws {
            let started = ContinuousClock.now
            let pipeline = try LayoutPipeline(options: try layout.options())
            let sink = try PageWriter(directory: out, pretty: pretty, breakpoints: pipeline.options.breakpoints)
            let items = PreparedItemReader(
                files: files.isEmpty ? ["-"] : files, identity: pipeline.preparedIdentity,
                layouts: pipeline.grids.count)
            let summary = try await pipeline.place(items) { try sink.write($0) }
            try sink.finish()
            if !quiet {
                for line in summary.report(grids: pipeline.grids, destination: out, elapsed: ContinuousClock.now - started) {
                    Terminal.note(line)
                }
            }
            if summary.imageFailures > 0 { throw ExitCode(CommandLineFailure.someInputsFailed) }
        }
    }
}

/// The prepared items of files (or standard input), line by line, as an async sequence. Lines are read a batch at
/// a time, and the next batch is parsed on another thread while placement works through this one: reading the
/// records is most of `place`'s work.
struct PreparedItemReader: AsyncSequence {
    typealias Element = PreparedItem
    let files: [String]
    let identity: String
    let layouts: Int

    func makeAsyncIterator() -> Iterator { Iterator(reader: self) }

    struct Iterator: AsyncIteratorProtocol {
        let reader: PreparedItemReader
        private var lines = LineReader()
        private var ready: [PreparedItem] = []
        private var position = 0
        private var parsing: Task<[PreparedItem], any Error>?

        init(reader: PreparedItemReader) { self.reader = reader }

        mutating func next() async throws(any Error) -> PreparedItem? {
            while position == ready.count {
                if parsing == nil { parsing = try parseNextBatch() }
                guard let batch = parsing else { return nil }
                ready = try await batch.value
                position = 0
                parsing = try parseNextBatch()
            }
            defer { position += 1 }
            return ready[position]
        }

        /// Reads the next lines and starts parsing them; `nil` at the end of the last file.
        private mutating func parseNextBatch() throws -> Task<[PreparedItem], any Error>? {
            var batch: [(line: [UInt8], place: String)] = []
            while batch.count < 1024, let line = try lines.next(files: reader.files) { batch.append(line) }
            guard !batch.isEmpty else { return nil }
            let (identity, layouts) = (reader.identity, reader.layouts)
            return Task.detached {
                try batch.map { entry throws(LayoutError) in
                    try PreparedRecords.read(entry.line, identity: identity, layouts: layouts, place: entry.place)
                }
            }
        }
    }

    /// The non-blank lines of the files in turn, each with its place (`FILE:LINE`).
    struct LineReader {
        private var fileIndex = -1
        private var handle: FileHandle?
        private var buffer: [UInt8] = []
        /// Where the next line starts in `buffer` (bytes before it are dropped a chunk at a time, not per line).
        private var start = 0
        private var lineNumber = 0
        private var atEnd = true

        mutating func next(files: [String]) throws -> (line: [UInt8], place: String)? {
            while true {
                if let newline = buffer[start...].firstIndex(of: 0x0A) {
                    let line = buffer[start..<newline]
                    start = newline + 1
                    lineNumber += 1
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) { continue }
                    let name = files[fileIndex] == "-" ? "stdin" : files[fileIndex]
                    return (Array(line), "\(name):\(lineNumber)")
                }
                if !atEnd, let chunk = try handle?.read(upToCount: 1 << 20), !chunk.isEmpty {
                    buffer.removeSubrange(..<start)
                    start = 0
                    buffer += chunk
                    continue
                }
                if start < buffer.count {
                    // A last line without its newline.
                    buffer.append(0x0A)
                    atEnd = true
                    continue
                }
                buffer.removeAll(keepingCapacity: true)
                start = 0
                fileIndex += 1
                guard fileIndex < files.count else { return nil }
                let path = files[fileIndex]
                if path == "-" {
                    handle = FileHandle.standardInput
                } else {
                    guard let opened = FileHandle(forReadingAtPath: path) else {
                        throw LayoutError(.preparedItemsInvalid, "\(path): cannot open the file of prepared items")
                    }
                    handle = opened
                }
                lineNumber = 0
                atEnd = false
            }
        }
    }
}
