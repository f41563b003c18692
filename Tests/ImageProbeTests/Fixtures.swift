import FeedLayoutTestSupport
import Foundation
import ImageProbe

/// Locates and loads the files made by `Fixtures/make_fixtures.py`, next to this source file.
enum Fixtures {
    /// The fixture folder, found from this file's path so no bundle resources are needed.
    static let directory: String = {
        let thisFile = "\(#filePath)"
        let folder = thisFile[..<thisFile.lastIndex(of: "/")!]
        return folder + "/Fixtures"
    }()

    static func path(_ name: String) -> String { directory + "/" + name }

    /// The libFuzzer corpus of the header parser, minimised with `-merge=1` and packed as
    /// (UInt32 little-endian length, bytes) records so that hundreds of inputs are one file.
    static let fuzzCorpusName = "parser-fuzz-corpus.bin"

    /// The unpacked fuzz corpus.
    static func fuzzCorpus() throws -> [[UInt8]] {
        try TestInputs.unpackCorpus(bytes(fuzzCorpusName))
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        try bytes(atPath: path(name))
    }

    static func bytes(atPath path: String) throws -> [UInt8] {
        try TestInputs.bytes(atPath: path)
    }

    /// Every fixture that is an input (everything but the generator and Pillow's opinions).
    static func allNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.hasSuffix(".py") && !$0.hasSuffix(".json") && !$0.hasSuffix(".md") && $0 != fuzzCorpusName }
            .filter { !isFolder($0) }
            .sorted()
    }

    /// Folders (the decoder fuzzer's replayed inputs) are not fixtures.
    static func isFolder(_ name: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path(name), isDirectory: &isFolder) && isFolder.boolValue
    }

    /// Parses a whole buffer, as a caller with the complete file would.
    static func parse(_ bytes: [UInt8], isComplete: Bool = true) -> ImageHeaderParseResult {
        bytes.withUnsafeBytes { ImageHeaderParser.parse($0, isComplete: isComplete) }
    }
}

extension ImageHeaderParseResult {
    var info: ImageInfo? {
        if case .info(let info) = self { return info }
        return nil
    }

    var error: ImageProbeError? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var requestedLength: Int? {
        if case .needMoreBytes(let length) = self { return length }
        return nil
    }
}
