import TextMeasure
import WaterfallLayout

/// The values one numeric option may take: what `LayoutOptions.validate()` checks, what the CLI's help shows, and
/// what a service checks its clients' options against.
public struct OptionRange<Value: Comparable & Sendable>: Sendable {
    public let bounds: ClosedRange<Value>
    /// Whether the lower bound itself is refused (a font size is above 0, not 0).
    public let excludesLowerBound: Bool
    /// The unit written after the bounds (`px`, `s`), or empty.
    public let unit: String
    private let describe: @Sendable (Value) -> String

    init(
        _ bounds: ClosedRange<Value>, excludingLowerBound: Bool = false, unit: String = "",
        describe: @escaping @Sendable (Value) -> String
    ) {
        self.bounds = bounds
        self.excludesLowerBound = excludingLowerBound
        self.unit = unit
        self.describe = describe
    }

    /// Whether the value is allowed (a NaN never is).
    public func contains(_ value: Value) -> Bool {
        bounds.contains(value) && !(excludesLowerBound && value == bounds.lowerBound)
    }

    /// The allowed values as the help and the messages say them: `from 0 to 1,000,000 px`,
    /// `above 0, at most 1,000 px`.
    public var summary: String {
        let upper = describe(bounds.upperBound) + (unit.isEmpty ? "" : " \(unit)")
        return excludesLowerBound
            ? "above \(describe(bounds.lowerBound)), at most \(upper)"
            : "from \(describe(bounds.lowerBound)) to \(upper)"
    }

    /// Checks one option's value.
    ///
    /// - Parameter option: The option as the CLI names it, without dashes (`font-size`).
    /// - Throws: `LayoutError.invalidOptions` naming the option, the value and the allowed range.
    public func check(_ value: Value, option: String) throws(LayoutError) {
        guard contains(value) else {
            throw LayoutError(
                .invalidOptions, "invalid --\(option): must be \(summary), got \(valueText(value))", option: option)
        }
    }

    private func valueText(_ value: Value) -> String {
        if let value = value as? Double { return WaterfallLimits.formatted(value) }
        return "\(value)"
    }
}

extension OptionRange where Value == Double {
    init(_ bounds: ClosedRange<Double>, excludingLowerBound: Bool = false, unit: String = "") {
        self.init(bounds, excludingLowerBound: excludingLowerBound, unit: unit, describe: WaterfallLimits.grouped)
    }
}

extension OptionRange where Value == Int {
    init(_ bounds: ClosedRange<Int>, unit: String = "") {
        self.init(bounds, unit: unit, describe: WaterfallLimits.grouped)
    }
}

/// The bounds of every numeric option, defined once: `LayoutOptions.validate()` checks them, the CLI prints them in
/// its help and refuses values outside them before any work starts, and a service hands its clients' options to
/// the same check.
///
/// They keep every computation far from overflow and every run within bounded memory (a million-pixel width with
/// a 1-pixel minimum column width would otherwise ask for a million columns). The engine's own bounds (lengths,
/// columns, scale) are ``WaterfallLimits``'.
public enum OptionLimits {
    /// Every length in CSS pixels: width, height, insets, gaps, padding, photo limits, tolerance, section bands,
    /// page height, row photo height.
    public static let length: OptionRange<Double> = OptionRange(0...WaterfallLimits.maximumLength, unit: "px")
    /// Lengths that must be above 0: the page height, the row photo height.
    public static let positiveLength: OptionRange<Double> = OptionRange(
        0...WaterfallLimits.maximumLength, excludingLowerBound: true, unit: "px")
    /// Column counts: `--columns`, `--min-columns`, `--max-columns`, a breakpoint's columns.
    public static let columns: OptionRange<Int> = OptionRange(1...WaterfallLimits.maximumColumns)
    /// Device pixels per CSS pixel.
    public static let scale: OptionRange<Double> = OptionRange(
        WaterfallLimits.minimumScale...WaterfallLimits.maximumScale)
    /// Font sizes in pixels.
    public static let fontSize: OptionRange<Double> = OptionRange(0...1_000, excludingLowerBound: true, unit: "px")
    /// Font weights, as CSS `font-weight` allows them.
    public static let fontWeight: OptionRange<Int> = OptionRange(1...1_000)
    /// `--line-height` in pixels.
    public static let lineHeightPixels: OptionRange<Double> = OptionRange(
        0...10_000, excludingLowerBound: true, unit: "px")
    /// `--line-height` as a multiple of the font size.
    public static let lineHeightMultiple: OptionRange<Double> = OptionRange(0...100, excludingLowerBound: true)
    /// Title and caption line limits (0 leaves the block out).
    public static let lineCount: OptionRange<Int> = OptionRange(0...1_000)
    /// `measure --max-lines`.
    public static let measuredLines: OptionRange<Int> = OptionRange(1...1_000)
    /// Items per page.
    public static let pageSize: OptionRange<Int> = OptionRange(1...100_000)
    /// Pages written before a run stops (`--max-pages`).
    public static let pageCount: OptionRange<Int> = OptionRange(1...1_000_000_000)
    /// Width ÷ height of the photos whose size is unknown.
    public static let aspectRatio: OptionRange<Double> = OptionRange(0.01...100)
    /// Images probed, or requests made, at once.
    public static let concurrency: OptionRange<Int> = OptionRange(1...1_024)
    /// Layouts made from one pass (`--breakpoints`): each costs a layout's memory and measuring.
    public static let breakpoints: OptionRange<Int> = OptionRange(1...32)

    // The preview's and the probe's own options.

