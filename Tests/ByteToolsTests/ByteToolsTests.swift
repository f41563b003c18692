import ByteTools
import Foundation
import Testing

@Suite struct SHA256Tests {
    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hexDigest([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        // Lengths around the block and padding boundaries, against values from Python's hashlib.
        #expect(
            SHA256.hexDigest(Array(repeating: 0x61, count: 55))
                == "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318")
        #expect(
            SHA256.hexDigest(Array(repeating: 0x61, count: 56))
                == "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a")
        #expect(
            SHA256.hexDigest(Array(repeating: 0x61, count: 64))
                == "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb")
        #expect(
            SHA256.hexDigest(Array(repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(
            SHA256.hexDigest(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hexDigest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    /// A hasher fed piece by piece, and a copy taken before a range that goes on after it, give the digests of the
    /// whole bytes and of the bytes without that range.
    @Test func digestsWithAndWithoutARangeAreThoseOfEach() {
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) }
        for range in [0..<0, 0..<10, 63..<64, 64..<200, 1_000..<4_999, 4_000..<5_000, 5_000..<5_000, 0..<5_000] {
            let digests = bytes.withUnsafeBytes { bytes -> (whole: String, omitting: String) in
                let whole = SHA256.Hasher()
                whole.update(UnsafeRawBufferPointer(rebasing: bytes[..<range.lowerBound]))
                let other = whole.copy()
                whole.update(UnsafeRawBufferPointer(rebasing: bytes[range.lowerBound...]))
                other.update(UnsafeRawBufferPointer(rebasing: bytes[range.upperBound...]))
                return (whole.hexDigest(), other.hexDigest())
            }
            #expect(digests.whole == SHA256.hexDigest(bytes), "\(range)")
            #expect(digests.omitting == SHA256.hexDigest(Array(bytes[..<range.lowerBound] + bytes[range.upperBound...])), "\(range)")
        }
    }
}

@Suite struct GrowableBytesTests {
    @Test func growableBytesGrowAndKeepTheirBytes() {
        let buffer = GrowableBytes(capacity: 4)
        var expected: [UInt8] = []
        for round in 0..<200 {
            let run = [UInt8](repeating: UInt8(round & 0x7F), count: round % 13)
            run.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
            buffer.append(0x3C)
            expected += run + [0x3C]
        }
        #expect(buffer.count == expected.count)
        #expect(buffer.withUnsafeBufferPointer { $0[5] } == expected[5])
        #expect(buffer.count(from: expected.count - 1, where: { $0 == 0x3C }) == 1)
        #expect(buffer.count(from: expected.count, where: { _ in true }) == 0)
        let copy = buffer.copy()
        buffer.removeAll()
        buffer.append(0x41)
        #expect(buffer.withUnsafeBufferPointer { Array($0) } == [0x41])
        #expect(copy.withUnsafeBufferPointer { Array($0) } == expected)
        #expect(GrowableBytes(capacity: 0).withUnsafeBufferPointer { Array($0) }.isEmpty)
    }

    /// Runs of every length, the short ones copied without memmove, arrive whole and touch nothing after them.
    @Test func runsOfEveryLengthAreAppendedWhole() {
        let source = (0..<64).map { UInt8(truncatingIfNeeded: $0 * 7 + 1) }
        for length in 0...40 {
            for short in [false, true] {
                let bytes = GrowableBytes(capacity: 16)
                bytes.append(0xEE)
                source.withUnsafeBytes { source in
                    let run = UnsafeRawBufferPointer(rebasing: source[3..<(3 + length)])
                    if short { bytes.appendShort(run) } else { bytes.append(run) }
                }
                bytes.append(0xFF)
                let written = bytes.withUnsafeBufferPointer { Array($0) }
                #expect(written == [0xEE] + source[3..<(3 + length)] + [0xFF], "length \(length), short: \(short)")
            }
        }
    }

    @Test func scalarsAreAppendedAsUTF8() {
        for scalar: UInt32 in [
            0x41, 0x7F, 0x80, 0xE9, 0x7FF, 0x800, 0x20AC, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF,
        ] {
            var bytes: [UInt8] = []
            bytes.appendUTF8(scalar)
            #expect(bytes == Array(String(UnicodeScalar(scalar)!).utf8), "U+\(String(scalar, radix: 16))")
        }
    }
}

@Suite struct Base64Tests {
    @Test func base64URLMatchesFoundationForAllLengths() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(Base64.encode(bytes, alphabet: .urlSafe, padded: false) == foundation)
            #expect(Base64.decode(foundation.utf8, alphabet: .urlSafe, padded: false) == bytes)
        }
    }

    @Test func standardMatchesFoundationForAllLengths() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 53 &+ 250) }
            let foundation = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes, alphabet: .standard, padded: true) == foundation)
            #expect(Base64.decode(foundation.utf8, alphabet: .standard, padded: true) == bytes)
            #expect(Base64.decodeLeniently(Array(foundation.utf8)) == bytes)
        }
    }

    /// RFC 4648 section 10.
    @Test func theRFCsVectors() {
        for (text, encoded) in [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
        ] {
            #expect(Base64.encode(Array(text.utf8), alphabet: .standard, padded: true) == encoded)
            #expect(Base64.decode(encoded.utf8, alphabet: .standard, padded: true) == Array(text.utf8))
        }
    }

    @Test func strictReadingRefusesWhatItsAlphabetAndPaddingDoNot() {
        #expect(Base64.decode("ab+/".utf8, alphabet: .urlSafe, padded: false) == nil, "the other alphabet")
        #expect(Base64.decode("ab-_".utf8, alphabet: .standard, padded: true) == nil, "the other alphabet")
        #expect(Base64.decode("Zg==".utf8, alphabet: .urlSafe, padded: false) == nil, "padding where none is written")
        #expect(Base64.decode("Zg".utf8, alphabet: .standard, padded: true) == nil, "a group short of its padding")
        #expect(Base64.decode("Zg==Zg==".utf8, alphabet: .standard, padded: true) == nil, "data after padding")
        #expect(Base64.decode("Zm 9v".utf8, alphabet: .standard, padded: true) == nil, "white space")
        #expect(Data(base64Encoded: "Zm 9v") == nil && Data(base64Encoded: "Zg") == nil, "as Foundation reads them")
    }

    @Test func feedsAreReadLeniently() {
        #expect(Base64.decodeLeniently(Array("Zm9v\nYmFy".utf8)) == Array("foobar".utf8), "wrapped")
        #expect(Base64.decodeLeniently(Array("Zm9vYg".utf8)) == Array("foob".utf8), "padding left out")
        #expect(
            Base64.decodeLeniently(Array("-_-_".utf8)) == Base64.decodeLeniently(Array("+/+/".utf8)), "both alphabets")
        #expect(Base64.decodeLeniently(Array("Zg== \r\n".utf8)) == Array("f".utf8), "white space after the padding")
        #expect(Base64.decodeLeniently(Array("Zg==Zg".utf8)) == nil, "data after the padding")
        #expect(Base64.decodeLeniently(Array("Zm9v!".utf8)) == nil, "outside both alphabets")
    }
}

@Suite struct ExactTextTests {
    @Test func keysTellCanonicallyEquivalentTextsApart() {
        let composed = "caf\u{E9}.jpg"
        let decomposed = "cafe\u{301}.jpg"
        #expect(composed == decomposed, "String calls them equal")
        #expect(ExactText(composed) != ExactText(decomposed))
        #expect(ExactText(composed) == ExactText("caf\u{E9}" + ".jpg"))
        #expect(ExactText(composed).hashValue == ExactText("caf\u{E9}" + ".jpg").hashValue)
        var keys: Set<ExactText> = [ExactText(composed)]
        #expect(keys.insert(ExactText(decomposed)).inserted)
        #expect(!keys.insert(ExactText("caf\u{E9}.jpg")).inserted)
    }
}
