import Foundation
import TextMeasure
import WaterfallLayout

/// The layout options as a person or a program names them: one field per `feedlayout layout` option, by its long
/// name in camelCase (`rowGap` for `--row-gap`), with the command's defaults. ``options(fontDirectory:)`` turns them
/// into ``LayoutOptions`` with every check and message of the command.
///
/// The command line fills these fields from its arguments; the service fills them from a request's `options`
/// object (``init(named:)``) and keeps that object as its stored form (``storedJSON(_:)``). Neither goes through the
/// other: the command line is one way of naming these values, JSON another.
///
/// What the environment decides rather than the layout (the probe cache, which folders photos may come from, how
/// many probes run at once, the address policy, a page limit) is not here: the caller sets it on the result.
public struct LayoutOptionValues: Sendable, Hashable {
    // Grid.
    public var width: Double = 1024
    public var columns: Int?
    public var minColumnWidth: Double = 236
    public var minColumns = 2
    public var maxColumns: Int?
    public var gutter: Double = 16
    public var rowGap: Double = 16
    /// One length for every side, or four: `top,left,bottom,right`.
    public var inset = "16"
    public var cellPadding: Double = 0
    public var annotationSpacing: Double = 8
    public var maxPhotoHeight: Double?
    public var minPhotoHeight: Double = 0
    public var scale: Double = 1
    public var rightToLeft = false
    public var placement: PlacementOrder = .shortestFirst
    public var orderTolerance: OrderTolerance = .pixels(0)
    public var fallbackAspectRatio: Double = 1
    /// `WIDTH:COLUMNS,…`.
    public var breakpoints: String?
    // Flow, horizontal axis and sections.
    public var mode: LayoutMode = .waterfall
    public var rowPhotoHeight: Double = 160
    public var align: FlowAlignment = .start
    public var follow = false
    public var axis: LayoutAxis = .vertical
    public var height: Double?
    public var maxPhotoWidth: Double?
    public var minPhotoWidth: Double = 0
    public var sectionHeaderHeight: Double = 0
    public var sectionFooterHeight: Double = 0
    public var sectionInset = "0"
    public var decorationOutset: Double = 0
    // Text.
    public var font = "DejaVu Sans"
    public var titleFont: String?
    /// The fonts behind the primary one (`--fallback-font`, repeated); empty for the standard list.
    public var fallbackFont: [String] = []
    public var noFallbackFonts = false
    public var fontSize: Double = 13
    public var titleFontSize: Double = 15
    public var titleWeight = 700
    /// `normal`, pixels (`20`, `20px`) or a multiple (`1.4x`).
    public var lineHeight = "normal"
    public var titleLines = 2
    public var textLines = 3
    public var titleTextGap: Double = 4
    // Pages and photos.
    public var pageSize: Int?
    public var pageHeight: Double?
    public var placeholders = false

    public init() {}

    /// The options these values describe, checked: the forms of insets, breakpoints and line heights, the options
    /// that go together, and every bound of ``OptionLimits`` (``LayoutOptions/validate()``).
    /// - Parameter fontDirectory: The only folder font family names are looked up in (`--font-dir`), or `nil` for
    ///   the machine's fonts.
    /// - Throws: ``LayoutError`` `invalidOptions`, naming the option as the command does (`--row-gap`).
    public func options(fontDirectory: String? = nil) throws(LayoutError) -> LayoutOptions {
        let insets = try Self.insets(inset, option: "inset")
        let breakpointList = try breakpoints.map { text throws(LayoutError) in try Breakpoint.parseList(text) } ?? []
        let parsedLineHeight = try LineHeight(parsing: lineHeight)
        let sectionInsets = try Self.insets(sectionInset, option: "section-inset")
        if axis == .horizontal, height == nil {
            throw LayoutError(.invalidOptions, "--axis horizontal needs --height", option: "height")
        }
        if axis == .vertical, height != nil || maxPhotoWidth != nil || minPhotoWidth != 0 {
            throw LayoutError(
                .invalidOptions, "--height, --max-photo-width and --min-photo-width are for --axis horizontal",
                option: height != nil ? "height" : maxPhotoWidth != nil ? "max-photo-width" : "min-photo-width")
        }
        if mode == .waterfall, align != .start || follow || rowPhotoHeight != 160 {
            throw LayoutError(
                .invalidOptions, "--align, --follow and --row-photo-height are for --mode flow",
                option: align != .start ? "align" : follow ? "follow" : "row-photo-height")
        }
        if noFallbackFonts && !fallbackFont.isEmpty {
            throw LayoutError(
                .invalidOptions, "--no-fallback-fonts and --fallback-font exclude each other", option: "fallback-font")
        }
        var waterfall = WaterfallConfiguration(
            containerWidth: width,
            columns: columns.map { .fixed($0) }
                ?? .adaptive(minimumWidth: minColumnWidth, minimumColumns: minColumns, maximumColumns: maxColumns),
            insets: insets, columnGap: gutter, rowGap: rowGap, cellPadding: cellPadding,
            annotationSpacing: annotationSpacing, maximumPhotoHeight: maxPhotoHeight,
            minimumPhotoHeight: minPhotoHeight, scale: scale, direction: rightToLeft ? .rightToLeft : .leftToRight,
            placement: placement, orderTolerance: orderTolerance.pixels(em: fontSize))
        waterfall.axis = axis
        waterfall.containerHeight = height
        waterfall.maximumPhotoWidth = maxPhotoWidth
        waterfall.minimumPhotoWidth = minPhotoWidth
        waterfall.sectionInsets = sectionInsets
        waterfall.decorationOutset = decorationOutset
        let fallbacks = noFallbackFonts ? [] : fallbackFont.isEmpty ? TextStyle.standardFallbackFonts : fallbackFont
        func style(_ font: String, size: Double, weight: Int) -> TextStyle {
            var style = TextStyle(font: font, size: size, lineHeight: parsedLineHeight, weight: weight)
            style.fallbackFonts = fallbacks
            style.fontDirectory = fontDirectory
            return style
        }
        var options = LayoutOptions(
            waterfall: waterfall,
            annotation: AnnotationStyle(
                title: style(titleFont ?? font, size: titleFontSize, weight: titleWeight),
                text: style(font, size: fontSize, weight: 400),
                titleLines: titleLines, textLines: textLines, titleTextGap: titleTextGap),
            pagination: PaginationRule(pageSize: pageSize ?? (pageHeight == nil ? 50 : nil), pageHeight: pageHeight),
            fallbackAspectRatio: fallbackAspectRatio, placeholders: placeholders, breakpoints: breakpointList,
            sections: SectionStyle(headerHeight: sectionHeaderHeight, footerHeight: sectionFooterHeight))
        if mode == .flow {
            options.flow = FlowSettings(photoHeight: rowPhotoHeight, alignment: align, follow: follow)
        }
        try options.validate()
        return options
    }