    /// `preview.png`'s height (its width on the horizontal axis) in device pixels.
    public static let previewHeight: OptionRange<Int> = OptionRange(1...100_000, unit: "px")
    /// Pages drawn into `preview.png`.
    public static let previewPages: OptionRange<Int> = OptionRange(1...1_000)
    /// Pixels an image may have to be decoded (`--pixel-budget`).
    public static let pixelBudget: OptionRange<Int> = OptionRange(1...1_000_000_000)
    /// Scans a progressive JPEG may have (`--max-scans`; 0 for no limit).
    public static let jpegScans: OptionRange<Int> = OptionRange(0...10_000)
    /// Timeouts of a fetch, in seconds.
    public static let timeout: OptionRange<Double> = OptionRange(0...3_600, excludingLowerBound: true, unit: "s")
    /// Redirects followed by one fetch.
    public static let redirects: OptionRange<Int> = OptionRange(0...20)
    /// Bytes read from one URL: 4 GiB, the most any input is read.
    public static let fetchBytes: OptionRange<Int> = OptionRange(1...(1 << 32))
}

extension LayoutOptions {
    /// Checks every option against its bound (``OptionLimits``) and against the others, without loading fonts or
    /// reading anything: a service can check its clients' options with it before accepting them.
    ///
    /// - Throws: `LayoutError.invalidOptions` naming the option (``LayoutError/option``), its value and what is
    ///   allowed.
    public func validate() throws(LayoutError) {
        let limits = OptionLimits.self
        try limits.concurrency.check(probeConcurrency, option: "probe-concurrency")
        try limits.aspectRatio.check(fallbackAspectRatio, option: "fallback-aspect-ratio")
        if let pageSize = pagination.pageSize { try limits.pageSize.check(pageSize, option: "page-size") }
        if let pageHeight = pagination.pageHeight { try limits.positiveLength.check(pageHeight, option: "page-height") }
        if let maximumPages { try limits.pageCount.check(maximumPages, option: "max-pages") }
        try validateAnnotation()
        try limits.length.check(sections.headerHeight, option: "section-header-height")
        try limits.length.check(sections.footerHeight, option: "section-footer-height")
        if flow != nil, waterfall.axis == .horizontal {
            throw LayoutError(
                .invalidOptions, "--mode flow lays rows out vertically: leave out --axis horizontal", option: "axis")
        }
        if !breakpoints.isEmpty {
            try limits.breakpoints.check(breakpoints.count, option: "breakpoints")
            if flow != nil, breakpoints.contains(where: { $0.columns != 1 }) {
                throw LayoutError(
                    .invalidOptions,
                    "--breakpoints in flow mode: give widths with 1 column (e.g. 375:1,768:1); rows have no columns",
                    option: "breakpoints")
            }
            if waterfall.axis == .horizontal {
                throw LayoutError(
                    .invalidOptions, "--breakpoints vary the width: they do not apply to --axis horizontal",
                    option: "breakpoints")
            }
        }
        if waterfall.axis == .horizontal, annotation.titleLines == nil || annotation.textLines == nil {
            throw LayoutError(
                .invalidOptions,
                "--axis horizontal reserves a band for the annotation: it needs title and caption line limits",
                option: annotation.titleLines == nil ? "title-lines" : "text-lines")
        }
        // The engines check their own configuration (``WaterfallLimits``).
        _ = try geometries(annotationBand: nil)
    }

    /// The geometry of each layout of the run (``layouts``).
    ///
    /// - Parameter annotationBand: The horizontal axis' annotation band in CSS pixels (see `LayoutGeometry`).
    /// - Throws: `LayoutError.invalidOptions` naming the option (and the breakpoint) the engine refuses.
    package func geometries(annotationBand: Double?) throws(LayoutError) -> [LayoutGeometry] {
        var geometries: [LayoutGeometry] = []
        for (layout, breakpoint) in zip(layouts, breakpoints.map(Optional.some) + [nil]) {
            do {
                geometries.append(try LayoutGeometry(options: layout, annotationBand: annotationBand))
            } catch {
                throw LayoutError(
                    .invalidOptions, (breakpoint.map { "--breakpoints \($0): " } ?? "") + error.description,
                    option: breakpoint == nil ? error.option : "breakpoints")
            }
        }
        return geometries
    }

    private func validateAnnotation() throws(LayoutError) {
        let limits = OptionLimits.self
        try annotation.title.validate(optionPrefix: "title-")
        try annotation.text.validate()
        if let titleLines = annotation.titleLines { try limits.lineCount.check(titleLines, option: "title-lines") }
        if let textLines = annotation.textLines { try limits.lineCount.check(textLines, option: "text-lines") }
        try limits.length.check(annotation.titleTextGap, option: "title-text-gap")
    }
}

extension TextStyle {
    /// Checks the size, weight and line height against their bounds (``OptionLimits``).
    ///
    /// - Parameter optionPrefix: What the CLI puts before the options' names for this style (`title-`).
    /// - Throws: `LayoutError.invalidOptions` naming the option.
    public func validate(optionPrefix: String = "") throws(LayoutError) {
        try OptionLimits.fontSize.check(size, option: optionPrefix + "font-size")
        try OptionLimits.fontWeight.check(weight, option: optionPrefix + "weight")
        switch lineHeight {
        case .normal: break
        case .pixels(let pixels): try OptionLimits.lineHeightPixels.check(pixels, option: "line-height")
        case .multiple(let multiple): try OptionLimits.lineHeightMultiple.check(multiple, option: "line-height")
        }
    }
}
