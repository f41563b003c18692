import Foundation

/// Inputs the tests keep on disk: plain files, packed fuzz corpora, and folders of regression inputs.
public enum TestInputs {
    /// Reads a whole file.
    ///
    /// - Parameter path: The file's path.
    /// - Returns: Its bytes (empty for an empty file).
    /// - Throws: ``TestInputError`` naming the path when it cannot be read.
    public static func bytes(atPath path: String) throws(TestInputError) -> [UInt8] {
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw TestInputError(message: "cannot read \(path): \(error.localizedDescription)")
        }
    }

    /// Splits a packed corpus into its inputs.
    ///
    /// `scripts/fuzz TARGET merge` packs the minimised libFuzzer corpus into one file of
    /// (UInt32 little-endian length, bytes) records, so hundreds of inputs are one fixture.
    ///
    /// - Parameter packed: The packed file's bytes.
    /// - Returns: The inputs, in the file's order.
    /// - Throws: ``TestInputError`` when a record runs past the end of the file (a cut or corrupt file).
    public static func unpackCorpus(_ packed: [UInt8]) throws(TestInputError) -> [[UInt8]] {
        var inputs: [[UInt8]] = []
        var position = 0
        while position < packed.count {
            guard position + 4 <= packed.count else {
                throw TestInputError(message: "a record's length is cut at byte \(position) of the packed corpus")
            }
            let length = packed[position..<position + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            position += 4
            guard length <= packed.count - position else {
                throw TestInputError(
                    message: "the record at byte \(position - 4) says \(length) bytes, but only "
                        + "\(packed.count - position) follow; pack the corpus again with `scripts/fuzz TARGET merge`")
            }
            inputs.append(Array(packed[position..<position + length]))
            position += length
        }
        return inputs
    }

    /// Every input file in a folder, sorted by name.
    ///
    /// Hidden files and the folder's notes and generators (`.md`, `.py`) are not inputs.
    ///
    /// - Parameter folder: The folder's path.
    /// - Returns: Each input's file name and bytes.
    /// - Throws: ``TestInputError`` when the folder or a file cannot be read.
    public static func files(in folder: String) throws(TestInputError) -> [(name: String, bytes: [UInt8])] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw TestInputError(message: "cannot list \(folder): \(error.localizedDescription)")
        }
        var inputs: [(name: String, bytes: [UInt8])] = []
        for name in names.sorted()
        where !name.hasPrefix(".") && !name.hasSuffix(".md") && !name.hasSuffix(".py") {
            inputs.append((name, try bytes(atPath: folder + "/" + name)))
        }
        return inputs
    }
}

/// A test input that cannot be read, with the path or offset and what to do.
public struct TestInputError: Error, CustomStringConvertible {
    /// What went wrong, where.
    public var message: String

    /// Makes an error with its message.
    public init(message: String) { self.message = message }

    public var description: String { message }
}
