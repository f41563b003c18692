import ArgumentParser
// Linked for its malloc, which replaces glibc's in this process (Sources/CJemalloc/shim.h says why).
import CJemalloc
import FeedLayout
import Foundation
import NIOCore
import NIOPosix

@main
struct FeedLayoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedlayout",
        abstract: "Precompute Pinterest-style waterfall layouts for photo feeds.",
        discussion: """
            A feed (RSS 2.0, Atom, RSS 1.0, Media RSS) goes in; paginated JSON comes out with a frame for every pin, \
            its photo and its annotation, so a client renders the feed without measuring anything.

            Exit codes: 0 success; 1 some inputs failed (each failure is reported in the output); 2 bad usage.
            """,
        version: "0.1.0",
        subcommands: [Layout.self, Ingest.self, Probe.self, Measure.self, Preview.self, Serve.self, Prepare.self, Place.self]
    )

    /// Runs the command, mapping outcomes to DESIGN.md's exit codes: ArgumentParser reports bad usage as 64,
    /// the contract says 2. The command line is parsed by `parseCommandLine()`, which keeps thousands of file
    /// arguments from costing quadratic time.
    static func main() async {
        // The service answers requests on NIO's event loops: with them as Swift's global executor, a request's
        // task runs where its connection's I/O happens, without a thread switch each way. It must happen here,
        // on the main thread before any other task runs; the service keeps every long piece of work (layouts,
        // digests of posted feeds) on threads of its own, so no event loop is held up.
        if CommandLine.arguments.dropFirst().first == "serve" {
            NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        do {
            var command = try parseCommandLine()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as LayoutError {
            Terminal.error(error.message)
            Foundation.exit(CommandLineFailure.exitCode(for: error))
        } catch {
            if exitCode(for: error) == .validationFailure {
                Terminal.error(fullMessage(for: error))
                Foundation.exit(CommandLineFailure.usage)
            }
            exit(withError: error)
        }
    }
}

/// DESIGN.md's exit codes.
enum CommandLineFailure {
    static let someInputsFailed: Int32 = 1
    static let usage: Int32 = 2

    /// Options, fonts and cursors are the caller's to fix (usage); a feed that cannot be read is a failed input.
    static func exitCode(for error: LayoutError) -> Int32 {
        error.isUsageError ? usage : someInputsFailed
    }
}

/// Buffered output: records go to stdout in large writes, messages to stderr at once.
enum Terminal {
    static func error(_ message: String) {
        let text = message.hasPrefix("Error:") || message.hasPrefix("Usage:") ? message : "error: \(message)"
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func note(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    static func write(_ bytes: [UInt8]) {
        FileHandle.standardOutput.write(Data(bytes))
    }

    /// Writes the records `json` holds, in place, and empties it for the next ones (between records: no container
    /// is open).
    static func write(_ json: inout JSONWriter) {
        json.withUnsafeBytes { bytes in
            guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
            FileHandle.standardOutput.write(
                Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: start), count: bytes.count, deallocator: .none))
        }
        json.removeAll()
    }

    /// Writes the records `json` holds once they pass `limit` bytes, in place as `write(_:)` does: a long run of
    /// records goes out in blocks rather than piling up.
    static func writeWhenFull(_ json: inout JSONWriter, limit: Int = 1 << 16) {
        if json.count > limit { write(&json) }
    }
}
