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

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    /// Every fixture that is an input (everything but the generator and Pillow's opinions).
    static func allNames() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory)
            .filter { !$0.hasSuffix(".py") && !$0.hasSuffix(".json") }
            .sorted()
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
