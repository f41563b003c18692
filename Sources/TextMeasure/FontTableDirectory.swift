import LocalFileAccess

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where one face's tables lie in an OpenType font file or collection (`.ttc`): what the font digest covers, and
/// what writing a collection's face out as a font file of its own needs.
struct FontTableDirectory {
    /// For a collection: its header and the face's entry in it; empty for a single font.
    var collectionPrefix: [UInt8]
    /// The face's offset table: sfnt version, table count, search fields (12 bytes).
    var offsetTable: [UInt8]
    /// The table records, 16 bytes each: tag, checksum, offset from the file's start, length.
    var records: [UInt8]

    var tableCount: Int { records.count / 16 }

    /// Reads the directory of face `faceIndex` through `read(count, offset)`; nil when the file is not
    /// OpenType or holds no such face.
    init?(faceIndex: Int, read: (_ count: Int, _ offset: Int) -> [UInt8]?) {
        guard let head = read(12, 0) else { return nil }
        var directoryOffset = 0
        collectionPrefix = []
        if head[0..<4] == [0x74, 0x74, 0x63, 0x66] {  // "ttcf"
            guard faceIndex < Self.bigEndian(head, 8, 4), let entry = read(4, 12 + 4 * faceIndex) else { return nil }
            collectionPrefix = head + entry
            directoryOffset = Self.bigEndian(entry, 0, 4)
        }
        guard let offsetTable = read(12, directoryOffset),
            [0x0001_0000, 0x4F54_544F, 0x7472_7565].contains(Self.bigEndian(offsetTable, 0, 4)),  // TrueType, "OTTO", "true"
            let records = read(16 * Self.bigEndian(offsetTable, 4, 2), directoryOffset + 12)
        else { return nil }
        self.offsetTable = offsetTable
        self.records = records
    }

    /// Table `index`'s offset and length in the file.
    func table(_ index: Int) -> (offset: Int, length: Int) {
        (Self.bigEndian(records, 16 * index + 8, 4), Self.bigEndian(records, 16 * index + 12, 4))
    }

    static func bigEndian(_ bytes: [UInt8], _ at: Int, _ width: Int) -> Int {
        bytes[at..<(at + width)].reduce(0) { $0 << 8 | Int($1) }
    }
}

/// A font file opened for reading byte ranges.
struct FontFileReader: ~Copyable {
    private let descriptor: Int32
    let size: Int

    init(path: String) throws(TextMeasureError) {
        let opened: Int32
        do {
            opened = try LocalFileGate.anyRegularFile.open(path)
        } catch {
            throw TextMeasureError(code: .fontFileUnreadable, message: "cannot read font file '\(path)': \(error.reason)")
        }
        let size = Int(lseek(opened, 0, SEEK_END))
        guard size >= 0 else {
            close(opened)
            throw TextMeasureError(code: .fontFileUnreadable, message: "cannot read font file '\(path)'")
        }
        descriptor = opened
        self.size = size
    }

    deinit { close(descriptor) }

    /// `count` bytes at `offset`, or nil when they are not all in the file.
    func read(_ count: Int, at offset: Int) -> [UInt8]? {
        guard offset >= 0, count >= 0, offset + count <= size else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        return got == count ? bytes : nil
    }
}

extension FontFace {
    /// The face as a font file of its own: its tables under an sfnt header of their own. `@font-face` only ever
    /// loads a collection's first face, so a preview writes other faces out this way.
    ///
    /// - Throws: ``TextMeasureError/Code/fontFileUnreadable`` when the file cannot be read or is not OpenType.
    public func standaloneFontFile() throws(TextMeasureError) -> [UInt8] {
        let file = try FontFileReader(path: path)
        guard let directory = FontTableDirectory(faceIndex: faceIndex, read: { file.read($0, at: $1) }) else {
            throw TextMeasureError(
                code: .fontFileUnreadable, message: "'\(path)' (face \(faceIndex)) is not an OpenType font")
        }
        let count = directory.tableCount
        // searchRange, entrySelector and rangeShift follow from the table count, as the format defines them.
        let power = count > 0 ? 1 << (Int.bitWidth - 1 - count.leadingZeroBitCount) : 0
        var header = Array(directory.offsetTable[0..<6])
        for value in [power * 16, power > 0 ? power.trailingZeroBitCount : 0, count * 16 - power * 16] {
            header += [UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
        }
        var tables: [UInt8] = []
        var nextOffset = 12 + 16 * count
        for index in 0..<count {
            let (offset, length) = directory.table(index)
            guard let bytes = file.read(length, at: offset) else {
                throw TextMeasureError(code: .fontFileUnreadable, message: "'\(path)': table \(index) lies outside the file")
            }
            // The record as it was (tag, checksum), with the table's new offset.
            header += directory.records[(16 * index)..<(16 * index + 8)]
            for value in [nextOffset, length] {
                header += (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
            }
            // Tables start on 4-byte boundaries.
            let padding = (4 - length % 4) % 4
            tables += bytes + [UInt8](repeating: 0, count: padding)
            nextOffset += length + padding
        }
        return header + tables
    }
}
