internal import CFontconfig
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A font file and the face inside it, as fontconfig reports them.
struct FontLocation: Sendable, Hashable {
    var path: String
    var faceIndex: Int
}

/// Turns font family names into files through fontconfig, and nothing more: which font measures a character is
/// the style's ordered font list's to decide (``FontSet``), never fontconfig's fallback order, which differs
/// from machine to machine with the fonts installed and the locale.
///
/// Fontconfig keeps process-wide state of its own; every call into it here goes through
/// one lock, so measurers on different tasks never race inside it.
enum FontCatalog {
    /// Serialises calls into fontconfig, and holds the configurations of `--font-dir` folders: one each, made
    /// when the folder is first asked about (fontconfig scans the folder then).
    private static let fontconfigLock = Mutex([String: OpaquePointer]())

    /// Families CSS treats as generic: fontconfig resolves them through its aliases, so the
    /// matched family legitimately differs from the requested name.
    private static let genericFamilies: Set<String> = [
        "serif", "sans-serif", "sans", "monospace", "mono", "cursive", "fantasy", "system-ui", "emoji",
    ]

    /// Finds the installed face for a family name and CSS weight.
    ///
    /// - Parameters:
    ///   - family: The family name, e.g. "DejaVu Sans".
    ///   - weight: The CSS weight (100–900).
    ///   - directory: Look only among the fonts in this folder (and its subfolders), not the machine's.
    /// - Returns: The file and face index of the best match.
    /// - Throws: ``TextMeasureError/Code/fontFamilyNotFound`` when no installed family has
    ///   that name (fontconfig would silently substitute another; a browser would too, but
    ///   then our measurements would not match what the client renders).
    static func locate(family: String, weight: Int, directory: String? = nil) throws(TextMeasureError)
        -> FontLocation
    {
        try fontconfigLock.withLock { configurations throws(TextMeasureError) in
            guard FcInit() != 0 else {
                throw TextMeasureError(code: .libraryFailure, message: "fontconfig failed to initialise")
            }
            var configuration: OpaquePointer?
            if let directory {
                if let known = configurations[directory] {
                    configuration = known
                } else {
                    configuration = try folderConfiguration(directory)
                    configurations[directory] = configuration
                }
            }
            return try locateUnlocked(family: family, weight: weight, configuration: configuration, directory: directory)
        }
    }

    /// A fontconfig configuration that knows only the fonts in `directory`: no system fonts, no aliases.
    private static func folderConfiguration(_ directory: String) throws(TextMeasureError) -> OpaquePointer {
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw TextMeasureError(
                code: .fontFamilyNotFound, message: "font folder '\(directory)' does not exist or is not a folder")
        }
        guard let configuration = FcConfigCreate() else {
            throw TextMeasureError(code: .libraryFailure, message: "fontconfig could not create a configuration")
        }
        // The folder, and the user's fontconfig cache (without a cache folder fontconfig complains on stderr).
        let escaped = directory.map { $0 == "&" ? "&amp;" : $0 == "<" ? "&lt;" : String($0) }.joined()
        let document =
            "<fontconfig><dir>\(escaped)</dir><cachedir prefix=\"xdg\">fontconfig</cachedir></fontconfig>"
        guard FcConfigParseAndLoadFromMemory(configuration, document, 1) != 0, FcConfigBuildFonts(configuration) != 0
        else {
            FcConfigDestroy(configuration)
            throw TextMeasureError(code: .fontFamilyNotFound, message: "fontconfig cannot read the font folder '\(directory)'")
        }
        return configuration
    }

    private static func locateUnlocked(family: String, weight: Int, configuration: OpaquePointer?, directory: String?)
        throws(TextMeasureError) -> FontLocation
    {
        guard let pattern = FcPatternCreate() else {
            throw TextMeasureError(code: .libraryFailure, message: "fontconfig could not allocate a pattern")
        }
        defer { FcPatternDestroy(pattern) }
        _ = FcPatternAddString(pattern, FC_FAMILY, family)
        _ = FcPatternAddInteger(pattern, FC_WEIGHT, FcWeightFromOpenType(Int32(clamping: weight)))
        _ = FcPatternAddInteger(pattern, FC_SLANT, Int32(FC_SLANT_ROMAN))
        FcConfigSubstitute(configuration, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultNoMatch
        guard let match = FcFontMatch(configuration, pattern, &result) else {
            throw notFound(family: family, matched: nil, directory: directory)
        }
        defer { FcPatternDestroy(match) }
        let matchedFamilies = strings(of: match, property: FC_FAMILY)
        let requested = family.lowercased()
        guard genericFamilies.contains(requested) || matchedFamilies.contains(where: { $0.lowercased() == requested })
        else {
            throw notFound(family: family, matched: matchedFamilies.first, directory: directory)
        }
        guard let location = location(of: match) else {
            throw notFound(family: family, matched: matchedFamilies.first, directory: directory)
        }
        return location
    }

    private static func location(of pattern: OpaquePointer) -> FontLocation? {
        guard let path = strings(of: pattern, property: FC_FILE).first else { return nil }
        var index: Int32 = 0
        if FcPatternGetInteger(pattern, FC_INDEX, 0, &index) != FcResultMatch { index = 0 }
        return FontLocation(path: path, faceIndex: Int(index))
    }

    private static func strings(of pattern: OpaquePointer, property: String) -> [String] {
        var values: [String] = []
        var valueIndex: Int32 = 0
        while true {
            var value: UnsafeMutablePointer<FcChar8>?
            guard FcPatternGetString(pattern, property, valueIndex, &value) == FcResultMatch, let value else { break }
            values.append(String(cString: value))
            valueIndex += 1
        }
        return values
    }

    private static func notFound(family: String, matched: String?, directory: String?) -> TextMeasureError {
        let substitute = matched.map { " (fontconfig would substitute '\($0)')" } ?? ""
        if let directory {
            return TextMeasureError(
                code: .fontFamilyNotFound,
                message: "font family '\(family)' is not in the font folder '\(directory)'\(substitute): add its file "
                    + "there (see `fc-scan --format '%{family}\\n' FILE`), or pass the path of a .ttf/.otf file")
        }
        return TextMeasureError(
            code: .fontFamilyNotFound,
            message: "font family '\(family)' is not installed\(substitute): install it (scripts/install-deps installs "
                + "the standard fonts; see `fc-list : family`), or pass the path of a .ttf/.otf file")
    }
}
