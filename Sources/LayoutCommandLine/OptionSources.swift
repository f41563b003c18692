import ArgumentParser
import Foundation
import LayoutPages

/// A command's options from three places, in one order of precedence: the command line, then the environment
/// (`PREFIX_MAX_FEED_BYTES` for `--max-feed-bytes`), then a configuration file (`max-feed-bytes = 1000`), then
/// the command's defaults.
///
/// The options are the command's own `@Option` and `@Flag` properties, found by reflection, so an option added to
/// the command can be set from all three places without being listed again; the result is an argument list that
/// ArgumentParser parses and checks as it does any command line.
///
/// - A repeatable option takes its values from the first place that names it: a command line `--cors-origin`
///   replaces the environment's list (comma-separated there) rather than adding to it.
/// - A flag is `true` or `false` (also `1`/`0`, `yes`/`no`) in the environment and the file.
/// - The configuration file is `--config FILE`, else `PREFIX_CONFIG`: lines of `name = value` (`#` starts a
///   comment line); an unknown name, or a value that is not one, is an error that names the file and line.
public struct OptionSources: Sendable {
    /// One option of the command: its long name and what it takes.
    public struct Option: Equatable, Sendable {
        public enum Kind: Sendable { case flag, value, repeatable }
        public var name: String
        public var kind: Kind
    }

    public let options: [Option]
    public let environmentPrefix: String

    /// The options of `command`, read off its properties (`maxFeedBytes` is `--max-feed-bytes`, as ArgumentParser
    /// names it).
    public init(_ command: (some ParsableArguments).Type, environmentPrefix: String) {
        var options: [Option] = []
        for child in Mirror(reflecting: command.init()).children {
            guard let label = child.label, label.hasPrefix("_") else { continue }
            let type = String(describing: Swift.type(of: child.value))
            let kind: Option.Kind
            if type.hasPrefix("Flag<") {
                kind = .flag
            } else if type.hasPrefix("Option<Array<") || type.hasPrefix("Option<[") {
                kind = .repeatable
            } else if type.hasPrefix("Option<") {
                kind = .value
            } else {
                continue
            }
            options.append(Option(name: LayoutOptionValues.commandLineName(String(label.dropFirst())), kind: kind))
        }
        self.init(options: options, environmentPrefix: environmentPrefix)
    }

    public init(options: [Option], environmentPrefix: String) {
        self.options = options
        self.environmentPrefix = environmentPrefix
    }

    /// The environment variable of an option: `FEEDLAYOUT_MAX_FEED_BYTES`.
    public func environmentName(_ option: String) -> String {
        environmentPrefix + "_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The argument list: what the command line says, after what the environment and the file say of every option
    /// it does not name.
    /// - Parameter readFile: Reads the configuration file (tests give their own).
    public func arguments(
        commandLine: [String], environment: [String: String],
        readFile: (String) throws -> String = { try String(contentsOfFile: $0, encoding: .utf8) }
    ) throws -> [String] {
        let named = Set(commandLine.compactMap(Self.optionName))
        let configPath = Self.value(of: "config", in: commandLine) ?? environment[environmentName("config")]
        var fromFile: [String: [String]] = [:]
        if let configPath {
            let text: String
            do {
                text = try readFile(configPath)
            } catch {
                throw ValidationError("\(configPath): cannot read the configuration file (\(error.localizedDescription))")
            }
            fromFile = try parseFile(text, source: configPath)
        }
        var arguments: [String] = []
        for option in options where option.name != "config" && !named.contains(option.name) {
            let variable = environmentName(option.name)
            let values: [String]
            let place: String
            if let value = environment[variable] {
                values = option.kind == .repeatable
                    ? value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                    : [value]
                place = "the environment variable \(variable)"
            } else if let value = fromFile[option.name] {
                values = value
                place = "\(configPath ?? "the configuration file") (\(option.name))"
            } else {
                continue
            }
            switch option.kind {
            case .flag:
                guard let on = Self.boolean(values.last ?? "") else {
                    throw ValidationError("\(place): '\(values.last ?? "")' is not true or false")
                }
                if on { arguments.append("--" + option.name) }
            case .value, .repeatable:
                for value in values { arguments.append("--\(option.name)=\(value)") }
            }
        }
        return arguments + commandLine
    }

    /// `name = value` lines; repeated names give several values (the last one counts for a single value).
    func parseFile(_ text: String, source: String) throws -> [String: [String]] {
        var values: [String: [String]] = [:]
        let known = Dictionary(options.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for (offset, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw ValidationError("\(source):\(offset + 1): expected name = value, got '\(line)'")
            }
            var name = line[..<equals].trimmingCharacters(in: .whitespaces)
            if name.hasPrefix("--") { name.removeFirst(2) }
            var value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = String(value.dropFirst().dropLast()) }
            guard let option = known[name], name != "config" else {
                throw ValidationError(
                    "\(source):\(offset + 1): unknown option '\(name)' (one of: "
                        + options.map(\.name).filter { $0 != "config" }.joined(separator: ", ") + ")")
            }
            if option.kind == .flag, Self.boolean(value) == nil {
                throw ValidationError("\(source):\(offset + 1): \(name) is true or false, got '\(value)'")
            }
            values[name, default: []].append(value)
        }
        return values
    }

    /// `--name` and `--name=value` name `name`.
    private static func optionName(_ argument: String) -> String? {
        guard argument.hasPrefix("--"), argument.count > 2 else { return nil }
        return String(argument.dropFirst(2).prefix(while: { $0 != "=" }))
    }

    /// The value of `--name VALUE` or `--name=VALUE` on a command line.
    private static func value(of name: String, in arguments: [String]) -> String? {
        for (index, argument) in arguments.enumerated() {
            if argument == "--" + name, index + 1 < arguments.count { return arguments[index + 1] }
            if argument.hasPrefix("--\(name)=") { return String(argument.dropFirst(name.count + 3)) }
        }
        return nil
    }

    private static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes", "on": true
        case "false", "0", "no", "off": false
        default: nil
        }
    }
}
