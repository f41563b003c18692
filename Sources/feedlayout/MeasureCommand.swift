import ArgumentParser
import FeedLayout
import Foundation
import TextMeasure

extension FeedLayoutCommand {
    struct Measure: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Measure how texts wrap at a width (NDJSON, one record per text).",
            discussion: """
                With no TEXT, each line of standard input is one text. Lines wrap as Chromium wraps \
                them (white-space: normal; overflow-wrap: break-word), with the same fonts.
                Examples:
                  feedlayout measure --width 200 --max-lines 2 "A caption that wraps"
                  feedlayout measure --width 236 --font "Noto Sans CJK JP" --line-height 1.4x \\
                    < captions.txt
                """)

        @Option(help: "The box width in CSS pixels.")
        var width: Double

        @Option(help: "A font file path or a family name.")
        var font: String = "DejaVu Sans"

        @OptionGroup var fontList: FontListOptions

        @Option(help: "Font size in pixels.")
        var fontSize: Double = 13

        @Option(help: "Font weight (400 regular, 700 bold).")
        var weight: Int = 400

        @Option(help: "Line height: 'normal', pixels ('20' or '20px') or a multiple ('1.4x').")
        var lineHeight: String = "normal"

        @Option(help: "At most this many lines, the last one ending in an ellipsis.")
        var maxLines: Int?

        @Argument(help: "Texts to measure.")
        var texts: [String] = []

        func validate() throws {
            guard width > 0, width.isFinite else { throw ValidationError("--width must be above 0") }
            guard fontSize > 0 else { throw ValidationError("--font-size must be above 0") }
            if let maxLines, maxLines < 1 { throw ValidationError("--max-lines must be at least 1") }
            _ = try LineHeightParser.parse(lineHeight)
        }

        func run() throws {
            let style = fontList.applied(
                to: TextStyle(
                    font: font, size: fontSize, lineHeight: try LineHeightParser.parse(lineHeight), weight: weight))
            let measurer: TextMeasurer
            do {
                measurer = try TextMeasurer(style: style)
            } catch {
                throw LayoutError(.fontUnavailable, "--font: \(error)")
            }
            var json = JSONWriter()
            func emit(_ text: String) {
                Records.write(measurer.measure(text, width: width, maxLines: maxLines), into: &json)
                json.appendRaw("\n")
            }
            if texts.isEmpty {
                while let line = readLine(strippingNewline: true) {
                    emit(line)
                    if json.bytes.count > 1 << 16 { Terminal.write(json.takeBytes()) }
                }
            } else {
                texts.forEach(emit)
            }
            Terminal.write(json.takeBytes())
        }
    }
}
