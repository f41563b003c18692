import Foundation

/// A layout and how far it has got: the service's answer to `GET /v1/layouts/{id}` (and `POST /v1/layouts`),
/// schema `Layout` of `schemas/feedlayout-service.openapi.yaml`. Counts grow while `status` is `running`.
public struct LayoutStatus: Codable, Hashable, Sendable {
    /// `status`. Strict: an unknown status fails decoding, since the loader's logic depends on it.
    public enum Status: String, Codable, Hashable, Sendable {
        /// Pages are still being computed.
        case running
        /// The last page is stored.
        case done
        /// The layout stopped on an error (see `error`).
        case failed
    }

    /// 32 lowercase hex digits.
    public var id: String
    public var status: Status
    /// Pins laid out so far.
    public var items: Int
    /// Pages stored so far (of every width together; `layouts` has each width's).
    public var pages: Int
    /// How many times each warning code occurred so far.
    public var warnings: [String: Int]
    /// Why the layout failed; only when `status` is `failed`.
    public var error: LayoutFailure?
    /// One entry per width (one without breakpoints), in the order of the `layout` query parameter.
    public var layouts: [LayoutSummary]
    public var links: Links

    public init(
        id: String, status: Status, items: Int, pages: Int, warnings: [String: Int] = [:], error: LayoutFailure? = nil,
        layouts: [LayoutSummary], links: Links
    ) {
        self.id = id
        self.status = status
        self.items = items
        self.pages = pages
        self.warnings = warnings
        self.error = error
        self.layouts = layouts
        self.links = links
    }

    /// The breakpoint to show in a container `width` wide (CSS pixels, points on iOS): see ``Breakpoints/choose(_:forWidth:)``.
    public func breakpoint(forWidth width: Double) -> LayoutSummary? {
        Breakpoints.choose(layouts, forWidth: width)
    }

    /// Why a layout failed.
    public struct LayoutFailure: Codable, Hashable, Sendable {
        public var code: String
        public var message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// `links`: paths on the service.
    public struct Links: Codable, Hashable, Sendable {
        /// `self`: the layout's own path, `/v1/layouts/{id}`.
        public var layout: String
        /// The first page, `/v1/layouts/{id}/pages/0`.
        public var pages: String

        public init(layout: String, pages: String) {
            self.layout = layout
            self.pages = pages
        }

        enum CodingKeys: String, CodingKey {
            case layout = "self"
            case pages
        }
    }
}

/// One width of a layout (one breakpoint).
public struct LayoutSummary: Codable, Hashable, Sendable {
    /// The value of the `layout` query parameter that selects this width.
    public var index: Int
    /// The container width, CSS px.
    public var width: Double
    public var columns: Int
    /// Pages of this width stored so far.
    public var pages: Int
    /// The last stored page's `contentHeight` (0 before any page).
    public var contentHeight: Double

    public init(index: Int, width: Double, columns: Int, pages: Int, contentHeight: Double) {
        self.index = index
        self.width = width
        self.columns = columns
        self.pages = pages
        self.contentHeight = contentHeight
    }
}

/// An RFC 9457 problem, as the service answers every error (`application/problem+json`).
public struct Problem: Codable, Hashable, Sendable, CustomStringConvertible {
    /// Which problem, e.g. `urn:feedlayout:problem:page-not-ready`: stable, so branch on it.
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// The option or query parameter at fault.
    public var field: String?
    /// `page-not-ready` only: `running`, the page will come.
    public var layoutStatus: String?
    /// The answer's `X-Request-Id`.
    public var requestId: String?

    public init(
        type: String, title: String, status: Int, detail: String, field: String? = nil, layoutStatus: String? = nil,
        requestId: String? = nil
    ) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.field = field
        self.layoutStatus = layoutStatus
        self.requestId = requestId
    }

    public var description: String { "\(status) \(type): \(detail)" }
}

/// `GET /v1/layouts/{id}/items`: the pins whose frames intersect a rectangle, in feed order.
public struct ItemsInRect: Codable, Hashable, Sendable {
    public var items: [Item]

    public init(items: [Item]) { self.items = items }
}

/// Where a scroll should come to rest (`GET /v1/layouts/{id}/snap`): the pin top to stop at and the pin there.
public struct SnapTarget: Codable, Hashable, Sendable {
    /// The scroll offset to rest at, CSS px, on the layout's scroll axis.
    public var offset: Double
    /// The feed index of the pin that starts at `offset` (the first one, when several do).
    public var index: Int

    public init(offset: Double, index: Int) {
        self.offset = offset
        self.index = index
    }
}

/// Which way to look for a resting point from a proposed scroll offset.
public enum SnapDirection: String, Codable, Hashable, Sendable, CaseIterable {
    /// The next pin top at or after the offset (the last one beyond the end).
    case forward
    /// The pin top at or before it (the first one before the start).
    case backward
    /// The closer of the two; a tie goes back, to the pin already partly in view.
    case nearest
}
