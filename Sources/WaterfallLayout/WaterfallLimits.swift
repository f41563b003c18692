/// The bounds every configuration value and every resumed state is checked against.
///
/// They keep all of the engine's integer arithmetic far from `Int`'s range, so no configuration, feed or resume
/// state can make it trap or wrap: every length is at most ``maximumLength`` CSS pixels and ``maximumScale`` device
/// pixels each, so a device length stays below 2^24; positions on the scroll axis stay at or below
/// ``maximumCoordinate`` (2^53 − 1, the largest integer a JSON number carries exactly), so adding a handful of
/// lengths to one never leaves `Int`.
public enum WaterfallLimits {
    /// The longest length in CSS pixels: the container's width or height, an inset, a gap, a padding, a photo limit,
    /// a tolerance.
    public static let maximumLength: Double = 1_000_000
    /// The most columns (rows on the horizontal axis).
    public static let maximumColumns = 1_000
    /// The fewest device pixels per CSS pixel.
    public static let minimumScale: Double = 0.1
    /// The most device pixels per CSS pixel.
    public static let maximumScale: Double = 16
    /// The furthest position on the scroll axis, in device pixels: 2^53 − 1 (JavaScript's
    /// `Number.MAX_SAFE_INTEGER`). A photo is never taller than this, and a layout that grows past it stops
    /// (the page assembler checks the content bottom after each placement).
    public static let maximumCoordinate = (1 << 53) - 1

    /// Checks the scale.
    ///
    /// - Throws: `WaterfallConfigurationError` (option `scale`) when it is not a number within
    ///   ``minimumScale``...``maximumScale``.
    static func checkScale(_ scale: Double) throws(WaterfallConfigurationError) {
        guard scale >= minimumScale, scale <= maximumScale else {
            throw WaterfallConfigurationError(
                option: "scale",
                message: "must be a number from \(grouped(minimumScale)) to \(grouped(maximumScale)), got "
                    + formatted(scale))
        }
    }

    /// A length in CSS pixels in whole device pixels, rounded to the nearest (halves away from zero).
    ///
    /// - Throws: `WaterfallConfigurationError` naming `option` when the length is not a number from 0 to
    ///   ``maximumLength``.
    static func deviceLength(_ value: Double, scale: Double, option: String) throws(WaterfallConfigurationError)
        -> Int
    {
        guard value >= 0, value <= maximumLength else {
            throw WaterfallConfigurationError(
                option: option,
                message: "must be a length from 0 to \(grouped(maximumLength)) px, got \(formatted(value))")
        }
        return Int((value * scale).rounded(.toNearestOrAwayFromZero))
    }

    /// Checks a column count (a row count on the horizontal axis).
    ///
    /// - Throws: `WaterfallConfigurationError` naming `option` when the count is not within 1...``maximumColumns``.
    static func checkColumns(_ count: Int, option: String) throws(WaterfallConfigurationError) {
        guard count >= 1, count <= maximumColumns else {
            throw WaterfallConfigurationError(
                option: option, message: "must be from 1 to \(grouped(maximumColumns)), got \(count)")
        }
    }

    /// Whether a resumed state's position lies within the coordinates a layout can reach.
    public static func isCoordinate(_ value: Int) -> Bool { value >= 0 && value <= maximumCoordinate }

    /// A device length for a length in CSS pixels rounded up, capped at ``maximumCoordinate``; 0 for anything not
    /// above 0.
    static func deviceLengthRoundingUp(_ cssPixels: Double, scale: Double) -> Int {
        guard cssPixels.isFinite, cssPixels > 0 else { return 0 }
        // The small allowance keeps 17.000000000000004 from becoming 18.
        return Int(min((cssPixels * scale - 1e-7).rounded(.up), Double(maximumCoordinate)))
    }

    /// A device length from a computed one (a fitted photo's height), rounded to the nearest and capped at
    /// ``maximumCoordinate``: an image declared 1 px wide and 2^62 px tall must not trap the conversion.
    static func cappedDeviceLength(_ value: Double) -> Int {
        guard value > 0 else { return 0 }
        return Int(min(value, Double(maximumCoordinate)).rounded(.toNearestOrAwayFromZero))
    }

    /// A value as it was given: `1024`, `0.1`, `1e+300`, `nan`.
    package static func formatted(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    /// A bound as people read it, thousands grouped: `1,000,000`, `0.1`, `16`.
    package static func grouped(_ value: Double) -> String {
        guard value == value.rounded(), abs(value) < 1e15 else { return String(value) }
        return grouped(Int(value))
    }

    /// An integer bound, thousands grouped: `100,000`.
    package static func grouped(_ value: Int) -> String {
        var digits = String(value.magnitude)
        var index = digits.endIndex
        while digits.distance(from: digits.startIndex, to: index) > 3 {
            index = digits.index(index, offsetBy: -3)
            digits.insert(",", at: index)
        }
        return (value < 0 ? "-" : "") + digits
    }
}
