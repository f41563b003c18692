/// Reads the orientation tag (0x0112) from IFD0 of an Exif/TIFF block.
///
/// The thumbnail's IFD1 is never looked at: its orientation describes the thumbnail, and
/// following the IFD chain there is a classic source of wrong answers. Problems never fail the
/// probe, since the size is still right; they give orientation 1 and a warning instead.
enum ExifOrientationReader {
    /// The TIFF orientation tag.
    static let orientationTag = 0x0112

    /// Finds the orientation in a TIFF structure.
    /// - Parameters:
    ///   - bytes: The whole input; offsets in warnings are relative to it.
    ///   - tiffStart: Where the TIFF header (`II*\0` / `MM\0*`) starts.
    ///   - tiffEnd: One past the last byte of the TIFF block that is available.
    ///   - container: Names the enclosing structure in warnings, such as `JPEG APP1 Exif`.
    ///   - warnings: Receives a sentence for anything malformed.
    /// - Returns: 1...8; 1 when the tag is absent or unusable.
    static func orientation(
        in bytes: UnsafeRawBufferPointer, tiffStart: Int, tiffEnd: Int, container: StaticString,
        warnings: inout [String]
    ) -> Int {
        guard tiffStart + 8 <= tiffEnd else {
            warnings.append("\(container): TIFF header at byte \(tiffStart) is truncated; orientation ignored")
            return 1
        }
        let isLittleEndian: Bool
        switch (bytes[tiffStart], bytes[tiffStart + 1]) {
        case (0x49, 0x49): isLittleEndian = true
        case (0x4D, 0x4D): isLittleEndian = false
        default:
            warnings.append("\(container): unknown TIFF byte order at byte \(tiffStart); orientation ignored")
            return 1
        }
        func uint16(_ offset: Int) -> Int {
            isLittleEndian ? bytes.uint16LittleEndian(at: offset) : bytes.uint16BigEndian(at: offset)
        }
        func uint32(_ offset: Int) -> Int {
            isLittleEndian ? bytes.uint32LittleEndian(at: offset) : bytes.uint32BigEndian(at: offset)
        }
        guard uint16(tiffStart + 2) == 42 else {
            warnings.append("\(container): bad TIFF magic number at byte \(tiffStart + 2); orientation ignored")
            return 1
        }
        let firstDirectoryOffset = uint32(tiffStart + 4)
        // IFD0 may sit anywhere after the 8-byte header, not only right behind it.
        let directoryStart = tiffStart + firstDirectoryOffset
        guard firstDirectoryOffset >= 8, directoryStart + 2 <= tiffEnd else {
            warnings.append(
                "\(container): IFD0 offset \(firstDirectoryOffset) at byte \(tiffStart + 4) points outside the Exif data; orientation ignored"
            )
            return 1
        }
        let entryCount = uint16(directoryStart)
        for entryIndex in 0..<entryCount {
            let entry = directoryStart + 2 + entryIndex * 12
            guard entry + 12 <= tiffEnd else {
                warnings.append(
                    "\(container): IFD0 entry \(entryIndex) at byte \(entry) is truncated; orientation ignored")
                return 1
            }
            guard uint16(entry) == orientationTag else { continue }
            let value: Int
            switch uint16(entry + 2) {
            case 3, 8: value = uint16(entry + 8)  // SHORT / SSHORT, left-justified in the value field
            case 4, 9: value = uint32(entry + 8)  // LONG / SLONG, written by a few tools
            case 1, 6: value = Int(bytes[entry + 8])  // BYTE / SBYTE
            default:
                warnings.append(
                    "\(container): orientation tag at byte \(entry) has type \(uint16(entry + 2)); orientation ignored")
                return 1
            }
            guard (1...8).contains(value) else {
                warnings.append("\(container): orientation value \(value) at byte \(entry + 8) is not 1...8; using 1")
                return 1
            }
            return value
        }
        return 1
    }

    /// The length of the `Exif\0\0` identifier that precedes the TIFF header in JPEG APP1 (and
    /// sometimes, against the specifications, in PNG eXIf and WebP EXIF chunks).
    static let identifierLength = 6

    /// Whether `Exif\0\0` starts at `offset`.
    static func hasIdentifier(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        bytes.matches("Exif", at: offset) && offset + 6 <= bytes.count && bytes[offset + 4] == 0
            && bytes[offset + 5] == 0
    }
}
