import ArgumentParser
import FeedLayout
import Foundation
import ProbeCache
import TextMeasure
import WaterfallLayout

/// The grid: container, columns, gaps and photo limits.
struct GridOptions: ParsableArguments {
    @Option(help: bounded("Container width in CSS pixels, insets included", OptionLimits.length))
    var width: Double = 1024

    @Option(help: bounded("A fixed number of columns (overrides --min-column-width)", OptionLimits.columns))
    var columns: Int?

    @Option(help: bounded("Adaptive columns: as many of at least this width as fit", OptionLimits.length))
    var minColumnWidth: Double = 236

    @Option(help: bounded("The fewest columns in adaptive mode", OptionLimits.columns))
    var minColumns: Int = 2

    @Option(help: bounded("The most columns in adaptive mode", OptionLimits.columns))
    var maxColumns: Int?

    @Option(help: bounded("Gap between columns", OptionLimits.length))
    var gutter: Double = 16

    @Option(help: bounded("Gap between two pins of one column", OptionLimits.length))
    var rowGap: Double = 16

    @Option(help: bounded("Insets: one value for all sides, or top,left,bottom,right; each", OptionLimits.length))
    var inset: String = "16"

    @Option(help: bounded("Padding inside each cell", OptionLimits.length))
    var cellPadding: Double = 0

    @Option(help: bounded("Gap between the photo and its annotation", OptionLimits.length))
    var annotationSpacing: Double = 8

    @Option(help: bounded("Fit photos into the content width × this height (default: no limit)", OptionLimits.length))
    var maxPhotoHeight: Double?

    @Option(
        help: bounded("Photo slots are at least this tall; flatter photos are centred in them", OptionLimits.length))
    var minPhotoHeight: Double = 0

    @Option(
        help: bounded(
            "Device pixels per CSS pixel: every position is a whole number of device pixels", OptionLimits.scale))
    var scale: Double = 1

    @Flag(help: "Column 0 on the right; every frame mirrored.")
    var rightToLeft = false

    @Option(
        help:
            "Which column a pin goes to: shortest-first (the waterfall, as masonry.js), left-to-right or right-to-left (columns in turn), or grid-lanes (CSS display: grid-lanes, as Chromium places it)."
    )
    var placement: PlacementOrder = .shortestFirst

    @Option(
        help: ArgumentHelp(
            "How far above the shortest a column may be and still be taken for reading order: pixels (\(OptionLimits.length.summary)), or 'normal' (the caption font size, CSS flow-tolerance: normal). Shortest-first takes the first such column; grid-lanes the first after the previous pin.",
            valueName: "pixels|normal"))
    var orderTolerance: OrderTolerance = .pixels(0)

    @Option(
        help: bounded(
            "Width ÷ height for photos whose size cannot be read or is not declared", OptionLimits.aspectRatio))
    var fallbackAspectRatio: Double = 1

    @Option(
        help: ArgumentHelp(
            "Several layouts from one pass over the feed: WIDTH:COLUMNS,… (e.g. 375:2,768:3,1280:5; \(OptionLimits.breakpoints.summary) layouts, widths and columns bounded as --width and --columns); replaces --width and --columns.",
            valueName: "list"))
    var breakpoints: String?

    /// Sets the grid's fields of the library's named options.
    func apply(to values: inout LayoutOptionValues) {
        values.width = width
        values.columns = columns
        values.minColumnWidth = minColumnWidth
        values.minColumns = minColumns
        values.maxColumns = maxColumns
        values.gutter = gutter
        values.rowGap = rowGap
        values.inset = inset
        values.cellPadding = cellPadding
        values.annotationSpacing = annotationSpacing
        values.maxPhotoHeight = maxPhotoHeight
        values.minPhotoHeight = minPhotoHeight
        values.scale = scale
        values.rightToLeft = rightToLeft
        values.placement = placement
        values.orderTolerance = orderTolerance
        values.fallbackAspectRatio = fallbackAspectRatio
        values.breakpoints = breakpoints
    }
}

/// The fonts behind the primary one, and where family names are looked up: shared by `layout`, `preview` and
/// `measure`.
public struct FontListOptions: ParsableArguments {
    public init() {}

