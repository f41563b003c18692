import Foundation
import TextMeasure
import WaterfallLayout

/// How the annotation under a photo is set: a title block and a caption block, each with its own style and
/// line limit.
public struct AnnotationStyle: Sendable, Hashable {
    public var title: TextStyle
    public var text: TextStyle
    /// At most this many title lines (an ellipsis ends the last one); `nil` for no limit, 0 to leave titles out.
    public var titleLines: Int?
    /// At most this many caption lines; `nil` for no limit, 0 to leave captions out.
    public var textLines: Int?
    /// The gap between the title and the caption, when both are there.
    public var titleTextGap: Double

    public init(
        title: TextStyle = TextStyle(font: "DejaVu Sans", size: 15, lineHeight: .normal, weight: 700),
        text: TextStyle = TextStyle(font: "DejaVu Sans", size: 13, lineHeight: .normal, weight: 400),
        titleLines: Int? = 2, textLines: Int? = 3, titleTextGap: Double = 4
    ) {
        self.title = title
        self.text = text
        self.titleLines = titleLines
        self.textLines = textLines
        self.titleTextGap = titleTextGap
    }
}

/// Where pages are cut. Both rules may be on; a page then ends at whichever comes first.
public struct PaginationRule: Sendable, Hashable {
    /// Cut after this many items.
    public var pageSize: Int?
    /// Cut where item tops cross a multiple of this height (CSS pixels).
    public var pageHeight: Double?

    public init(pageSize: Int? = 50, pageHeight: Double? = nil) {
        self.pageSize = pageSize
        self.pageHeight = pageHeight
    }
}

/// One layout of a responsive set: a container width and its column count (`--breakpoints 375:2,768:3`).
public struct Breakpoint: Sendable, Hashable, CustomStringConvertible {
    public var width: Double
    public var columns: Int

    public init(width: Double, columns: Int) {
        self.width = width
        self.columns = columns
    }

    /// Parses `375:2,768:3,1280:5`: widths in CSS pixels, each with its column count.
    ///
    /// - Throws: `LayoutError.invalidOptions` naming the part that is wrong.
    public static func parseList(_ text: String) throws(LayoutError) -> [Breakpoint] {
        var result: [Breakpoint] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let fields = part.split(separator: ":", omittingEmptySubsequences: false)
            guard fields.count == 2, let width = Double(fields[0].trimmingCharacters(in: .whitespaces)),
                width.isFinite, width > 0, let columns = Int(fields[1].trimmingCharacters(in: .whitespaces)),
                columns >= 1
            else {
                throw LayoutError(
                    .invalidOptions,
                    "--breakpoints: '\(part)' is not WIDTH:COLUMNS (a width in pixels and a column count, e.g. 375:2)",
                    option: "breakpoints")
            }
            if result.contains(where: { $0.width == width }) {
                throw LayoutError(
                    .invalidOptions, "--breakpoints: the width \(part.split(separator: ":")[0]) appears twice",
                    option: "breakpoints")
            }
            result.append(Breakpoint(width: width, columns: columns))
        }
        return result
    }

    public var description: String { "\(cssNumber(width)):\(columns)" }
}

/// The flow (tag) mode's own settings: rows of variable-width pins instead of columns (see `FlowEngine`).
public struct FlowSettings: Sendable, Hashable {
    /// The height every photo is fitted to (CSS pixels); a pin is as wide as its photo at this height.
    public var photoHeight: Double
    public var alignment: FlowAlignment
    /// The aligned flow layout's follow mode: after a section's first row, pins tuck under the highest lane.
    public var follow: Bool

    public init(photoHeight: Double = 160, alignment: FlowAlignment = .start, follow: Bool = false) {
        self.photoHeight = photoHeight
        self.alignment = alignment
        self.follow = follow
    }
}

/// Sections: the feed marks them (`<fl:section>`, `_feedlayout.section`); these are the bands around them.
/// Section insets and the decoration outset live in the engine configuration.
public struct SectionStyle: Sendable, Hashable {
    /// The header band above each section's pins (CSS pixels; 0 for none).
    public var headerHeight: Double
    /// The footer band below them.
    public var footerHeight: Double

