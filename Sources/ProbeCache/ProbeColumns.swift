import Foundation
import ImageProbe
import RemoteFetch

/// A cached probe as a row of a cache table holds it, one property per column.
///
/// The SQLite table and the PostgreSQL one keep the same columns; both caches convert through this type, so an entry
/// means the same thing whichever database holds it.
public struct ProbeColumns: Sendable, Equatable {
    /// A file's size in bytes; with ``fileModified``, the validator of a file.
    public var fileSize: Int?
    /// A file's modification time in nanoseconds.
    public var fileModified: Int64?
    /// A URL's `ETag`.
    public var entityTag: String?
    /// A URL's `Last-Modified`.
    public var lastModified: String?
    /// ``ImageFormat``'s raw value.
    public var format: String
    public var width: Int
    public var height: Int
    public var orientation: Int
    public var bytesRead: Int
    /// The header's yes-or-no facts as bits: progressive 1, interlaced 2, animated 4, CMYK 8, Apple-optimized PNG 16.
    public var flags: Int
    public var bitDepth: Int?
    /// The header's warnings, one per line.
    public var warnings: String
    /// The placeholder's average colour as `0xRRGGBBAA`; with ``placeholderHash``, the placeholder.
    public var placeholderColor: Int64?
    /// The placeholder's ThumbHash.
    public var placeholderHash: [UInt8]?
    /// ``CachedProbe/freshUntil`` in seconds since 1970.
    public var freshUntil: Double?

    /// Makes a row from its columns' values, as a database returns them.
    public init(
        fileSize: Int?, fileModified: Int64?, entityTag: String?, lastModified: String?, format: String, width: Int,
        height: Int, orientation: Int, bytesRead: Int, flags: Int, bitDepth: Int?, warnings: String,
        placeholderColor: Int64?, placeholderHash: [UInt8]?, freshUntil: Double? = nil
    ) {
        self.freshUntil = freshUntil
        self.fileSize = fileSize
        self.fileModified = fileModified
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.format = format
        self.width = width
        self.height = height
        self.orientation = orientation
        self.bytesRead = bytesRead
        self.flags = flags
        self.bitDepth = bitDepth
        self.warnings = warnings
        self.placeholderColor = placeholderColor
        self.placeholderHash = placeholderHash
    }

    /// The row that stores an entry.
    public init(_ entry: CachedProbe) {
        switch entry.validator {
        case .file(let size, let modified): (fileSize, fileModified) = (size, modified)
        case .remote(let validator): (entityTag, lastModified) = (validator.entityTag, validator.lastModified)
        }
        let info = entry.info
        format = info.format.rawValue
        width = info.width
        height = info.height
        orientation = info.orientation
        bytesRead = info.bytesRead
        flags =
            (info.isProgressive ? 1 : 0) | (info.isInterlaced ? 2 : 0) | (info.isAnimated ? 4 : 0)
            | (info.isCMYK ? 8 : 0)
            | (info.isAppleOptimizedPNG ? 16 : 0)
        bitDepth = info.bitDepth
        warnings = info.warnings.joined(separator: "\n")
        placeholderColor = entry.placeholder.map { placeholder -> Int64 in
            let c = placeholder.averageColor
            return Int64(c.red) << 24 | Int64(c.green) << 16 | Int64(c.blue) << 8 | Int64(c.alpha)
        }
        placeholderHash = entry.placeholder?.thumbHash
        freshUntil = entry.freshUntil?.timeIntervalSince1970
    }

    /// The entry the row stores; `nil` when its format is one this version does not know (a newer one wrote it).
    public var entry: CachedProbe? {
        guard let format = ImageFormat(rawValue: format) else { return nil }
        let validator: ProbeValidator
        if let fileSize, let fileModified {
            validator = .file(size: fileSize, modifiedNanoseconds: fileModified)
        } else {
            validator = .remote(RemoteValidator(entityTag: entityTag, lastModified: lastModified))
        }
        let info = ImageInfo(
            format: format, width: width, height: height, orientation: orientation, bytesRead: bytesRead,
            isProgressive: flags & 1 != 0, isInterlaced: flags & 2 != 0, isAnimated: flags & 4 != 0,
            isCMYK: flags & 8 != 0, bitDepth: bitDepth, isAppleOptimizedPNG: flags & 16 != 0,
            warnings: warnings.isEmpty
                ? [] : warnings.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        var placeholder: ImagePlaceholder?
        if let placeholderColor, let placeholderHash {
            placeholder = ImagePlaceholder(
                averageColor: PlaceholderColor(
                    red: UInt8(truncatingIfNeeded: placeholderColor >> 24),
                    green: UInt8(truncatingIfNeeded: placeholderColor >> 16),
                    blue: UInt8(truncatingIfNeeded: placeholderColor >> 8),
                    alpha: UInt8(truncatingIfNeeded: placeholderColor)),
                thumbHash: placeholderHash)
        }
        return CachedProbe(
            validator: validator, info: info, placeholder: placeholder,
            freshUntil: freshUntil.map { Date(timeIntervalSince1970: $0) })
    }
}