    @Option(
        name: .customLong("fallback-font"),
        help: ArgumentHelp(
            "A font for characters the primary font lacks: a file path or a family name. Repeat it to list several, "
                + "in the order a character looks for its glyph; they replace the standard list (\(TextStyle.standardFallbackFonts.joined(separator: ", "))).",
            valueName: "font"))
    var fallbackFonts: [String] = []

    @Flag(help: "Use no fallback fonts: characters the primary font lacks show as its missing-glyph box.")
    var noFallbackFonts = false

    @Option(
        help: ArgumentHelp(
            "Look font family names up only in this folder, not among the machine's fonts.", valueName: "folder"))
    var fontDir: String?

    public func validate() throws {
        if noFallbackFonts && !fallbackFonts.isEmpty {
            throw ValidationError("--no-fallback-fonts and --fallback-font exclude each other")
        }
    }

    /// The fallback list a style gets.
    var fallbackList: [String] {
        noFallbackFonts ? [] : fallbackFonts.isEmpty ? TextStyle.standardFallbackFonts : fallbackFonts
    }

    /// `style` with these fallbacks and this font folder.
    public func applied(to style: TextStyle) -> TextStyle {
        var style = style
        style.fallbackFonts = fallbackList
        style.fontDirectory = fontDir
        return style
    }
}

/// Text: fonts, sizes and line limits of the annotation.
struct TextOptions: ParsableArguments {
    @Option(help: "Caption font: a font file path or a family name.")
    var font: String = "DejaVu Sans"

    @OptionGroup var fontList: FontListOptions

    @Option(help: bounded("Caption font size in pixels", OptionLimits.fontSize))
    var fontSize: Double = 13

    @Option(help: "Title font (default: --font).")
    var titleFont: String?

    @Option(help: bounded("Title font size in pixels", OptionLimits.fontSize))
    var titleFontSize: Double = 15

    @Option(help: bounded("Title font weight (400 regular, 700 bold)", OptionLimits.fontWeight))
    var titleWeight: Int = 700

    @Option(help: lineHeightHelp)
    var lineHeight: String = "normal"

    @Option(
        help: bounded(
            "At most this many title lines, the last one ending in an ellipsis (0 leaves titles out)",
            OptionLimits.lineCount))
    var titleLines: Int = 2

    @Option(help: bounded("At most this many caption lines (0 leaves captions out)", OptionLimits.lineCount))
    var textLines: Int = 3

    @Option(help: bounded("Gap between title and caption", OptionLimits.length))
    var titleTextGap: Double = 4

    /// Sets the text's fields of the library's named options.
    func apply(to values: inout LayoutOptionValues) {
        values.font = font
        values.titleFont = titleFont
        values.fallbackFont = fontList.fallbackFonts
        values.noFallbackFonts = fontList.noFallbackFonts
        values.fontSize = fontSize
        values.titleFontSize = titleFontSize
        values.titleWeight = titleWeight
        values.lineHeight = lineHeight
        values.titleLines = titleLines
        values.textLines = textLines
        values.titleTextGap = titleTextGap
    }
}

extension OrderTolerance: ExpressibleByArgument {
    public init?(argument: String) { self.init(text: argument) }
    public var defaultValueDescription: String { text }
}

/// `--line-height`'s help, with its bounds.
public let lineHeightHelp = ArgumentHelp(
    "Line height: 'normal', pixels ('20' or '20px'; \(OptionLimits.lineHeightPixels.summary)) or a multiple ('1.4x'; "
        + "\(OptionLimits.lineHeightMultiple.summary)).")

/// An option's help followed by the bounds the library checks it against.
public func bounded<Value>(_ text: String, _ range: OptionRange<Value>) -> ArgumentHelp {
    ArgumentHelp("\(text); \(range.summary).")
}

/// Runs a library check, turning its `LayoutError` into the parse-time error ArgumentParser reports as bad usage.
public func asUsageError(_ check: () throws -> Void) throws {
    do {
        try check()
    } catch let error as LayoutError {
        throw ValidationError(error.message)
    }
}

