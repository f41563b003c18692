import FeedIngest
import FeedLayout
import Foundation
import LayoutPages

/// A list of inputs, one per line (`feedlayout probe --input-list FILE`): for more inputs than a command line
/// holds, or a list another program writes.
public enum InputList {
    /// Reads the list at `path` (`-` for standard input) and returns its non-empty lines.
    ///
    /// The file is read with plain reads, so pipes and process substitutions (`<(…)`, `/dev/fd/N`) work too:
    /// Foundation's `String(contentsOfFile:)` refuses them.
    /// - Parameters:
    ///   - path: The list's path, or `-`.
    ///   - option: The option that named the list, for messages.
    /// - Throws: `LayoutError.invalidOptions` naming the option and the path when the list cannot be read.
    public static func read(_ path: String, option: String) throws(LayoutError) -> [String] {
        if path == "-" {
            return lines(of: String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self))
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw LayoutError(
                .invalidOptions, "\(option) \(path): cannot be read (\(String(cString: strerror(errno))))")
        }
        defer { try? handle.close() }
        var data = Data()
        do {
            while true {
                let chunk = try handle.read(upToCount: 1 << 16) ?? Data()
                if chunk.isEmpty { break }
                data += chunk
            }
        } catch {
            throw LayoutError(.invalidOptions, "\(option) \(path): cannot be read (\(error.localizedDescription))")
        }
        return lines(of: String(decoding: data, as: UTF8.self))
    }

    /// The non-empty lines of a list, split where `Character.isNewline` splits (LF, CR, CRLF, VT, FF, NEL,
    /// U+2028, U+2029) but over UTF-8 bytes: splitting thousands of paths by Character costs more than
    /// probing them.
    public static func lines(of text: String) -> [String] {
        var text = text
        return text.withUTF8 { bytes in
            var lines: [String] = []
            var start = 0
            var index = 0
            func endLine(before end: Int, resumingAt next: Int) {
                if end > start {
                    lines.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
                }
                (start, index) = (next, next)
            }
            while index < bytes.count {
                let byte = bytes[index]
                if (0x0A...0x0D).contains(byte) {
                    endLine(before: index, resumingAt: index + 1)
                } else if byte == 0xC2, index + 1 < bytes.count, bytes[index + 1] == 0x85 {
                    endLine(before: index, resumingAt: index + 2)
                } else if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80,
                    bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9
                {
                    endLine(before: index, resumingAt: index + 3)
                } else {
                    index += 1
                }
            }
            endLine(before: bytes.count, resumingAt: bytes.count)
            return lines
        }
    }
}
