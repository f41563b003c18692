import Synchronization

/// Text measurers by style, for a process that lays out many feeds: a measurer opens its font files and fills
/// caches of shaped segments as it works, and every later layout with the same style reuses both.
///
/// A measurer is safe to share between concurrent tasks, and gives the same measurements however warm its caches
/// are, so sharing one changes no output.
public final class TextMeasurerCatalog: Sendable {
    private let measurers = Mutex<[TextStyle: TextMeasurer]>([:])
    private let limit: Int
    /// Whole measurements of every measurer here, under one bound: a feed laid out again (a subscription's next
    /// version) is measured from it, whatever the number of styles.
    private let measurements: MeasurementCache

    /// - Parameters:
    ///   - limit: The most styles kept; past it, the catalog starts again from empty (a server sees a handful of
    ///     styles, so this only bounds what a stream of odd options can make it hold).
    ///   - measurementBytes: What the measurers' shared ``MeasurementCache`` may hold. It keeps texts of up to
    ///     8 KiB: a server lays the same feeds out again, long captions included.
    public init(limit: Int = 64, measurementBytes: Int = 32 << 20) {
        self.limit = max(1, limit)
        measurements = MeasurementCache(byteLimit: measurementBytes, maximumTextBytes: 8_192)
    }

    /// The measurer for a style, made on first use.
    /// - Throws: ``TextMeasureError`` as ``TextMeasurer/init(style:)`` does.
    public func measurer(for style: TextStyle) throws(TextMeasureError) -> TextMeasurer {
        if let known = measurers.withLock({ $0[style] }) { return known }
        let made = try TextMeasurer(style: style, measurements: measurements)
        return measurers.withLock { measurers in
            if let raced = measurers[style] { return raced }
            if measurers.count >= limit { measurers.removeAll() }
            measurers[style] = made
            return made
        }
    }
}