public enum LineHeightParser {
    /// `--line-height` as `measure` reads it: the library's reading, its message as a usage error.
    public static func parse(_ text: String) throws -> LineHeight {
        do {
            return try LineHeight(parsing: text)
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// Paging and resuming.
public struct PageOptions: ParsableArguments {
    public init() {}

    @Option(
        help: bounded("Cut a page every N items (default: 50, unless --page-height is given)", OptionLimits.pageSize))
    var pageSize: Int?

    @Option(
        help: bounded(
            "Cut a page where item tops cross multiples of this height (CSS pixels)", OptionLimits.positiveLength))
    var pageHeight: Double?

    @Option(help: "Continue after the page that wrote this cursor.")
    public var resume: String?

    @Option(
        help: bounded(
            "Stop after this many pages (the last one carries a cursor if items remain)", OptionLimits.pageCount))
    var maxPages: Int?

}

/// Where images come from and how many are read at once.
struct InputOptions: ParsableArguments {
    @Option(
        help: """
            Local images may also live under this folder (besides the feed's own); for a feed from a URL, the only \
            folder its file: URLs may name.
            """)
    var imageRoot: String?

    @Option(help: bounded("How many images are probed at once", OptionLimits.concurrency))
    var probeConcurrency: Int = 8

    @Flag(help: "Add a placeholder (average colour and ThumbHash) to each photo in the pages.")
    var placeholders = false

    @OptionGroup var cache: CacheOptions

    @Flag(help: "Also fetch images from private, loopback and link-local addresses (refused by default).")
    var allowPrivateNetwork = false

    /// The cache file to use, or `nil` with `--no-cache`.
    var probeCachePath: String? { cache.path }
}

/// The probe cache, shared by `probe`, `layout` and `preview`.
public struct CacheOptions: ParsableArguments {
    public init() {}

    @Option(
        name: .customLong("cache"),
        help: "The probe cache file (default: $XDG_CACHE_HOME/feedlayout/probe.sqlite, else ~/.cache/…).")
    var file: String?

    @Flag(help: "Do not read or write the probe cache.")
    var noCache = false

    public func validate() throws {
        if file != nil && noCache { throw ValidationError("--cache and --no-cache exclude each other") }
    }

    /// The cache file to use, or `nil` with `--no-cache`.
    public var path: String? { noCache ? nil : file ?? ProbeCache.defaultPath() }
}

/// The layout options `layout` and `preview` share, in their help groups.
public struct LayoutCommandOptions: ParsableArguments {
    public init() {}

    @OptionGroup(title: "Grid") var grid: GridOptions
    @OptionGroup(title: "Flow, horizontal axis and sections") var arrangement: ArrangementOptions
    @OptionGroup(title: "Text") var text: TextOptions
    @OptionGroup(title: "Pages") public var pages: PageOptions
    @OptionGroup(title: "Input") var input: InputOptions

    /// The library's check of every option (`LayoutOptions.validate()`), at parse time: a value out of bounds is
    /// bad usage before any work starts.
    public func validate() throws {
        try asUsageError { try options().validate() }
    }

    /// The layout options these arguments name, as the library reads them (the service reads a request's the same
    /// way, from JSON).
    public var values: LayoutOptionValues {
        var values = LayoutOptionValues()
        grid.apply(to: &values)
        arrangement.apply(to: &values)
        text.apply(to: &values)
        values.pageSize = pages.pageSize
        values.pageHeight = pages.pageHeight
        values.placeholders = input.placeholders
        return values
    }

    /// The library's options for these arguments: the named options, then what only a command line says (the
    /// probe cache, image folder, concurrency, address policy, page limit), checked again with those.
    public func options() throws -> LayoutOptions {
        var options = try values.options(fontDirectory: text.fontList.fontDir)
        options.probeConcurrency = input.probeConcurrency
        options.imageRoot = input.imageRoot
        options.maximumPages = pages.maxPages
        options.probeCachePath = input.probeCachePath
        options.allowPrivateNetwork = input.allowPrivateNetwork
        try options.validate()
        return options
    }
}

extension PlacementOrder: ExpressibleByArgument {
    /// The CLI spells the orders as the library's options do: `shortest-first`, `left-to-right`, …
    public init?(argument: String) {
        guard let order = Self.allCases.first(where: { $0.optionName == argument }) else { return nil }
        self = order
    }

    public static var allValueStrings: [String] { allCases.map(\.optionName) }
    public var defaultValueDescription: String { optionName }
}
