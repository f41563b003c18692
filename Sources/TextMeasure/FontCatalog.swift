internal import CFontconfig
import Synchronization

/// A font file and the face inside it, as fontconfig reports them.
struct FontLocation: Sendable, Hashable {
    var path: String
    var faceIndex: Int
}

/// Looks fonts up through fontconfig: the primary font by family and weight, and the
/// fallback font for a character the primary font lacks.
///
/// Fontconfig keeps process-wide state of its own; every call into it here goes through
/// one lock, so measurers on different tasks never race inside it.
enum FontCatalog {
    /// Serialises calls into fontconfig. A lock, not state: nothing is stored behind it.
    private static let fontconfigLock = Mutex(())

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
    /// - Returns: The file and face index of the best match.
    /// - Throws: ``TextMeasureError/Code/fontFamilyNotFound`` when no installed family has
    ///   that name (fontconfig would silently substitute another; a browser would too, but
    ///   then our measurements would not match what the client renders).
    static func locate(family: String, weight: Int) throws(TextMeasureError) -> FontLocation {
        try fontconfigLock.withLock { _ throws(TextMeasureError) in try locateUnlocked(family: family, weight: weight) }
    }

    private static func locateUnlocked(family: String, weight: Int) throws(TextMeasureError) -> FontLocation {
        guard FcInit() != 0 else {
            throw TextMeasureError(code: .libraryFailure, message: "fontconfig failed to initialise")
        }
        guard let pattern = FcPatternCreate() else {
            throw TextMeasureError(code: .libraryFailure, message: "fontconfig could not allocate a pattern")
        }
        defer { FcPatternDestroy(pattern) }
        _ = FcPatternAddString(pattern, FC_FAMILY, family)
        _ = FcPatternAddInteger(pattern, FC_WEIGHT, FcWeightFromOpenType(Int32(clamping: weight)))
        _ = FcPatternAddInteger(pattern, FC_SLANT, Int32(FC_SLANT_ROMAN))
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultNoMatch
        guard let match = FcFontMatch(nil, pattern, &result) else {
            throw notFound(family: family, matched: nil)
        }
        defer { FcPatternDestroy(match) }
        let matchedFamilies = strings(of: match, property: FC_FAMILY)
        let requested = family.lowercased()
        guard genericFamilies.contains(requested) || matchedFamilies.contains(where: { $0.lowercased() == requested })
        else {
            throw notFound(family: family, matched: matchedFamilies.first)
        }
        guard let location = location(of: match) else {
            throw notFound(family: family, matched: matchedFamilies.first)
        }
        return location
    }

    /// Finds the font fontconfig prefers for a character, as Chromium's Linux fallback
    /// (`gfx::GetFallbackFontForChar`) does: sort by the pattern, take the first face whose
    /// character set really contains the character.
    ///
    /// - Parameters:
    ///   - codePoint: The character the primary font lacks.
    ///   - weight: The CSS weight to prefer.
    ///   - language: The language to ask for (`ko`, `ja`, or `und-zsye` for emoji, as
    ///     Chromium asks for emoji-presentation clusters), or nil.
    ///   - preferColor: Ask for a colour font too (emoji).
    /// - Returns: The face, or nil when no installed font has the character.
    static func fallback(for codePoint: UInt32, weight: Int, language: String?, preferColor: Bool) -> FontLocation? {
        fontconfigLock.withLock { _ in
            fallbackUnlocked(for: codePoint, weight: weight, language: language, preferColor: preferColor)
        }
    }

    private static func fallbackUnlocked(for codePoint: UInt32, weight: Int, language: String?, preferColor: Bool)
        -> FontLocation?
    {
        guard FcInit() != 0, let pattern = FcPatternCreate() else { return nil }
        defer { FcPatternDestroy(pattern) }
        guard let characterSet = FcCharSetCreate() else { return nil }
        defer { FcCharSetDestroy(characterSet) }
        _ = FcCharSetAddChar(characterSet, codePoint)
        _ = FcPatternAddCharSet(pattern, FC_CHARSET, characterSet)
        _ = FcPatternAddInteger(pattern, FC_WEIGHT, FcWeightFromOpenType(Int32(clamping: weight)))
        if let language { _ = FcPatternAddString(pattern, FC_LANG, language) }
        if preferColor { _ = FcPatternAddBool(pattern, FC_COLOR, 1) }
        FcConfigSubstitute(nil, pattern, FcMatchPattern)
        FcDefaultSubstitute(pattern)
        var result = FcResultNoMatch
        guard let fontSet = FcFontSort(nil, pattern, 0, nil, &result) else { return nil }
        defer { FcFontSetDestroy(fontSet) }
        let count = Int(fontSet.pointee.nfont)
        guard let fonts = fontSet.pointee.fonts else { return nil }
        for index in 0..<count {
            guard let candidate = fonts[index] else { continue }
            var candidateSet: OpaquePointer?
            guard FcPatternGetCharSet(candidate, FC_CHARSET, 0, &candidateSet) == FcResultMatch,
                let candidateSet, FcCharSetHasChar(candidateSet, codePoint) != 0
            else { continue }
            if let location = location(of: candidate) { return location }
        }
        return nil
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

    private static func notFound(family: String, matched: String?) -> TextMeasureError {
        let substitute = matched.map { " (fontconfig would substitute '\($0)')" } ?? ""
        return TextMeasureError(
            code: .fontFamilyNotFound,
            message: "font family '\(family)' is not installed\(substitute): install it (see `fc-list : family`), "
                + "or pass the path of a .ttf/.otf file as the font")
    }
}
