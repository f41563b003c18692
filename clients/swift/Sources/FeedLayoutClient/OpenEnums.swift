/// The page's descriptive enums (a direction, a placement, a flow alignment, where a photo's size came from, a photo
/// format). A value this client does not know yet, which a later minor revision of `feedlayout.page/1` may add, is
/// kept as `.other(value)` and written back as it came: nothing the client computes depends on these members, so
/// such a page is still shown. (The members the client's geometry depends on, `layout.mode`, `layout.axis` and a
/// section event's `event`, are strict: an unknown value there fails decoding, naming the member.)
public protocol OpenStringEnum: RawRepresentable, Codable, Hashable, Sendable where RawValue == String {
    /// The values `feedlayout.page/1` names.
    static var knownCases: [Self] { get }
}

extension OpenStringEnum {
    /// Whether the value is one `feedlayout.page/1` names (not an `.other`).
    public var isKnown: Bool { Self.knownCases.contains(self) }
}

/// `layout.direction`: the order columns are numbered in.
public enum Direction: OpenStringEnum {
    case leftToRight, rightToLeft
    case other(String)

    public static let knownCases: [Direction] = [.leftToRight, .rightToLeft]
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }
    public var rawValue: String {
        switch self {
        case .leftToRight: "leftToRight"
        case .rightToLeft: "rightToLeft"
        case .other(let value): value
        }
    }
}

/// `layout.placement`: which column the next pin goes into.
public enum Placement: OpenStringEnum {
    case shortestFirst, leftToRight, rightToLeft, gridLanes
    case other(String)

    public static let knownCases: [Placement] = [.shortestFirst, .leftToRight, .rightToLeft, .gridLanes]
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }
    public var rawValue: String {
        switch self {
        case .shortestFirst: "shortestFirst"
        case .leftToRight: "leftToRight"
        case .rightToLeft: "rightToLeft"
        case .gridLanes: "gridLanes"
        case .other(let value): value
        }
    }
}

/// `layout.alignment` (flow): how a row's pins sit in the row.
public enum Alignment: OpenStringEnum {
    case start, end, dataEnd, center, justified
    case other(String)

    public static let knownCases: [Alignment] = [.start, .end, .dataEnd, .center, .justified]
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }
    public var rawValue: String {
        switch self {
        case .start: "start"
        case .end: "end"
        case .dataEnd: "dataEnd"
        case .center: "center"
        case .justified: "justified"
        case .other(let value): value
        }
    }
}

/// `photo.sizeFrom`: where the photo's size came from.
public enum SizeSource: OpenStringEnum {
    /// The image file's header.
    case header
    /// The size the feed declared.
    case declared
    /// The fallback aspect ratio (the photo could not be read).
    case fallback
    case other(String)

    public static let knownCases: [SizeSource] = [.header, .declared, .fallback]
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }
    public var rawValue: String {
        switch self {
        case .header: "header"
        case .declared: "declared"
        case .fallback: "fallback"
        case .other(let value): value
        }
    }
}

/// `photo.format`: the image file's format, when the file was read.
public enum PhotoFormat: OpenStringEnum {
    case jpeg, png, gif, webp, bmp
    case other(String)

    public static let knownCases: [PhotoFormat] = [.jpeg, .png, .gif, .webp, .bmp]
    public init(rawValue: String) {
        self = Self.knownCases.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }
    public var rawValue: String {
        switch self {
        case .jpeg: "jpeg"
        case .png: "png"
        case .gif: "gif"
        case .webp: "webp"
        case .bmp: "bmp"
        case .other(let value): value
        }
    }
}
