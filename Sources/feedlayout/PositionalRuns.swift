import ArgumentParser
import Foundation
import LayoutCommandLine

/// A command whose repeating positional argument (`probe IMAGE...`, `layout FEED...`, `measure TEXT...`) may hold
/// thousands of values, as a shell glob gives them.
protocol RepeatingPositionalCommand: ParsableCommand {
    /// The values of the repeating positional argument, in command-line order.
    var positionalValues: [String] { get set }
}

extension FeedLayoutCommand.Probe: RepeatingPositionalCommand {
    var positionalValues: [String] {
        get { images }
        set { images = newValue }
    }
}

extension FeedLayoutCommand.Layout: RepeatingPositionalCommand {
    var positionalValues: [String] {
        get { feeds }
        set { feeds = newValue }
    }
}

extension FeedLayoutCommand.Measure: RepeatingPositionalCommand {
    var positionalValues: [String] {
        get { texts }
        set { texts = newValue }
    }
}

/// The command line with long runs of positional values folded, so that swift-argument-parser sees a few tokens.
///
/// swift-argument-parser (1.8) stores each value of a repeating positional argument by copying the array of the
/// values before it and merging the set of their positions, so n values cost O(n²): `feedlayout probe` over
/// 10,000 files spent 2.7 s parsing its arguments and a few milliseconds probing. Folding keeps that cost
/// proportional to the options given, not to the files.
///
/// In a run of consecutive tokens that do not start with `-`, only the first can be an option's value (every
/// option of these commands takes exactly one value; flags take none); the others are positional values. Each run
/// keeps its first token and has the rest replaced by one placeholder, which starts with a NUL byte and so can
/// never be a real argument (a command line cannot carry NUL). Once parsed, `unfold` puts the runs back in place
/// of their placeholders, in order. The commands' checks (`validate()`) hold either way: a placeholder is never
/// `-` and stands for at least one value, so emptiness, the presence of `-` and "more than one" are unchanged;
/// the unfolded command is checked again all the same.
struct PositionalRuns {
    /// The command line to parse: the subcommand, then its arguments with runs folded.
    private(set) var arguments: [String]
    /// The folded runs, by placeholder number.
    private var runs: [ArraySlice<String>] = []

    private static let placeholderPrefix = "\u{0}run-"

    /// Folds the runs of `arguments` (the command line without the program) when its first token names one of
    /// `subcommands`; any other command line is kept as it is.
    init(_ arguments: [String], subcommands: Set<String>) {
        guard let subcommand = arguments.first, subcommands.contains(subcommand) else {
            self.arguments = arguments
            return
        }
        self.arguments = [subcommand]
        var index = 1
        while index < arguments.count {
            let token = arguments[index]
            self.arguments.append(token)
            index += 1
            guard !token.hasPrefix("-") else { continue }
            let runEnd = arguments[index...].firstIndex { $0.hasPrefix("-") } ?? arguments.count
            if runEnd > index {
                self.arguments.append(Self.placeholderPrefix + String(runs.count))
                runs.append(arguments[index..<runEnd])
                index = runEnd
            }
        }
    }

    /// The parsed positional values with every placeholder replaced by the run it stands for.
    func unfold(_ values: [String]) -> [String] {
        guard !runs.isEmpty else { return values }
        var unfolded: [String] = []
        unfolded.reserveCapacity(values.count + runs.reduce(0) { $0 + $1.count })
        for value in values {
            if value.hasPrefix(Self.placeholderPrefix),
                let number = Int(value.dropFirst(Self.placeholderPrefix.count)), runs.indices.contains(number)
            {
                unfolded += runs[number]
            } else {
                unfolded.append(value)
            }
        }
        return unfolded
    }
}

extension FeedLayoutCommand {
    /// Parses the command line as `parseAsRoot()` does, in time proportional to its length.
    static func parseCommandLine() throws -> any ParsableCommand {
        let subcommands = Set(
            configuration.subcommands.filter { $0 is any RepeatingPositionalCommand.Type }.map {
                $0._commandName
            })
        var arguments = Array(CommandLine.arguments.dropFirst())
        // The service also takes its options from the environment and a configuration file.
        if arguments.first == Serve._commandName {
            arguments = try [arguments[0]]
                + OptionSources(Serve.self, environmentPrefix: "FEEDLAYOUT").arguments(
                    commandLine: Array(arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        }
        let folded = PositionalRuns(NegativeValues.joined(arguments), subcommands: subcommands)
        let command = try parseAsRoot(folded.arguments)
        guard var repeating = command as? any RepeatingPositionalCommand else { return command }
        repeating.positionalValues = folded.unfold(repeating.positionalValues)
        try repeating.validate()
        return repeating
    }
}
