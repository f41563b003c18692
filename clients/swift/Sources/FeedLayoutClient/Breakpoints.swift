/// Which of a layout's widths to show.
///
/// A layout made with breakpoints (`--breakpoints 375:2,768:3,1280:5`, or `breakpoints` in the service's options)
/// has one layout per width; the service lists them in `Layout.layouts` and serves each with `?layout=INDEX`. The
/// choice is the reference web client's: the widest layout whose width fits the container (width at most the
/// container's, as a CSS media query measures it), else, when none fits, the narrowest.
public enum Breakpoints {
    /// The layout to show in a container `width` wide; `nil` only for an empty list.
    public static func choose(_ layouts: [LayoutSummary], forWidth width: Double) -> LayoutSummary? {
        var chosen: LayoutSummary?
        var narrowest: LayoutSummary?
        for layout in layouts {
            if narrowest == nil || layout.width < narrowest!.width { narrowest = layout }
            if layout.width <= width, chosen == nil || layout.width >= chosen!.width { chosen = layout }
        }
        return chosen ?? narrowest
    }
}