    /// Insets written as one length for every side, or four: top,left,bottom,right.
    static func insets(_ text: String, option: String) throws(LayoutError) -> Insets {
        let parts = text.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        guard parts.allSatisfy({ $0 != nil }), parts.count == 1 || parts.count == 4 else {
            throw LayoutError(
                .invalidOptions, "--\(option) takes one length or four (top,left,bottom,right), got '\(text)'",
                option: option)
        }
        let values = parts.map { $0! }
        return values.count == 1
            ? Insets(all: values[0]) : Insets(top: values[0], left: values[1], bottom: values[2], right: values[3])
    }
}

/// Columns of pins (the waterfall) or rows of pins as wide as their photos (flow).
public enum LayoutMode: String, Sendable, Hashable, CaseIterable {
    case waterfall
    case flow
}

/// How far above the shortest a column may be and still be taken for reading order: a length in pixels, or
/// `normal`, which is CSS `flow-tolerance: normal`: 1em, where the em is the caption font size (a grid-lanes
/// container styled with the caption font resolves it the same way).
public enum OrderTolerance: Sendable, Hashable {
    case pixels(Double)
    case normal

    /// Reads `normal`, or pixels (`12`, `12px`); `nil` for anything else.
    public init?(text: String) {
        let value = text.trimmingCharacters(in: .whitespaces).lowercased()
        if value == "normal" {
            self = .normal
        } else if let pixels = Double(value.hasSuffix("px") ? String(value.dropLast(2)) : value) {
            self = .pixels(pixels)
        } else {
            return nil
        }
    }

    public func pixels(em: Double) -> Double {
        switch self {
        case .pixels(let pixels): pixels
        case .normal: em
        }
    }

    /// As the options write it: `normal`, or the pixels.
    public var text: String {
        switch self {
        case .pixels(let pixels): "\(pixels)"
        case .normal: "normal"
        }
    }
}

extension LineHeight {
    /// Reads `normal`, pixels (`20`, `20px`) or a multiple (`1.4x`), as `--line-height` takes it.
    /// - Throws: ``LayoutError`` `invalidOptions` naming `--line-height` and the text.
    public init(parsing text: String) throws(LayoutError) {
        let value = text.trimmingCharacters(in: .whitespaces).lowercased()
        if value == "normal" {
            self = .normal
            return
        }
        if value.hasSuffix("x"), let multiple = Double(value.dropLast()), multiple > 0 {
            self = .multiple(multiple)
            return
        }
        let pixels = value.hasSuffix("px") ? Double(value.dropLast(2)) : Double(value)
        if let pixels, pixels > 0 {
            self = .pixels(pixels)
            return
        }
        throw LayoutError(
            .invalidOptions,
            "--line-height takes 'normal', pixels ('20', '20px') or a multiple ('1.4x'), got '\(text)'",
            option: "line-height")
    }
}

extension PlacementOrder {
    /// The orders as the options spell them, in kebab case: `shortest-first`, `left-to-right`, `right-to-left`,
    /// `grid-lanes`.
    public var optionName: String {
        switch self {
        case .shortestFirst: "shortest-first"
        case .leftToRight: "left-to-right"
        case .rightToLeft: "right-to-left"
        case .gridLanes: "grid-lanes"
        }
    }
}

extension FlowAlignment {
    /// The alignments as the options spell them, in kebab case: `data-end`.
    public var optionName: String { self == .dataEnd ? "data-end" : rawValue }
}
