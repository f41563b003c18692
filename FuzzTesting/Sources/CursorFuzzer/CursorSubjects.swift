import FeedLayout
import Foundation
import LayoutFuzzSupport

/// A layout of `TinyFeed`, laid out whole once: its pages and the cursors they carry.
struct CursorSubject {
    let pipeline: LayoutPipeline
    let pages: [LayoutPage]
    let cursors: [String]

    init(_ options: LayoutOptions) {
        pipeline = try! LayoutPipeline(options: options)
        guard case .pages(let pages) = pipeline.layOutTinyFeed() else { fatalError("the tiny feed does not lay out") }
        self.pages = pages
        cursors = pages.compactMap(\.cursor)
        precondition(cursors.count >= 2, "the tiny feed must make several pages")
    }
}

/// The layouts every input is tried against (globals outside main.swift are initialised on first use).
let subjects: [CursorSubject] = {
    var waterfall = LayoutOptions(pagination: PaginationRule(pageSize: 3))
    waterfall.waterfall.columns = .fixed(3)
    var flow = LayoutOptions(pagination: PaginationRule(pageSize: 4))
    flow.flow = FlowSettings(photoHeight: 120, alignment: .start, follow: true)
    flow.sections = SectionStyle(headerHeight: 24, footerHeight: 8)
    return [CursorSubject(waterfall), CursorSubject(flow)]
}()

/// Cursor text as `LayoutCursor` writes it (`fl3.`/`fl4.`, base64url of the payload and its FNV-1a checksum), for
/// writing cursors whose checksum is right.
enum CursorText {
    /// `cursor` with `bytes` written over its payload from `offset` (past the version byte, within the body).
    static func rewriting(_ cursor: String, with bytes: [UInt8], at offset: Int) -> String {
        let prefix = String(cursor.prefix(4))
        guard let payload = decode(cursor.dropFirst(4)), payload.count > 9 else { return cursor }
        var body = Array(payload.dropLast(8))
        let start = 1 + offset % (body.count - 1)
        body = Array(body[..<start]) + bytes + body[min(body.count, start + bytes.count)...]
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in body {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        for shift in stride(from: 0, to: 64, by: 8) { body.append(UInt8(truncatingIfNeeded: hash >> UInt64(shift))) }
        return prefix + encode(body)
    }

    /// base64url without padding (RFC 4648 §5), as cursors are written.
    private static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    private static func decode(_ text: Substring) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64).map(Array.init)
    }
}