    public init(headerHeight: Double = 0, footerHeight: Double = 0) {
        self.headerHeight = headerHeight
        self.footerHeight = footerHeight
    }
}

/// Everything the `layout` pipeline needs besides the feed itself.
public struct LayoutOptions: Sendable, Hashable {
    public var waterfall: WaterfallConfiguration
    public var annotation: AnnotationStyle
    public var pagination: PaginationRule
    /// Width ÷ height used for a photo whose size is unknown (missing, corrupt, or not probed, with no size
    /// declared in the feed).
    public var fallbackAspectRatio: Double
    /// How many images are probed at once.
    public var probeConcurrency: Int
    /// Local images may live here as well as in the feed's own folder; for a feed from a URL, the only folder its
    /// `file:` URLs may name (the folders of `LocalFileGate.forFeed`).
    public var imageRoot: String?
    /// Stop after this many pages (the last one written then carries a cursor if items remain).
    public var maximumPages: Int?
    /// Build a placeholder (average colour and ThumbHash) for every photo that can be decoded and carry it into
    /// the page items, so a client can paint each slot before its photo arrives.
    public var placeholders: Bool
    /// The SQLite probe cache (see `ProbeCache`), or `nil` to probe every image every time.
    public var probeCachePath: String?
    /// Probe images at private, loopback and link-local addresses too (refused by default: a feed must not make
    /// a backend reach into its own network).
    public var allowPrivateNetwork: Bool
    /// Several layouts from one ingest and probe pass, each with its width and column count (which replace
    /// `waterfall`'s); empty for the one layout `waterfall` describes.
    public var breakpoints: [Breakpoint]
    /// Rows of variable-width pins (flow mode) instead of the waterfall's columns; `nil` for the waterfall.
    public var flow: FlowSettings?
    public var sections: SectionStyle

    public init(
        waterfall: WaterfallConfiguration = WaterfallConfiguration(
            containerWidth: 1024, columns: .adaptive(minimumWidth: 236, minimumColumns: 2), insets: Insets(all: 16),
            columnGap: 16, rowGap: 16, cellPadding: 0, annotationSpacing: 8),
        annotation: AnnotationStyle = AnnotationStyle(),
        pagination: PaginationRule = PaginationRule(),
        fallbackAspectRatio: Double = 1,
        probeConcurrency: Int = 8,
        imageRoot: String? = nil,
        maximumPages: Int? = nil,
        placeholders: Bool = false,
        probeCachePath: String? = nil,
        allowPrivateNetwork: Bool = false,
        breakpoints: [Breakpoint] = [],
        flow: FlowSettings? = nil,
        sections: SectionStyle = SectionStyle()
    ) {
        self.breakpoints = breakpoints
        self.flow = flow
        self.sections = sections
        self.waterfall = waterfall
        self.annotation = annotation
        self.pagination = pagination
        self.fallbackAspectRatio = fallbackAspectRatio
        self.probeConcurrency = probeConcurrency
        self.imageRoot = imageRoot
        self.maximumPages = maximumPages
        self.placeholders = placeholders
        self.probeCachePath = probeCachePath
        self.allowPrivateNetwork = allowPrivateNetwork
    }

    /// The options of each layout the run makes: itself, or one per breakpoint with the breakpoint's width and
    /// column count. A breakpoint's options are exactly those of a run with `--width W --columns N`, so its pages
    /// carry the same cursors and resume there.
    public var layouts: [LayoutOptions] {
        guard !breakpoints.isEmpty else { return [self] }
        return breakpoints.map { breakpoint in
            var single = self
            single.breakpoints = []
            single.waterfall.containerWidth = breakpoint.width
            single.waterfall.columns = .fixed(breakpoint.columns)
            return single
        }
    }

    /// The flow engine's configuration, in flow mode: the waterfall's container, insets, gaps (the column gap
    /// between the pins of a row), padding and section settings, with the flow settings.
    var flowConfiguration: FlowConfiguration? {
        flow.map { flow in
            let w = waterfall
            return FlowConfiguration(
                containerWidth: w.containerWidth, insets: w.insets, itemGap: w.columnGap, rowGap: w.rowGap,
                cellPadding: w.cellPadding, annotationSpacing: w.annotationSpacing, photoHeight: flow.photoHeight,
                alignment: flow.alignment, follow: flow.follow, sectionInsets: w.sectionInsets,
                decorationOutset: w.decorationOutset, scale: w.scale)
        }
    }

