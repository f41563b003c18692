import Foundation
import WaterfallLayout

/// An option's value as JSON gives it.
public enum OptionValue: Sendable, Hashable, Codable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case strings([String])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            self = .strings(try container.decode([String].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        }
    }
}

extension LayoutOptionValues {
    /// Every name ``init(named:)`` takes, sorted: the layout options of `feedlayout layout` in camelCase.
    public static var names: [String] { setters.keys.sorted() }

    /// The values a set of named options gives, over the defaults.
    ///
    /// A number may be given as a JSON number or as its text (`375`, `"375"`); an option written as text on the
    /// command line (insets, line height, breakpoints, order tolerance, fonts) takes a string or a number; a choice
    /// takes its name (`shortest-first`); an on/off option takes `true` or `false`; `fallbackFont` takes a list of
    /// names or one name. Names are read in sorted order, so a message names the same option whatever the order
    /// they came in.
    /// - Throws: ``LayoutError`` `invalidOptions` with the option's command-line name (`row-gap`) as ``LayoutError/option``:
    ///   an unknown name, or a value of the wrong kind. Bounds and forms are checked later, by ``options(fontDirectory:)``.
    public init(named values: [String: OptionValue]) throws(LayoutError) {
        self.init()
        for name in values.keys.sorted() {
            guard let set = Self.setters[name] else {
                throw LayoutError(
                    .invalidOptions, "unknown option \(name); the options are \(Self.names.joined(separator: ", "))",
                    option: Self.commandLineName(name))
            }
            try set(&self, name, values[name]!)
        }
    }

