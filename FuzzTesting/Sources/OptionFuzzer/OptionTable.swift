import FeedLayout
import WaterfallLayout

/// The options of `feedlayout layout` that shape a layout, by their CLI names, each as a setter that reads the value
/// as the CLI does and reports whether it could (the CLI refuses a value that is not a number before the library
/// sees it). Globals outside main.swift are initialised on first use.
enum OptionTable {
    typealias Setter = @Sendable (inout LayoutOptions, String) -> Bool

    static let setters: [String: Setter] = {
        var table: [String: Setter] = [:]
        func length(_ name: String, _ set: @escaping @Sendable (inout LayoutOptions, Double) -> Void) {
            table["--" + name] = { options, text in
                guard let value = Double(text) else { return false }
                set(&options, value)
                return true
            }
        }
        func count(_ name: String, _ set: @escaping @Sendable (inout LayoutOptions, Int) -> Void) {
            table["--" + name] = { options, text in
                guard let value = Int(text) else { return false }
                set(&options, value)
                return true
            }
        }
        length("width") { $0.waterfall.containerWidth = $1 }
        count("columns") { $0.waterfall.columns = .fixed($1) }
        length("min-column-width") { $0.waterfall.columns = .adaptive(minimumWidth: $1, minimumColumns: 1) }
        length("inset") { $0.waterfall.insets = Insets(top: $1, left: $1, bottom: $1, right: $1) }
        length("inset-top") { $0.waterfall.insets.top = $1 }
        length("column-gap") { $0.waterfall.columnGap = $1 }
        length("row-gap") { $0.waterfall.rowGap = $1 }
        length("cell-padding") { $0.waterfall.cellPadding = $1 }
        length("annotation-spacing") { $0.waterfall.annotationSpacing = $1 }
        length("max-photo-height") { $0.waterfall.maximumPhotoHeight = $1 }
        length("min-photo-height") { $0.waterfall.minimumPhotoHeight = $1 }
        length("scale") { $0.waterfall.scale = $1 }
        length("order-tolerance") { $0.waterfall.orderTolerance = $1 }
        length("height") { $0.waterfall.containerHeight = $1 }
        length("max-photo-width") { $0.waterfall.maximumPhotoWidth = $1 }
        length("min-photo-width") { $0.waterfall.minimumPhotoWidth = $1 }
        length("section-inset") { $0.waterfall.sectionInsets = Insets(top: $1, left: $1, bottom: $1, right: $1) }
        length("decoration-outset") { $0.waterfall.decorationOutset = $1 }
        length("fallback-aspect-ratio") { $0.fallbackAspectRatio = $1 }
        count("page-size") { $0.pagination.pageSize = $1 }
        length("page-height") { $0.pagination.pageHeight = $1 }
        count("max-pages") { $0.maximumPages = $1 }
        count("probe-concurrency") { $0.probeConcurrency = $1 }
        length("font-size") { $0.annotation.text.size = $1 }
        length("title-font-size") { $0.annotation.title.size = $1 }
        count("title-weight") { $0.annotation.title.weight = $1 }
        length("line-height") { $0.annotation.text.lineHeight = .pixels($1) }
        length("line-height-multiple") { $0.annotation.title.lineHeight = .multiple($1) }
        count("title-lines") { $0.annotation.titleLines = $1 }
        count("text-lines") { $0.annotation.textLines = $1 }
        length("title-text-gap") { $0.annotation.titleTextGap = $1 }
        length("row-photo-height") { options, value in
            options.flow = FlowSettings(photoHeight: value, alignment: .justified, follow: value.sign == .minus)
        }
        length("section-header-height") { $0.sections.headerHeight = $1 }
        length("section-footer-height") { $0.sections.footerHeight = $1 }
        table["--breakpoints"] = { options, text in
            guard let breakpoints = try? Breakpoint.parseList(text) else { return false }
            options.breakpoints = breakpoints
            return true
        }
        func choice<Value: RawRepresentable<String>>(
            _ name: String, _ set: @escaping @Sendable (inout LayoutOptions, Value) -> Void
        ) {
            table["--" + name] = { options, text in
                guard let value = Value(rawValue: text) else { return false }
                set(&options, value)
                return true
            }
        }
        choice("axis") { (options, axis: LayoutAxis) in options.waterfall.axis = axis }
        choice("placement") { (options, placement: PlacementOrder) in options.waterfall.placement = placement }
        choice("direction") { (options, direction: HorizontalDirection) in options.waterfall.direction = direction }
        choice("align") { (options, alignment: FlowAlignment) in
            options.flow = FlowSettings(photoHeight: options.flow?.photoHeight ?? 160, alignment: alignment)
        }
        table["--placeholders"] = { options, text in
            options.placeholders = text == "true"
            return true
        }
        return table
    }()
}
