import WaterfallLayout

/// What a cursor carries of an engine, whichever mode the layout uses.
package enum EngineState: Hashable, Sendable {
    case waterfall(WaterfallState)
    case flow(FlowState)

    package var nextIndex: Int {
        switch self {
        case .waterfall(let state): state.nextIndex
        case .flow(let state): state.nextIndex
        }
    }

    /// The current section's bookkeeping, which both engines keep alike.
    var section: SectionProgress {
        switch self {
        case .waterfall(let state): state.section
        case .flow(let state): state.section
        }
    }

    /// The lowest bottom so far of a cell, header or ended section.
    var contentBottom: Int {
        switch self {
        case .waterfall(let state): state.contentBottom
        case .flow(let state): state.contentBottom
        }
    }

    /// Whether the feed has opened a section (a cursor must then carry the section fields).
    var hasSections: Bool { section.begun || section.index > 0 }
}

/// The geometry of one layout of a run: what the page records describe, and the width an item's annotation is
/// measured at. Pure and `Sendable`, so the parallel half of the pipeline can use it.
package struct LayoutGeometry: Sendable {
    /// The page's grid. In flow mode a one-lane stand-in with the same container, insets and scale.
    package let grid: WaterfallGrid
    /// The flow grid, in flow mode.
    package let flowGrid: FlowGrid?
    /// On the horizontal axis every annotation gets a band of this height (device pixels): room for the most
    /// title and caption lines allowed, so the photo's width, and the width the text is measured at, are known
    /// before the text is.
    package let annotationBand: Int?
    // Fresh engines, used only for their width arithmetic.
    private let waterfall: WaterfallEngine?
    private let flow: FlowEngine?

    package init(options: LayoutOptions, annotationBand: Double?) throws(WaterfallConfigurationError) {
        if let configuration = options.flowConfiguration {
            let flow = try FlowEngine(configuration: configuration)
            var lane = options.waterfall
            lane.columns = .fixed(1)
            lane.axis = .vertical
            grid = try WaterfallGrid(lane)
            flowGrid = flow.grid
            self.flow = flow
            waterfall = nil
            self.annotationBand = nil
        } else {
            let waterfall = try WaterfallEngine(configuration: options.waterfall)
            grid = waterfall.grid
            flowGrid = nil
            self.waterfall = waterfall
            flow = nil
            let grid = waterfall.grid
            self.annotationBand =
                grid.axis == .horizontal ? annotationBand.map { grid.deviceLengthRoundingUp($0) } : nil
        }
    }

    /// The content width, in device pixels, that an item's title and caption are measured at.
    package func annotationWidth(photo: Size, span: ColumnSpan) -> Int {
        if let flow { return flow.contentWidth(for: photo) }
        if let annotationBand, let waterfall {
            return waterfall.contentWidth(
                forPhoto: photo, annotationHeight: Double(annotationBand) / grid.scale, span: span)
        }
        return grid.contentWidth(for: span)
    }

    /// A fresh engine for this layout, or one resumed from a cursor's state.
    func makeEngine(options: LayoutOptions, resumingFrom state: EngineState?) throws(WaterfallConfigurationError)
        -> LayoutEngine
    {
        switch (options.flowConfiguration, state) {
        case (let configuration?, nil):
            return LayoutEngine(flow: try FlowEngine(configuration: configuration))
        case (let configuration?, .flow(let state)?):
            return LayoutEngine(flow: try FlowEngine(configuration: configuration, resumingFrom: state))
        case (nil, nil):
            return LayoutEngine(waterfall: try WaterfallEngine(configuration: options.waterfall))
        case (nil, .waterfall(let state)?):
            return LayoutEngine(
                waterfall: try WaterfallEngine(configuration: options.waterfall, resumingFrom: state))
        default:
            throw WaterfallConfigurationError(
                option: "resume", message: "the cursor was made in the other layout mode (waterfall or flow)")
        }
    }
}

/// One layout's engine, the waterfall (either axis) or the flow rows, behind one interface: cells come out in
/// batches (one per item from the waterfall; a whole row from the flow engine when the next item starts a new
/// one), and `state` is always the state after the last cell that came out, which is where a page may end.
package struct LayoutEngine {
    // Two optionals rather than an enum: mutating through `x!.place` works in place, with no copy of the
    // engine's arrays per item.
    private var waterfall: WaterfallEngine?
    private var flow: FlowEngine?

    init(waterfall: WaterfallEngine) { self.waterfall = waterfall }
    init(flow: FlowEngine) { self.flow = flow }

    mutating func place(_ item: WaterfallItem) -> [PlacedItem] {
        if waterfall != nil { return [waterfall!.place(item)] }
        return flow!.place(item)
    }

    /// Places whatever waits in an open row (nothing for the waterfall).
    mutating func breakRow() -> [PlacedItem] {
        flow != nil ? flow!.breakRow() : []
    }

    /// Starts a section. Call `breakRow()` first: the cells of an open row belong before it.
    mutating func beginSection(header: Double) -> DeviceRect? {
        if waterfall != nil { return waterfall!.beginSection(header: header) }
        let (items, header) = flow!.beginSection(header: header)
        precondition(items.isEmpty, "beginSection with an open row")
        return header
    }

    /// Ends the current section. Call `breakRow()` first.
    mutating func endSection(footer: Double) -> SectionFrames {
        if waterfall != nil { return waterfall!.endSection(footer: footer) }
        let (items, section) = flow!.endSection(footer: footer)
        precondition(items.isEmpty, "endSection with an open row")
        return section
    }

    var state: EngineState {
        if let waterfall { return .waterfall(waterfall.state) }
        return .flow(flow!.state)
    }

    /// Whether the current section holds items or was opened by `beginSection` (ending it then means something).
    var sectionIsOpen: Bool {
        let state = state
        return state.section.begun || state.nextIndex > state.section.firstIndex
    }

    /// Where each lane's next item would start on the scroll axis: the waterfall's column heights; in flow mode
    /// the next row's top.
    var laneHeights: [Int] {
        if let waterfall { return waterfall.state.columnHeights }
        return [flow!.state.rowTop]
    }

    /// The lowest bottom so far on the scroll axis.
    var contentBottom: Int {
        if let waterfall { return waterfall.state.contentBottom }
        return flow!.state.contentBottom
    }
}
