import ArgumentParser
import LayoutCommandLine
import LayoutPages
import Testing
import WaterfallLayout

/// The command line and JSON are two ways of naming the same options: the same names and values give the same
/// `LayoutOptions`, or the same message.
@Suite struct NamedOptionsTests {
    static let valid: [[String]] = [
        [],
        ["--width=375", "--columns=2"],
        ["--breakpoints=375:2,768:3,1280:5", "--placeholders"],
        ["--inset=8,16,24,32", "--gutter=12.5", "--row-gap=0", "--cell-padding=6"],
        ["--line-height=1.4x", "--font=DejaVu Serif", "--title-font=DejaVu Sans", "--title-weight=400"],
        ["--fallback-font=DejaVu Serif", "--fallback-font=Noto Sans CJK JP"],
        ["--no-fallback-fonts", "--title-lines=0", "--text-lines=5", "--title-text-gap=2"],
        ["--placement=grid-lanes", "--order-tolerance=normal", "--right-to-left"],
        ["--mode=flow", "--row-photo-height=120", "--align=data-end", "--follow"],
        ["--axis=horizontal", "--height=600", "--max-photo-width=300", "--min-photo-width=40"],
        ["--section-header-height=40", "--section-inset=4,0,4,0", "--decoration-outset=2"],
        ["--page-height=2000", "--max-photo-height=400", "--min-photo-height=50", "--scale=2"],
        ["--min-column-width=180", "--min-columns=3", "--max-columns=6", "--fallback-aspect-ratio=1.5"],
    ]
    static let invalid: [[String]] = [
        ["--width=-5"], ["--inset=1,2"], ["--section-inset=x"], ["--breakpoints=375"],
        ["--breakpoints=375:2,375:3"], ["--line-height=0"], ["--axis=horizontal"], ["--height=100"],
        ["--follow"], ["--row-photo-height=100"], ["--no-fallback-fonts", "--fallback-font=A"],
        ["--font-size=0"], ["--title-weight=0"], ["--page-size=0"], ["--columns=0"], ["--scale=0"],
    ]

    static func named(_ arguments: [String]) throws -> LayoutOptions {
        try LayoutOptionValues(named: LayoutOptionValues.named(storedArguments: arguments)).options()
    }

    @Test(arguments: valid)
    func namedOptionsAreTheCommandsOptions(arguments: [String]) throws {
        let command = try LayoutCommandOptions.parse(arguments + ["--no-cache"]).options()
        #expect(try Self.named(arguments) == command)
    }

    @Test(arguments: invalid)
    func namedOptionsAreRefusedWithTheCommandsMessage(arguments: [String]) {
        var commandMessage: String?
        do {
            _ = try LayoutCommandOptions.parse(arguments + ["--no-cache"]).options()
        } catch {
            commandMessage = LayoutCommandOptions.message(for: error)
        }
        #expect(commandMessage != nil, "the command accepted \(arguments)")
        #expect(throws: LayoutError.self) { try Self.named(arguments) }
        do {
            _ = try Self.named(arguments)
        } catch let error as LayoutError {
            #expect(error.message == commandMessage)
            #expect(error.option != nil, "\(error.message) names no option")
        } catch {
            Issue.record("not a LayoutError: \(error)")
        }
    }

    @Test func jsonValuesOfEachKindAreRead() throws {
        var expected = LayoutOptionValues()
        expected.width = 375
        expected.columns = 2
        expected.inset = "8"
        expected.placement = .gridLanes
        expected.orderTolerance = .normal
        expected.fallbackFont = ["A", "B"]
        expected.placeholders = true
        expected.lineHeight = "20"
        let values = try LayoutOptionValues(named: [
            "width": .string("375"), "columns": .number(2), "inset": .number(8), "placement": .string("grid-lanes"),
            "orderTolerance": .string("normal"), "fallbackFont": .strings(["A", "B"]), "placeholders": .bool(true),
            "lineHeight": .number(20),
        ])
        #expect(values == expected)
        for (name, value, message) in [
            ("columns", OptionValue.number(2.5), "columns takes a whole number, got '2.5'"),
            ("columns", .string("many"), "columns takes a whole number, got 'many'"),
            ("width", .bool(true), "width takes a number or a string"),
            ("placeholders", .string("yes"), "placeholders is true or false"),
            ("placement", .string("diagonal"), "placement is one of shortest-first, left-to-right, right-to-left, grid-lanes, got 'diagonal'"),
            ("fallbackFont", .number(1), "fallbackFont takes a list of font family names"),
        ] {
            #expect {
                try LayoutOptionValues(named: [name: value])
            } throws: { error in
                (error as? LayoutError)?.message == message
                    && (error as? LayoutError)?.option == LayoutOptionValues.commandLineName(name)
            }
        }
        let stored = LayoutOptionValues.storedJSON(["width": .number(375), "font": .string("DejaVu Serif")])
        #expect(stored == #"{"options":{"font":"DejaVu Serif","width":375},"version":1}"#)
        #expect(try LayoutOptionValues.named(storedJSON: stored) == ["width": .number(375), "font": .string("DejaVu Serif")])
        #expect(throws: LayoutError.self) { try LayoutOptionValues.named(storedJSON: #"{"options":{},"version":2}"#) }
    }
}
