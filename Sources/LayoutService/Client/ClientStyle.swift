import Foundation
import HTTPTypes
import Hummingbird
import LayoutPages
import NIOCore
import Synchronization
import TextMeasure

/// The style sheet a client shows a layout's text with (`GET /v1/layouts/{id}/style.css`): an `@font-face` for
/// every font of the title's and the caption's lists, served by the service, and the classes `feedlayout-title`
/// and `feedlayout-caption` with the size, weight, line height and line limit the measurement used.
///
/// Each fallback font is declared with a `unicode-range`: the characters it has that no font before it in the
/// list has. A browser then picks, for each character, the font the measurement picked (the first in the list
/// with a glyph for it), and downloads a fallback font only when a text needs it, not the 20 MB of a CJK
/// collection for a feed in English.
struct ClientStyle: Sendable {
    let css: ByteBuffer
    /// The fonts the sheet names, by the file name of their URL (`<digest>.ttf`).
    let fonts: [String: FontFace]
    /// The URLs of the title's and the caption's primary fonts: every text needs them.
    let primaryFonts: [String]

    init(layoutID id: String, options: LayoutOptions, coverage: FontCoverage) throws(ServiceProblem) {
        let fonts: LayoutFonts
        do {
            fonts = try LayoutFonts(options.annotation)
        } catch {
            throw ServiceProblem(
                .serviceUnavailable, "font-unavailable", "Font unavailable",
                detail: "layout \(id): \(error.message); the service's fonts changed since it was made")
        }
        var css = "/* The fonts and text styles of feedlayout layout \(id), as its pages were measured. */\n"
        var files: [String: FontFace] = [:]
        var primaryFonts: [String] = []
        let annotation = options.annotation
        for (role, style, list, lines) in [
            ("title", annotation.title, fonts.title, annotation.titleLines),
            ("caption", annotation.text, fonts.caption, annotation.textLines),
        ] {
            var families: [String] = []
            var covered: [ClosedRange<UInt32>] = []
            for (position, face) in list.enumerated() {
                let ranges: [ClosedRange<UInt32>]
                do {
                    ranges = try coverage.ranges(of: face)
                } catch {
                    throw ServiceProblem(
                        .serviceUnavailable, "font-unavailable", "Font unavailable",
                        detail: "layout \(id): \(error.message)")
                }
                // The primary font covers every character: one it lacks shows its missing-glyph box, as measured.
                let own = position == 0 ? [] : FontCoverage.subtract(covered, from: ranges)
                covered = FontCoverage.union(covered, ranges)
                if position > 0 && own.isEmpty { continue }
                let file = Self.fileName(face)
                files[file] = face
                let url = "/v1/layouts/\(id)/fonts/\(file)"
                if position == 0 && !primaryFonts.contains(url) { primaryFonts.append(url) }
                // One family per font, declared at the block's weight, so the browser never synthesises a bold
                // that the measurement did not.
                let family = "FeedLayout \(role) \(position)"
                css += "@font-face { font-family: \"\(family)\"; font-weight: \(style.weight); font-display: block; "
                css += "src: url(\"\(url)\")"
                if !own.isEmpty { css += "; unicode-range: " + FontCoverage.css(own) }
                css += "; }\n"
                families.append("\"\(family)\"")
            }
            css += ".feedlayout-\(role) { font: \(style.cssFont(families: families.joined(separator: ", ")));"
            if let lines { css += " -webkit-line-clamp: \(lines);" }
            css += " }\n"
        }
        self.css = ByteBuffer(string: css)
        self.fonts = files
        self.primaryFonts = primaryFonts
    }

    /// `<digest>.ttf`: the face's digest names the file, so the URL changes whenever the font does. A face inside
    /// a collection other than its first is served as a font file of its own (`.otf`).
    static func fileName(_ face: FontFace) -> String {
        let digest = face.digest.dropFirst("sha256:".count)
        let suffix = face.faceIndex == 0 ? (face.fileName as NSString).pathExtension.lowercased() : "otf"
        return digest + "." + (suffix.isEmpty ? "ttf" : suffix)
    }

    /// A font's bytes and type.
    static func fontResponse(_ face: FontFace) async throws -> Response {
        let bytes: [UInt8]
        do {
            bytes = try face.faceIndex == 0
                ? [UInt8](Data(contentsOf: URL(fileURLWithPath: face.path))) : face.standaloneFontFile()
        } catch {
            throw ServiceProblem(
                .serviceUnavailable, "font-unavailable", "Font unavailable",
                detail: "\(face.fileName) cannot be read: \(error)")
        }
        let type =
            switch fileName(face).split(separator: ".").last {
            case "otf": "font/otf"
            case "ttc", "otc": "font/collection"
            case "woff": "font/woff"
            case "woff2": "font/woff2"
            default: "font/ttf"
            }
        return Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "public, max-age=31536000, immutable"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

}

/// The characters each font has, read once per font face (a new service made its first style sheet, the maps of
/// the standard list's ten faces included, in 33 ms, release build).
final class FontCoverage: Sendable {
    private let known = Mutex<[String: [ClosedRange<UInt32>]]>([:])

    func ranges(of face: FontFace) throws(TextMeasureError) -> [ClosedRange<UInt32>] {
        let key = face.digest + "#" + String(face.faceIndex)
        if let ranges = known.withLock({ $0[key] }) { return ranges }
        let ranges = try face.characterRanges()
        known.withLock { $0[key] = ranges }
        return ranges
    }

    /// Sorted, disjoint ranges of both.
    static func union(_ first: [ClosedRange<UInt32>], _ second: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var merged: [ClosedRange<UInt32>] = []
        for range in (first + second).sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// The parts of `ranges` outside `covered` (both sorted and disjoint).
    static func subtract(_ covered: [ClosedRange<UInt32>], from ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var result: [ClosedRange<UInt32>] = []
        var next = covered.startIndex
        for range in ranges {
            var start = range.lowerBound
            while next < covered.endIndex, covered[next].upperBound < start { next += 1 }
            var index = next
            var isEmpty = false
            while index < covered.endIndex, covered[index].lowerBound <= range.upperBound {
                if covered[index].lowerBound > start { result.append(start...(covered[index].lowerBound - 1)) }
                if covered[index].upperBound >= range.upperBound { isEmpty = true; break }
                start = covered[index].upperBound + 1
                index += 1
            }
            if !isEmpty { result.append(start...range.upperBound) }
        }
        return result
    }

    /// `U+41-5A, U+E9, …`.
    static func css(_ ranges: [ClosedRange<UInt32>]) -> String {
        ranges.map { range in
            let start = String(range.lowerBound, radix: 16, uppercase: true)
            return range.count == 1 ? "U+" + start : "U+" + start + "-" + String(range.upperBound, radix: 16, uppercase: true)
        }.joined(separator: ", ")
    }
}

/// The style sheets of recent layouts, made once each.
final class ClientStyles: Sendable {
    private let styles = Mutex<[String: ClientStyle]>([:])
    let coverage = FontCoverage()
    private static let limit = 64

    /// Lets go of a removed layout's style sheet.
    func forget(_ id: String) {
        _ = styles.withLock { $0.removeValue(forKey: id) }
    }

    func style(id: String, make: () throws -> ClientStyle) throws -> ClientStyle {
        if let style = styles.withLock({ $0[id] }) { return style }
        let style = try make()
        styles.withLock { styles in
            if styles.count >= Self.limit { styles.removeAll() }
            styles[id] = style
        }
        return style
    }
}
