import ArgumentParser
import FeedLayout
import Foundation
import LayoutCommandLine
import TextMeasure

extension FeedLayoutCommand {
    struct Measure: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "measure",
            abstract: "Measure how texts wrap at a width (NDJSON, one record per text).",
            discussion: """
                With no TEXT, each line of standard input is one text. Lines wrap as Chromium wraps \
                them (white-space: normal; overflow-wrap: break-word), with the same fonts.
                Examples:
                  feedlayout measure --width 200 --max-lines 2 "A caption that wraps"
                  feedlayout measure --width 236 --font "Noto Sans CJK JP" --line-height 1.4x \\
                    < captions.txt
                """)

        @Option(help: bounded("The box width in CSS pixels", OptionLimits.positiveLength))
        var width: Double

        @Option(help: "A font file path or a family name.")
        var font: String = "DejaVu Sans"

        @OptionGroup var fontList: FontListOptions

        @Option(help: bounded("Font size in pixels", OptionLimits.fontSize))
        var fontSize: Double = 13

        @Option(help: bounded("Font weight (400 regular, 700 bold)", OptionLimits.fontWeight))
        var weight: Int = 400

        @Option(help: lineHeightHelp)
        var lineHeight: String = "normal"

        @Option(
            help: bounded("At most this many lines, the last one ending in an ellipsis", OptionLimits.measuredLines))
        var maxLines: Int?

        @Argument(help: "Texts to measure.")
        var texts: [String] = []

        func validate() throws {
            let style = try style()
            try asUsageError {
                try OptionLimits.positiveLength.check(width, option: "width")
                try style.validate()
                if let maxLines { try OptionLimits.measuredLines.check(maxLines, option: "max-lines") }
            }
        }

        /// The style the texts are measured in.
        func style() throws -> TextStyle {
            fontList.applied(
                to: TextStyle(
                    font: font, size: fontSize, lineHeight: try LineHeightParser.parse(lineHeight), weight: weight))
        }

        func run() throws {
            let style = try style()
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
                    Terminal.writeWhenFull(&json)
                }
            } else {
                texts.forEach(emit)
            }
            Terminal.write(&json)
        }
    }
}
