import Foundation
import Testing
import TextMeasure
import WaterfallLayout

@testable import LayoutPages

@Suite struct JSONWriterTests {
    @Test func writesKeysInOrderWithCommasAndNesting() {
        var json = JSONWriter()
        json.beginObject()
        json.field("b", 1)
        json.field("a", "x")
        json.key("list")
        json.beginArray()
        json.int(1)
        json.beginObject()
        json.endObject()
        json.beginArray()
        json.endArray()
        json.null()
        json.endArray()
        json.field("nothing", nil as String?)
        json.endObject()
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"b":1,"a":"x","list":[1,{},[],null],"nothing":null}"#)
    }

    @Test func indentsWhenAsked() {
        var json = JSONWriter(indentWidth: 2)
        json.beginObject()
        json.field("a", 1)
        json.key("b")
        json.beginArray()
        json.bool(true)
        json.endArray()
        json.endObject()
        #expect(String(decoding: json.bytes, as: UTF8.self) == "{\n  \"a\": 1,\n  \"b\": [\n    true\n  ]\n}")
    }

    @Test(arguments: [
        (0.0, "0"), (-0.0, "0"), (1.0, "1"), (-42.0, "-42"), (0.5, "0.5"), (175.5, "175.5"), (1.0 / 3.0, "0.3333333333333333"),
        (Double.infinity, "null"), (Double.nan, "null"), (1e20, "1e+20"), (123456789012.0, "123456789012"),
    ])
    func numbersUseTheShortestRoundTripForm(value: Double, expected: String) {
        var json = JSONWriter()
        json.number(value)
        #expect(String(decoding: json.bytes, as: UTF8.self) == expected)
    }

    @Test func escapesWhatJSONRequiresAndKeepsUnicode() throws {
        let text = "quote \" backslash \\ newline \n tab \t bell \u{07} 写真 🏳️‍🌈 صور"
        var json = JSONWriter()
        json.string(text)
        let bytes = Data(json.bytes)
        #expect(String(decoding: bytes, as: UTF8.self).contains("\\u0007"))
        // Foundation reads it back to the same string.
        let decoded = try JSONSerialization.jsonObject(with: bytes, options: .fragmentsAllowed) as? String
        #expect(decoded == text)
    }

    @Test func escapesASpecialByteAtEveryAlignment() throws {
        // Strings are checked for escapes eight bytes at a time: each byte that needs one, at each offset of a
        // word, between ASCII and multi-byte UTF-8.
        for special in ["\"", "\\", "\n", "\u{01}", "\u{1F}"] {
            for offset in 0..<20 {
                let text = String(repeating: "a", count: offset) + special + String(repeating: "é", count: 5) + "~"
                var json = JSONWriter()
                json.string(text)
                let decoded =
                    try JSONSerialization.jsonObject(with: Data(json.bytes), options: .fragmentsAllowed) as? String
                #expect(decoded == text, "\(special.unicodeScalars.first!.value) at \(offset)")
            }
        }
        // Text that needs no escape goes out as it is, bytes from space to DEL and beyond ASCII alike.
        let plain = String(decoding: (0x20...0x7F).filter { $0 != 0x22 && $0 != 0x5C }.map(UInt8.init), as: UTF8.self)
            + "写真 صور 🏳️‍🌈"
        var json = JSONWriter()
        json.string(plain)
        #expect(json.bytes == [0x22] + Array(plain.utf8) + [0x22])
    }

    @Test func copiesStringsOfEveryLengthAroundAWord() throws {
        // Copied a word at a time, the tail as an overlapping last word (or byte by byte under eight bytes): every
        // length, plain, and with the one byte to escape last, where only the overlapping word sees it.
        for length in 0..<25 {
            let plain = String((0..<length).map { Character(UnicodeScalar(UInt8(0x41 + $0))) })
            var json = JSONWriter()
            json.string(plain)
            #expect(json.bytes == [0x22] + Array(plain.utf8) + [0x22], "length \(length)")
            guard length > 0 else { continue }
            let escapedLast = String(plain.dropLast()) + "\""
            var escaped = JSONWriter(reservingCapacity: 16)
            escaped.beginArray()
            escaped.string(escapedLast)
            escaped.endArray()
            let decoded = try JSONSerialization.jsonObject(with: Data(escaped.bytes)) as? [String]
            #expect(decoded == [escapedLast], "length \(length)")
        }
    }

    @Test func growsPastItsFirstBufferAndStartsOverAfterATake() {
        var json = JSONWriter(reservingCapacity: 16)
        json.beginArray()
        for value in 0..<1000 { json.int(value) }
        json.endArray()
        let expected = "[" + (0..<1000).map(String.init).joined(separator: ",") + "]"
        #expect(json.count == expected.utf8.count)
        #expect(String(decoding: json.takeBytes(), as: UTF8.self) == expected)
        #expect(json.count == 0)
        json.appendRaw("next")
        #expect(json.bytes == Array("next".utf8))
        json.withUnsafeBytes { #expect(Array($0) == Array("next".utf8)) }
    }

    @Test func aCopyWritesIntoItsOwnBytes() {
        var original = JSONWriter(reservingCapacity: 16)
        original.beginArray()
        original.int(1)
        var copy = original
        copy.int(2)
        copy.endArray()
        original.int(3)
        original.endArray()
        #expect(String(decoding: original.bytes, as: UTF8.self) == "[1,3]")
        #expect(String(decoding: copy.bytes, as: UTF8.self) == "[1,2]")
        var taken = copy
        #expect(taken.takeBytes() == Array("[1,2]".utf8))
        #expect(copy.bytes == Array("[1,2]".utf8) && taken.count == 0)
    }

    @Test func aValueWrittenAgainIsTheSameBytesAndGrowsTheBuffer() {
        // A small first buffer, so that the copy has to grow it: the copied bytes are read after the move.
        var json = JSONWriter(reservingCapacity: 8)
        json.beginObject()
        json.key("image")
        let start = json.position
        json.beginObject()
        json.field("url", "https://example.com/a.jpg")
        json.field("width", 800)
        json.endObject()
        let written = start..<json.position
        json.key("images")
        json.beginArray()
        let repeated = [json.repeatValue(written), json.repeatValue(written)]
        #expect(repeated == [true, true])
        json.endArray()
        json.endObject()
        let image = #"{"url":"https://example.com/a.jpg","width":800}"#
        #expect(String(decoding: json.bytes, as: UTF8.self) == #"{"image":\#(image),"images":[\#(image),\#(image)]}"#)

        // Indented, a value's bytes depend on its depth: nothing is copied.
        var indented = JSONWriter(indentWidth: 2)
        indented.beginArray()
        indented.int(1)
        let repeatedIndented = indented.repeatValue(1..<2)
        #expect(!repeatedIndented)
        indented.endArray()
        #expect(String(decoding: indented.bytes, as: UTF8.self) == "[\n  1\n]")
    }

    @Test func integersAtTheLimits() {
        var json = JSONWriter()
        json.beginArray()
        json.int(Int.max)
        json.int(Int.min)
        json.endArray()
        #expect(String(decoding: json.bytes, as: UTF8.self) == "[\(Int.max),\(Int.min)]")
    }
}

