import FeedLayout
import LayoutStore
import Synchronization
import WaterfallLayout

/// Which way `/snap` looks for a pin top from the proposed offset.
enum SnapDirection: String, Sendable {
    case forward, backward, nearest
}

/// One layout's pins, indexed for viewport queries with the engine's own index (`WaterfallIndex`: per column for
/// a vertical waterfall, by scroll position otherwise) and, for snapping, the distinct pin tops in order.
struct PinIndex: Sendable {
    var index: WaterfallIndex
    /// Pin starts on the scroll axis (device pixels), ascending, each with the first pin that starts there.
    var starts: [(offset: Int, item: Int)] = []
    var scale: Double
    /// The layout axis' scroll direction.
    var axis: LayoutAxis
    /// The next item index to load from the store.
    var loadedThrough = 0
    /// The pins as stored, from the first one indexed on (where each one's JSON sits in its page).
    var pins: [PinRecord] = []
    /// Whether the layout was done when the index was last brought up to date (no pin will join it).
    var isComplete = false

    func items(intersecting rect: DeviceRect) -> [Int] { index.items(intersecting: rect) }

    /// The stored pin of an item index, if indexed.
    func pin(forItem item: Int) -> PinRecord? {
        guard let first = pins.first, item >= first.itemIndex, item - first.itemIndex < pins.count else { return nil }
        return pins[item - first.itemIndex]
    }

    /// The pin start nearest to `offset` (device pixels) in `direction`; beyond the last or before the first,
    /// the closest there is.
    func snap(_ offset: Double, direction: SnapDirection) -> (offset: Int, item: Int)? {
        guard !starts.isEmpty else { return nil }
        // The first start at or after the offset.
        var low = 0
        var high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if Double(starts[middle].offset) < offset { low = middle + 1 } else { high = middle }
        }
        let after = low < starts.count ? starts[low] : nil
        let before: (offset: Int, item: Int)? =
            after.map { Double($0.offset) == offset } == true ? after : (low > 0 ? starts[low - 1] : nil)
        switch direction {
        case .forward: return after ?? before
        case .backward: return before ?? after
        case .nearest:
            guard let before, let after else { return before ?? after }
            // A tie goes back: the pin already partly in view.
            return offset - Double(before.offset) <= Double(after.offset) - offset ? before : after
        }
    }

    mutating func insert(_ pin: PinRecord) {
        loadedThrough = pin.itemIndex + 1
        pins.append(pin)
        let frame = DeviceRect(x: pin.x, y: pin.y, width: pin.width, height: pin.height)
        index.insert(
            PlacedItem(
                index: pin.itemIndex, column: pin.column, columnSpan: pin.columnSpan, frame: frame, photoSlot: frame,
                photoFrame: frame, annotationFrame: frame))
        let start = axis == .vertical ? pin.y : pin.x
        if let last = starts.last, last.offset >= start {
            // Pins that start at the same place or above the last (flow rows, spans): keep the list sorted.
            if last.offset == start { return }
            var low = 0
            var high = starts.count
            while low < high {
                let middle = (low + high) / 2
                if starts[middle].offset < start { low = middle + 1 } else { high = middle }
            }
            if low < starts.count, starts[low].offset == start { return }
            starts.insert((start, pin.itemIndex), at: low)
        } else {
            starts.append((start, pin.itemIndex))
        }
    }
}

/// The pin indexes of recently queried layouts, kept in memory and brought up to date with the pins stored since.
final class LayoutIndexes: Sendable {
    private let indexes = Mutex<[String: PinIndex]>([:])
    private static let limit = 32

    /// Lets go of a removed layout's indexes.
    func forget(_ id: String) {
        indexes.withLock { indexes in
            for key in indexes.keys where key.hasPrefix(id + "/") { indexes[key] = nil }
        }
    }

    func index(
        id: String, layoutIndex: Int, record: LayoutRecord, store: any LayoutStore, settings: ServiceSettings,
        resources: LayoutResources
    ) async throws -> PinIndex {
        let key = id + "/" + String(layoutIndex)
        var index: PinIndex
        if let known = indexes.withLock({ $0[key] }) {
            if known.isComplete { return known }
            index = known
        } else {
            // The grid comes from the layout's options, as the engine made it: the index then works by column.
            let options = try ClientOptions.layoutOptions(stored: record.options, settings: settings)
            let pipeline = try LayoutPipeline(options: options, resources: resources)
            let grid = pipeline.grids[layoutIndex]
            let byColumn = options.flow == nil && grid.axis == .vertical
            index = PinIndex(
                index: byColumn ? WaterfallIndex(grid: grid) : WaterfallIndex(axis: grid.axis), scale: grid.scale,
                axis: grid.axis)
        }
        let isComplete = record.status != "running"
        for pin in try await store.pins(id, layoutIndex: layoutIndex, from: index.loadedThrough) { index.insert(pin) }
        index.isComplete = isComplete
        let updated = index
        indexes.withLock { indexes in
            if indexes.count >= Self.limit, indexes[key] == nil { indexes.removeAll() }
            // Another request may have loaded further meanwhile: keep the fuller one.
            if let other = indexes[key], other.loadedThrough > updated.loadedThrough { return }
            indexes[key] = updated
        }
        return updated
    }
}
