/// A size in CSS pixels.
public struct Size: Sendable, Hashable {
    public var width: Double
    public var height: Double

    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

/// A rectangle in CSS pixels, origin at the top left, y growing downwards.
public struct Rect: Sendable, Hashable {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var minX: Double { x }
    public var minY: Double { y }
    public var maxX: Double { x + width }
    public var maxY: Double { y + height }

    /// Whether the two rectangles share interior area (touching edges do not count).
    public func overlaps(_ other: Rect) -> Bool {
        minX < other.maxX && other.minX < maxX && minY < other.maxY && other.minY < maxY
    }
}

/// Insets in CSS pixels.
public struct Insets: Sendable, Hashable {
    public var top: Double
    public var left: Double
    public var bottom: Double
    public var right: Double

    public init(top: Double = 0, left: Double = 0, bottom: Double = 0, right: Double = 0) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }

    /// The same inset on all four sides.
    public init(all value: Double) {
        self.init(top: value, left: value, bottom: value, right: value)
    }
}

/// A rectangle in whole device pixels: the unit the engine computes in, so that rounding happens once
/// per length and never accumulates.
public struct DeviceRect: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }

    /// The rectangle in CSS pixels at `scale` device pixels per CSS pixel.
    public func inCSSPixels(scale: Double) -> Rect {
        Rect(x: Double(x) / scale, y: Double(y) / scale, width: Double(width) / scale, height: Double(height) / scale)
    }
}

/// Fits a rectangle of the given aspect ratio inside `bounds`: same aspect ratio, as large as fits, centred.
///
/// This is exactly AVFoundation's `AVMakeRectWithAspectRatioInsideRect`, which the PinterestLayout tutorial
/// uses for photo heights. A degenerate aspect ratio (zero or non-finite) yields a zero-sized rectangle at the
/// centre, as AVFoundation does.
///
/// - Parameters:
///   - aspectRatio: Any size with the wanted proportions (for example the image's display size).
///   - bounds: The rectangle to fit into. Its height may be `.infinity`; the result then has the full width.
/// - Returns: The fitted rectangle.
public func aspectFit(_ aspectRatio: Size, inside bounds: Rect) -> Rect {
    guard aspectRatio.width > 0, aspectRatio.height > 0, aspectRatio.width.isFinite, aspectRatio.height.isFinite
    else {
        return Rect(x: bounds.x + bounds.width / 2, y: bounds.y + bounds.height / 2, width: 0, height: 0)
    }
    let factor = min(bounds.width / aspectRatio.width, bounds.height / aspectRatio.height)
    let width = aspectRatio.width * factor
    let height = aspectRatio.height * factor
    let y = bounds.height.isFinite ? bounds.y + (bounds.height - height) / 2 : bounds.y
    return Rect(x: bounds.x + (bounds.width - width) / 2, y: y, width: width, height: height)
}
