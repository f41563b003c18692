import ByteTools
internal import CFreeType
import LocalFileAccess
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One font file a text style measures with, as pages record it: the file, the face in it, the names the font
/// gives itself, and a digest that changes whenever the font does.
public struct FontFace: Sendable, Hashable {
    /// The font file.
    public var path: String
    /// The face inside the file (collections such as `.ttc` hold several).
    public var faceIndex: Int
    /// The family name the face declares, e.g. "Noto Sans CJK JP".
    public var family: String
    /// The style name the face declares, e.g. "Bold".
    public var style: String
    /// `sha256:` and the SHA-256 of the file's size and the face's OpenType table directory (every table's tag,
    /// checksum, offset and length). Each table's checksum covers its bytes, so a changed font changes the digest,
    /// and reading it costs a few hundred bytes, not the whole file: `sha256sum` of the standard list's two CJK
    /// collections and emoji font (50 MB) takes 0.36–0.44 s here, and every run reads every font's digest.
    /// Files that are not OpenType (WOFF, Type 1) are digested whole.
    public var digest: String

    /// The file's name without its folder (kept, not derived: every page writes it).
    public let fileName: String

    /// Reads a face's names and digest.
    ///
    /// - Throws: ``TextMeasureError/Code/fontFileUnreadable`` when FreeType cannot open the face.
    init(path: String, faceIndex: Int) throws(TextMeasureError) {
        // FreeType opens the file itself and would wait forever on a FIFO: only regular files go that far.
        do {
            _ = try LocalFileGate.anyRegularFile.admit(path)
        } catch where error.code == .notRegularFile {
            throw TextMeasureError(code: .fontFileUnreadable, message: "font file '\(path)': \(error.reason)")
        } catch {
            // Missing or unreadable: FreeType's own message below says so, with what to do.
        }
        let library = try FreeTypeLibrary()
        let face = try library.openFace(path: path, faceIndex: faceIndex)
        defer { _ = withExtendedLifetime(library) { FT_Done_Face(face) } }
        self.path = path
        self.faceIndex = faceIndex
        fileName = path.split(separator: "/").last.map(String.init) ?? path
        family = face.pointee.family_name.map { String(cString: $0) } ?? ""
        style = face.pointee.style_name.map { String(cString: $0) } ?? ""
        digest = "sha256:" + SHA256.hexDigest(try Self.identityBytes(path: path, faceIndex: faceIndex))
    }

    /// The bytes the digest covers: the size, then the face's table directory (or the whole file when it has
    /// none).
    private static func identityBytes(path: String, faceIndex: Int) throws(TextMeasureError) -> [UInt8] {
        let file = try FontFileReader(path: path)
        let identity = Array("\(file.size)|".utf8)
        if let directory = FontTableDirectory(faceIndex: faceIndex, read: { file.read($0, at: $1) }) {
            return identity + directory.collectionPrefix + directory.offsetTable + directory.records
        }
        guard file.size <= 64 << 20, let whole = file.read(file.size, at: 0) else {
            throw TextMeasureError(code: .fontFileUnreadable, message: "cannot read font file '\(path)'")
        }
        return identity + whole
    }
}

extension TextStyle {
    /// The fonts this style measures with, in the order a character looks for its glyph: the primary font, then
    /// each fallback font (a face the list names twice is listed once).
    ///
    /// - Throws: ``TextMeasureError`` naming the font that is not installed or cannot be read.
    public func resolvedFonts() throws(TextMeasureError) -> [FontFace] {
        var faces: [FontFace] = []
        for (position, name) in ([font] + fallbackFonts).enumerated() {
            let face: FontFace
            do {
                face = try FontResolution.face(named: name, weight: weight, directory: fontDirectory)
            } catch {
                guard position > 0 else { throw error }
                throw TextMeasureError(code: error.code, message: "fallback font \(position): \(error.message)")
            }
            if !faces.contains(where: { $0.path == face.path && $0.faceIndex == face.faceIndex }) { faces.append(face) }
        }
        return faces
    }

    /// Whether `name` names a file rather than a family.
    public static func isFontFilePath(_ name: String) -> Bool {
        name.contains("/") || [".ttf", ".otf", ".ttc", ".otc"].contains(where: { name.lowercased().hasSuffix($0) })
    }
}

/// Font names to faces, remembered for the process: measurers are made per run (and per test case), and each
/// resolution asks fontconfig and opens the file.
enum FontResolution {
    private struct Key: Hashable {
        var name: String
        var weight: Int
        var directory: String?
    }
    private static let known = Mutex([Key: FontFace]())

    static func face(named name: String, weight: Int, directory: String?) throws(TextMeasureError) -> FontFace {
        let key = Key(name: name, weight: weight, directory: directory)
        if let face = known.withLock({ $0[key] }) { return face }
        let location =
            TextStyle.isFontFilePath(name)
            ? FontLocation(path: name, faceIndex: 0)
            : try FontCatalog.locate(family: name, weight: weight, directory: directory)
        let face = try FontFace(path: location.path, faceIndex: location.faceIndex)
        known.withLock { $0[key] = face }
        return face
    }
}

extension FontFace {
    /// The characters the face has glyphs for (its Unicode character map), as sorted, disjoint code point ranges:
    /// what a browser learns about a font only after downloading it, given to it beforehand as a `unicode-range`.
    ///
    /// - Throws: ``TextMeasureError/Code/fontFileUnreadable`` when FreeType cannot open the face.
    public func characterRanges() throws(TextMeasureError) -> [ClosedRange<UInt32>] {
        let library = try FreeTypeLibrary()
        let face = try library.openFace(path: path, faceIndex: faceIndex)
        defer { _ = withExtendedLifetime(library) { FT_Done_Face(face) } }
        var ranges: [ClosedRange<UInt32>] = []
        // FreeType selects the face's Unicode map when it opens it; a face without one has no characters to give.
        guard face.pointee.charmap != nil else { return ranges }
        var glyph: FT_UInt = 0
        var code = FT_Get_First_Char(face, &glyph)
        while glyph != 0 {
            let point = UInt32(truncatingIfNeeded: code)
            if let last = ranges.last, last.upperBound &+ 1 == point {
                ranges[ranges.count - 1] = last.lowerBound...point
            } else {
                ranges.append(point...point)
            }
            code = FT_Get_Next_Char(face, code, &glyph)
        }
        return ranges
    }
}