    /// A stable digest of every option that changes the output, so a cursor can tell it belongs to them: FNV-1a
    /// over ``fingerprintEncoding``.
    var fingerprint: UInt64 {
        var hash = StableHash()
        hash.combine(fingerprintEncoding)
        return hash.value
    }

    /// The version of ``fingerprintEncoding``'s shape. A new version makes every existing cursor stop resuming, so
    /// it changes only when the meaning of an option that already exists changes.
    static let fingerprintVersion = 1

    /// Every option that changes the output, one `name=value` line each, in a fixed order, each value written out
    /// by hand: numbers as their shortest exact decimal, enumerations by their names, absent values as `-`. Never
    /// Swift's printed form of a struct, which changes when a field is added and would invalidate every cursor (or,
    /// with a field renamed, make two different option sets match).
    ///
    /// An option added later joins with a line that is left out while it has its default value, so cursors of
    /// layouts that do not use it stay valid; ``fingerprintExclusions`` lists the options that leave the pages
    /// alone. A test checks that every stored option is in one of the two.
    ///
    /// `maximumPages` is left out on purpose: fetching one page at a time must accept the cursors of a run that
    /// fetched many.
    package var fingerprintEncoding: String {
        var lines = ["feedlayout.options/\(Self.fingerprintVersion)"]
        func add(_ name: String, _ value: String) { lines.append(name + "=" + value) }
        func number(_ value: Double) -> String { value == 0 ? "0" : "\(value)" }
        func number(_ value: Double?) -> String { value.map(number) ?? "-" }
        func count(_ value: Int?) -> String { value.map(String.init) ?? "-" }
        func insets(_ value: Insets) -> String {
            [value.top, value.left, value.bottom, value.right].map(number).joined(separator: ",")
        }
        let w = waterfall
        add("waterfall.containerWidth", number(w.containerWidth))
        switch w.columns {
        case .fixed(let count): add("waterfall.columns", "fixed:\(count)")
        case .adaptive(let minimumWidth, let minimumColumns, let maximumColumns):
            add("waterfall.columns", "adaptive:\(number(minimumWidth)):\(minimumColumns):\(count(maximumColumns))")
        }
        add("waterfall.insets", insets(w.insets))
        add("waterfall.columnGap", number(w.columnGap))
        add("waterfall.rowGap", number(w.rowGap))
        add("waterfall.cellPadding", number(w.cellPadding))
        add("waterfall.annotationSpacing", number(w.annotationSpacing))
        add("waterfall.maximumPhotoHeight", number(w.maximumPhotoHeight))
        add("waterfall.minimumPhotoHeight", number(w.minimumPhotoHeight))
        add("waterfall.scale", number(w.scale))
        add("waterfall.direction", w.direction.rawValue)
        add("waterfall.placement", w.placement.rawValue)
        add("waterfall.orderTolerance", number(w.orderTolerance))
        add("waterfall.axis", w.axis.rawValue)
        add("waterfall.containerHeight", number(w.containerHeight))
        add("waterfall.maximumPhotoWidth", number(w.maximumPhotoWidth))
        add("waterfall.minimumPhotoWidth", number(w.minimumPhotoWidth))
        add("waterfall.sectionInsets", insets(w.sectionInsets))
        add("waterfall.decorationOutset", number(w.decorationOutset))
        // The styles' sizes and spacing; which fonts they use is the fonts' digests' to say (`LayoutFonts`), not
        // their names or the folder they were found in.
        for (role, style) in [("title", annotation.title), ("text", annotation.text)] {
            add("annotation.\(role).size", number(style.size))
            switch style.lineHeight {
            case .normal: add("annotation.\(role).lineHeight", "normal")
            case .pixels(let pixels): add("annotation.\(role).lineHeight", "px:" + number(pixels))
            case .multiple(let factor): add("annotation.\(role).lineHeight", "x:" + number(factor))
            }
            add("annotation.\(role).weight", String(style.weight))
            add("annotation.\(role).subpixelPositioning", String(style.subpixelPositioning))
            switch style.whiteSpace {
            case .normal: add("annotation.\(role).whiteSpace", "normal")
            case .preLine: add("annotation.\(role).whiteSpace", "pre-line")
            }
        }
        add("annotation.titleLines", count(annotation.titleLines))
        add("annotation.textLines", count(annotation.textLines))
        add("annotation.titleTextGap", number(annotation.titleTextGap))
        add("pagination.pageSize", count(pagination.pageSize))
        add("pagination.pageHeight", number(pagination.pageHeight))
        add("fallbackAspectRatio", number(fallbackAspectRatio))
        // Both change what a page says about its photos (placeholders; which images could be read at all).
        add("placeholders", String(placeholders))
        add("allowPrivateNetwork", String(allowPrivateNetwork))
        add("sections.headerHeight", number(sections.headerHeight))
        add("sections.footerHeight", number(sections.footerHeight))
        if let flow {
            add("flow.photoHeight", number(flow.photoHeight))
            add("flow.alignment", flow.alignment.rawValue)
            add("flow.follow", String(flow.follow))
        } else {
            add("flow", "-")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The stored options that never change a page, so the fingerprint leaves them out (with why):
    package static let fingerprintExclusions: Set<String> = [
        // How the work is done, not what it gives.
        "probeConcurrency", "probeCachePath",
        // Which images may be read; the pages of a run that could not read one say so in its warnings, and a
        // resumed run is checked against the feed's items, not against the files.
        "imageRoot",
        // Resuming page by page must accept the cursors of a run that made many pages.
        "maximumPages",
        // Each breakpoint's layout is fingerprinted as the single layout it is (`layouts`), without the list.
        "breakpoints",
        // Fonts enter by their files' digests (`LayoutFonts`), not by name, fallback list or folder.
        "annotation.title.font", "annotation.title.fallbackFonts", "annotation.title.fontDirectory",
        "annotation.text.font", "annotation.text.fallbackFonts", "annotation.text.fontDirectory",
    ]
}

/// FNV-1a, 64 bits: a hash that is the same in every process (Swift's `Hasher` is seeded per process).
struct StableHash {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    init() {}

    /// Goes on from a hash whose value was `value` (the hash's whole state is its value).
    init(continuing value: UInt64) {
        self.value = value
    }

    mutating func combine(_ text: String) {
        // Over the contiguous bytes: walking `utf8` a byte at a time cost several times the hash (every item's id
        // goes through here for the cursors).
        var text = text
        var value = self.value
        text.withUTF8 { bytes in
            for byte in bytes {
                value ^= UInt64(byte)
                value &*= 0x0000_0100_0000_01B3
            }
        }
        self.value = value
    }

    mutating func combine(_ byte: UInt8) {
        value ^= UInt64(byte)
        value &*= 0x0000_0100_0000_01B3
    }
}

/// A length as CSS writes it: whole numbers without a fraction (`236`, `12.5`). Breakpoint names, page folders,
/// summaries and previews all print lengths this way.
package func cssNumber(_ value: Double) -> String { WaterfallLimits.formatted(value) }

extension TextStyle {
    /// The CSS `font` shorthand that renders this style with these families (a quoted, comma-separated list):
    /// `700 15px/normal "A", "B"`, as the HTML preview and the web client's style sheet declare it.
    package func cssFont(families: String) -> String {
        let height =
            switch lineHeight {
            case .normal: "normal"
            case .pixels(let pixels): cssNumber(pixels) + "px"
            case .multiple(let multiple): cssNumber(multiple)
            }
        return "\(weight) \(cssNumber(size))px/\(height) \(families)"
    }
}

extension TextMeasurer {
    /// A measurer for one block of the annotation (`role`: "title" or "caption"); a font that cannot be loaded is
    /// the caller's to fix, named by its block.
    /// - Throws: `LayoutError.fontUnavailable`.
    /// - Parameter catalog: Where a process keeps the measurers it shares between layouts; `nil` makes one.
    package static func annotation(
        _ style: TextStyle, role: String, from catalog: TextMeasurerCatalog? = nil
    ) throws(LayoutError) -> TextMeasurer {
        do {
            return try catalog?.measurer(for: style) ?? TextMeasurer(style: style)
        } catch {
            throw LayoutError(.fontUnavailable, "\(role) font: \(error)")
        }
    }
}
