import FeedIngest
import ImageProbe
import TextMeasure
import WaterfallLayout

/// Where a photo's size came from, from most to least trustworthy.
public enum PhotoSizeSource: String, Sendable, Hashable {
    /// Read from the image file's own header (EXIF orientation applied).
    case header
    /// Declared in the feed (`media:content width=… height=…`), used when the file could not be read.
    case declared
    /// Nothing known: the configured fallback aspect ratio.
    case fallback
}

/// The photo of one pin as the layout uses it.
public struct ResolvedPhoto: Sendable, Equatable {
    /// The image reference as the feed gave it (resolved), or `nil` when the item has no image.
    public var url: String?
    /// The display size (after orientation) or, for the fallback, a size with the fallback aspect ratio.
    public var size: Size
    public var sizeSource: PhotoSizeSource
    /// The header facts, when the file was probed.
    public var info: ImageInfo?
    /// What to paint before the photo arrives, when placeholders were asked for and the image could be decoded.
    public var placeholder: ImagePlaceholder?
    /// The local file whose header gave the size, as the feed reader let it through and the run's file gate
    /// opened it; `nil` for remote photos and for local references that were refused or could not be read.
    /// Previews read local photos from here only (through the same gate), never from ``url``.
    public var localPath: String?
    /// The photo's alternative text, as the feed gave it for the image used (``FeedImage/alt``).
    public var alt: String?

    /// Whether the item names an image whose size could not be read from it (missing, corrupt, refused, not
    /// reachable): a failed input, though the item is still laid out with a declared or fallback size.
    public var isUnreadImage: Bool { url != nil && sizeSource != .header }

    public init(
        url: String?, size: Size, sizeSource: PhotoSizeSource, info: ImageInfo?, placeholder: ImagePlaceholder? = nil,
        localPath: String? = nil
    ) {
        self.url = url
        self.localPath = localPath
        self.size = size
        self.sizeSource = sizeSource
        self.info = info
        self.placeholder = placeholder
    }
}

/// A measured block of the annotation (the title or the caption).
public struct MeasuredText: Sendable, Equatable {
    public var text: String
    public var measurement: TextMeasurement
    /// The block's height in device pixels, rounded up so that the text fits.
    public var deviceHeight: Int
    /// Where the block sits, once its item is placed: the title at the top of the annotation, the caption at
    /// its bottom (the title-caption gap between them).
    public var frame = DeviceRect(x: 0, y: 0, width: 0, height: 0)

    public init(text: String, measurement: TextMeasurement, deviceHeight: Int, frame: DeviceRect? = nil) {
        self.text = text
        self.measurement = measurement
        self.deviceHeight = deviceHeight
        if let frame { self.frame = frame }
    }
}

/// The measured annotation of one item at the content width of one layout.
package struct PreparedAnnotation: Sendable {
    package var title: MeasuredText?
    package var text: MeasuredText?

    package init(title: MeasuredText?, text: MeasuredText?) {
        self.title = title
        self.text = text
    }

    /// The whole annotation's height in device pixels: title, gap, caption.
    package func deviceHeight(titleTextGap: Int) -> Int {
        let title = title?.deviceHeight ?? 0
        let text = text?.deviceHeight ?? 0
        return title + text + (title > 0 && text > 0 ? titleTextGap : 0)
    }
}

/// An item with everything the engines need: the slow, parallel part of the pipeline produces these.
package struct PreparedItem: Sendable {
    package var item: FeedItem
    package var photo: ResolvedPhoto
    /// The annotation measured for each layout of the run (one per breakpoint), in the order of the layouts.
    package var annotations: [PreparedAnnotation]
    package var warnings: [FeedWarning]
    /// Time spent probing the photo and measuring the text, for the summary's time per stage.
    package var probeTime: Duration = .zero
    package var measureTime: Duration = .zero

    package init(
        item: FeedItem, photo: ResolvedPhoto, annotations: [PreparedAnnotation], warnings: [FeedWarning],
        probeTime: Duration = .zero, measureTime: Duration = .zero
    ) {
        self.item = item
        self.photo = photo
        self.annotations = annotations
        self.warnings = warnings
        self.probeTime = probeTime
        self.measureTime = measureTime
    }
}

extension SpanHint {
    /// The engine's span for the feed's hint.
    package var columnSpan: ColumnSpan {
        switch self {
        case .columns(let count): .columns(count)
        case .fullWidth: .fullWidth
        }
    }
}

extension FeedItem {
    package var columnSpan: ColumnSpan { layout.span?.columnSpan ?? .single }
}