    /// `rowGap` → `row-gap`: how the command line and ``LayoutError/option`` name an option.
    public static func commandLineName(_ name: String) -> String {
        var result = ""
        for character in name {
            if character.isUppercase {
                result += "-" + character.lowercased()
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// `row-gap` → `rowGap`: the name of an option in JSON.
    public static func jsonName(_ commandLineName: String) -> String {
        let parts = commandLineName.split(separator: "-")
        guard let first = parts.first else { return commandLineName }
        return String(first) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    // MARK: Reading one value

    private typealias Setter = @Sendable (inout LayoutOptionValues, String, OptionValue) throws(LayoutError) -> Void

    private static func invalid(_ name: String, _ message: String) -> LayoutError {
        LayoutError(.invalidOptions, message, option: commandLineName(name))
    }

    /// A JSON number as the command line would spell it: integers without a fraction, others exactly.
    static func text(of number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int(number)) }
        return "\(number)"
    }

    /// The text of a value that takes a number or a string.
    private static func text(_ name: String, _ value: OptionValue) throws(LayoutError) -> String {
        switch value {
        case .number(let number): return text(of: number)
        case .string(let string): return string
        case .bool, .strings: throw invalid(name, "\(name) takes a number or a string")
        }
    }

    private static func number(_ name: String, _ value: OptionValue) throws(LayoutError) -> Double {
        if case .number(let number) = value { return number }
        let text = try text(name, value)
        guard let number = Double(text) else { throw invalid(name, "\(name) takes a number, got '\(text)'") }
        return number
    }

    private static func whole(_ name: String, _ value: OptionValue) throws(LayoutError) -> Int {
        let text = try text(name, value)
        guard let number = Int(text) else { throw invalid(name, "\(name) takes a whole number, got '\(text)'") }
        return number
    }

    private static func flag(_ name: String, _ value: OptionValue) throws(LayoutError) -> Bool {
        guard case .bool(let on) = value else { throw invalid(name, "\(name) is true or false") }
        return on
    }

    private static func choice<Choice: CaseIterable>(
        _ name: String, _ value: OptionValue, spelled: (Choice) -> String
    ) throws(LayoutError) -> Choice {
        let text = try text(name, value)
        guard let choice = Choice.allCases.first(where: { spelled($0) == text }) else {
            throw invalid(
                name, "\(name) is one of \(Choice.allCases.map(spelled).joined(separator: ", ")), got '\(text)'")
        }
        return choice
    }

    /// A setter that reads a value with `read` into the field at `path`.
    private static func field<Value>(
        _ path: any WritableKeyPath<LayoutOptionValues, Value> & Sendable,
        _ read: @escaping @Sendable (String, OptionValue) throws(LayoutError) -> Value
    ) -> Setter {
        { values, name, value throws(LayoutError) in values[keyPath: path] = try read(name, value) }
    }

    /// How each named option is read into its field.
    private static let setters: [String: Setter] = [
        "width": field(\.width, number), "columns": field(\.columns, whole),
        "minColumnWidth": field(\.minColumnWidth, number),
        "minColumns": field(\.minColumns, whole), "maxColumns": field(\.maxColumns, whole),
        "gutter": field(\.gutter, number),
        "rowGap": field(\.rowGap, number), "inset": field(\.inset, text), "cellPadding": field(\.cellPadding, number),
        "annotationSpacing": field(\.annotationSpacing, number), "maxPhotoHeight": field(\.maxPhotoHeight, number),
        "minPhotoHeight": field(\.minPhotoHeight, number), "scale": field(\.scale, number),
        "rightToLeft": field(\.rightToLeft, flag),
        "placement": { values, name, value throws(LayoutError) in
            values.placement = try choice(name, value, spelled: \PlacementOrder.optionName)
        },
        "orderTolerance": { values, name, value throws(LayoutError) in
            let text = try text(name, value)
            guard let tolerance = OrderTolerance(text: text) else {
                throw invalid(name, "\(name) is pixels or normal, got '\(text)'")
            }
            values.orderTolerance = tolerance
        },
        "fallbackAspectRatio": field(\.fallbackAspectRatio, number), "breakpoints": field(\.breakpoints, text),
        "mode": { values, name, value throws(LayoutError) in
            values.mode = try choice(name, value, spelled: \LayoutMode.rawValue)
        },
        "rowPhotoHeight": field(\.rowPhotoHeight, number),
        "align": { values, name, value throws(LayoutError) in
            values.align = try choice(name, value, spelled: \FlowAlignment.optionName)
        },
        "follow": field(\.follow, flag),
        "axis": { values, name, value throws(LayoutError) in
            values.axis = try choice(name, value, spelled: \LayoutAxis.rawValue)
        },
        "height": field(\.height, number), "maxPhotoWidth": field(\.maxPhotoWidth, number),
        "minPhotoWidth": field(\.minPhotoWidth, number), "sectionHeaderHeight": field(\.sectionHeaderHeight, number),
        "sectionFooterHeight": field(\.sectionFooterHeight, number), "sectionInset": field(\.sectionInset, text),
        "decorationOutset": field(\.decorationOutset, number), "font": field(\.font, text),
        "titleFont": field(\.titleFont, text),
        "fallbackFont": { values, name, value throws(LayoutError) in
            switch value {
            case .strings(let names): values.fallbackFont = names
            case .string(let one): values.fallbackFont = [one]
            case .bool, .number: throw invalid(name, "\(name) takes a list of font family names")
            }
        },
        "noFallbackFonts": field(\.noFallbackFonts, flag), "fontSize": field(\.fontSize, number),
        "titleFontSize": field(\.titleFontSize, number), "titleWeight": field(\.titleWeight, whole),
        "lineHeight": field(\.lineHeight, text),
        "titleLines": field(\.titleLines, whole), "textLines": field(\.textLines, whole),
        "titleTextGap": field(\.titleTextGap, number),
        "pageSize": field(\.pageSize, whole), "pageHeight": field(\.pageHeight, number),
        "placeholders": field(\.placeholders, flag),
    ]

    // MARK: The stored form

    /// The version of ``storedJSON(_:)``'s shape.
    public static let storedVersion = 1

    /// Named options as a store keeps them: `{"options":{…},"version":1}`, keys sorted, so the same options give
    /// the same bytes.
    public static func storedJSON(_ named: [String: OptionValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Stored(version: storedVersion, options: named))) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The named options a store kept (``storedJSON(_:)``).
    /// - Throws: ``LayoutError`` `invalidOptions` when the text is not that form, or of a newer version.
    public static func named(storedJSON text: String) throws(LayoutError) -> [String: OptionValue] {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: Data(text.utf8)) else {
            throw LayoutError(.invalidOptions, "stored options are not feedlayout options JSON: \(text.prefix(200))")
        }
        guard stored.version <= storedVersion else {
            throw LayoutError(
                .invalidOptions,
                "stored options of version \(stored.version); this feedlayout reads up to \(storedVersion)")
        }
        return stored.options
    }

    /// Named options from the command-line arguments that stores kept before options were JSON (`--width=375`,
    /// `--placeholders`, `--fallback-font=A` repeated): for the stores' migration. Values stay text, which
    /// ``init(named:)`` reads as the command line did.
    public static func named(storedArguments arguments: [String]) -> [String: OptionValue] {
        var named: [String: OptionValue] = [:]
        for argument in arguments where argument.hasPrefix("--") {
            let parts = argument.dropFirst(2).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = jsonName(String(parts[0]))
            guard parts.count == 2 else {
                named[name] = .bool(true)
                continue
            }
            let value = String(parts[1])
            if name == "fallbackFont" {
                if case .strings(let earlier) = named[name] {
                    named[name] = .strings(earlier + [value])
                } else {
                    named[name] = .strings([value])
                }
            } else {
                named[name] = .string(value)
            }
        }
        return named
    }

    private struct Stored: Codable {
        var version: Int
        var options: [String: OptionValue]
    }
}
