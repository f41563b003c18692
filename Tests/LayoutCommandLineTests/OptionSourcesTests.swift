import ArgumentParser
import Testing

@testable import LayoutCommandLine

/// Options from the command line, the environment and a configuration file, in that order of precedence.
struct OptionSourcesTests {
    struct Example: ParsableArguments {
        @Option var port = 8080
        @Option var maxFeedBytes = 1024
        @Option var store: String?
        @Flag var privateReads = false
        @Option var corsOrigin: [String] = []
        @Option var config: String?
    }

    static let sources = OptionSources(Example.self, environmentPrefix: "FEEDLAYOUT")

    static func parse(
        _ commandLine: [String], environment: [String: String] = [:], file: String? = nil
    ) throws -> Example {
        let arguments = try sources.arguments(
            commandLine: commandLine, environment: environment,
            readFile: { path in
                guard let file else { throw CocoaLikeError(description: "no such file") }
                return file
            })
        return try Example.parse(arguments)
    }

    struct CocoaLikeError: Error { var description: String }

    @Test func theOptionsAreReadOffTheCommandItself() {
        let options = Self.sources.options
        #expect(options.first { $0.name == "max-feed-bytes" }?.kind == .value)
        #expect(options.first { $0.name == "private-reads" }?.kind == .flag)
        #expect(options.first { $0.name == "cors-origin" }?.kind == .repeatable)
        #expect(Self.sources.environmentName("max-feed-bytes") == "FEEDLAYOUT_MAX_FEED_BYTES")
    }

    @Test func theCommandLineWinsOverTheEnvironmentWhichWinsOverTheFile() throws {
        let file = """
            # service.conf
            port = 7000
            max-feed-bytes = 10
            store = "/var/lib/feedlayout/service.sqlite"
            private-reads = true
            cors-origin = https://a.example
            cors-origin = https://b.example
            """
        let fromFile = try Self.parse(["--config", "service.conf"], file: file)
        #expect(fromFile.port == 7000 && fromFile.maxFeedBytes == 10 && fromFile.privateReads)
        #expect(fromFile.store == "/var/lib/feedlayout/service.sqlite")
        #expect(fromFile.corsOrigin == ["https://a.example", "https://b.example"])

        let environment = [
            "FEEDLAYOUT_PORT": "7100", "FEEDLAYOUT_CONFIG": "service.conf", "FEEDLAYOUT_CORS_ORIGIN": "https://c.example, https://d.example",
            "FEEDLAYOUT_PRIVATE_READS": "false", "FEEDLAYOUT_UNRELATED": "x",
        ]
        let fromEnvironment = try Self.parse([], environment: environment, file: file)
        #expect(fromEnvironment.port == 7100 && fromEnvironment.maxFeedBytes == 10 && !fromEnvironment.privateReads)
        #expect(fromEnvironment.corsOrigin == ["https://c.example", "https://d.example"])

        let fromCommandLine = try Self.parse(
            ["--port=7200", "--cors-origin", "https://e.example"], environment: environment, file: file)
        #expect(fromCommandLine.port == 7200 && fromCommandLine.corsOrigin == ["https://e.example"])

        let defaults = try Self.parse([])
        #expect(defaults.port == 8080 && defaults.corsOrigin.isEmpty && !defaults.privateReads)
    }

    @Test(arguments: [
        ("port 7000", "service.conf:1: expected name = value"),
        ("\nhost-name = x", "service.conf:2: unknown option 'host-name'"),
        ("private-reads = maybe", "service.conf:1: private-reads is true or false, got 'maybe'"),
    ])
    func aWrongLineOfTheFileIsNamed(file: String, message: String) {
        #expect {
            try Self.parse(["--config", "service.conf"], file: file)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test func aWrongValueFromTheEnvironmentIsNamedByItsVariable() {
        #expect {
            try Self.parse([], environment: ["FEEDLAYOUT_PRIVATE_READS": "sometimes"])
        } throws: { error in
            "\(error)".contains("FEEDLAYOUT_PRIVATE_READS")
        }
        #expect {
            try Self.parse([], environment: ["FEEDLAYOUT_PORT": "eighty"])
        } throws: { error in
            "\(Example.fullMessage(for: error))".contains("eighty")
        }
        #expect {
            try Self.parse(["--config", "missing.conf"])
        } throws: { error in
            "\(error)".contains("missing.conf: cannot read the configuration file")
        }
    }
}