@Suite struct LayoutCursorTests {
    let cursor = LayoutCursor(
        fingerprint: 0x0123_4567_89AB_CDEF, feedDigest: 42, fontTags: [0x1234, 0, 0xFFFF], pageIndex: 3,
        state: WaterfallState(
            nextIndex: 150, columnHeights: [16, 4000, 123_456, 17], contentBottom: 123_440, placementCursor: 3),
        qualityTotals: LayoutQualityTotals(orderInversions: 12, largestDisplacement: 4))

    @Test func roundTrips() throws {
        let text = cursor.encoded()
        #expect(text.hasPrefix("fl3."))
        #expect(text.allSatisfy { $0.isLetter || $0.isNumber || "-_.".contains($0) }, "URL-safe")
        #expect(try LayoutCursor(decoding: text) == cursor)
    }

    @Test func everySingleCharacterChangeIsDetected() throws {
        let text = Array(cursor.encoded())
        for position in 4..<text.count {
            var damaged = text
            damaged[position] = damaged[position] == "A" ? "B" : "A"
            #expect(throws: LayoutError.self, "change at \(position)") { try LayoutCursor(decoding: String(damaged)) }
        }
    }

    @Test(arguments: ["", "fl3.", "fl4.AAAA", "fl3.not base64!", "page-2"])
    func garbageIsACleanError(text: String) {
        #expect(throws: LayoutError.self) { try LayoutCursor(decoding: text) }
    }

    /// Cursors from before fonts were part of a layout cannot say which fonts they were made with.
    @Test(arguments: ["fl1.AXKbFQM0ROLXTfeVMyxrQOwBFI4NAAAABJYLig2HC54N7MV7QsXsb28", "fl2.AAAA"])
    func cursorsFromBeforeFontsWereRecordedAreRefusedSayingSo(text: String) {
        #expect {
            try LayoutCursor(decoding: text)
        } throws: { error in
            let error = error as? LayoutError
            return error?.code == .cursorMismatch && error?.message.contains("before fonts were part of a layout") == true
        }
    }

}

@Suite struct StableHashTests {
    /// Published FNV-1a 64 test vectors: the hash must not depend on the process, unlike Swift's `Hasher`.
    @Test(arguments: [("", 0xcbf2_9ce4_8422_2325 as UInt64), ("a", 0xaf63_dc4c_8601_ec8c), ("foobar", 0x8594_4171_f739_67e8)])
    func matchesFNV1aVectors(input: String, expected: UInt64) {
        var hash = StableHash()
        hash.combine(input)
        #expect(hash.value == expected)
    }

    /// A string is hashed as its UTF-8 bytes, one after another, whatever its storage.
    @Test func aStringHashesAsItsBytes() {
        for text in ["日本語 📷 café", String(repeating: "ab", count: 40), "x" + String(1234567), "tail"[...].uppercased()] {
            var whole = StableHash()
            whole.combine(text)
            var bytes = StableHash()
            for byte in Array(text.utf8) { bytes.combine(byte) }
            #expect(whole.value == bytes.value, "\(text)")
        }
    }

    @Test func fingerprintChangesWithEveryLayoutOption() {
        let base = LayoutOptions()
        var changed: [LayoutOptions] = []
        var a = base; a.waterfall.containerWidth += 1; changed.append(a)
        var b = base; b.waterfall.rowGap += 1; changed.append(b)
        var c = base; c.annotation.textLines = 5; changed.append(c)
        var d = base; d.pagination.pageSize = 7; changed.append(d)
        var e = base; e.annotation.text.size += 1; changed.append(e)
        var f = base; f.waterfall.direction = .rightToLeft; changed.append(f)
        for options in changed { #expect(options.fingerprint != base.fingerprint) }
        var g = base; g.maximumPages = 1
        #expect(g.fingerprint == base.fingerprint, "fetching one page at a time must accept the same cursors")
    }
}
