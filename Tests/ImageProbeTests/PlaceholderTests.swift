import Testing

@testable import ImageProbe

/// Average colour and ThumbHash placeholders.
struct PlaceholderTests {
    static func placeholder(_ name: String) throws -> ImagePlaceholder {
        let bytes = try Fixtures.bytes(name)
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ImageProbeError) in try ImagePixelDecoder.placeholder(raw, source: name) }
        }
        return try result.get()
    }

    /// On lossless PNGs our ThumbHash equals the reference encoder's (thumbhash-python, run by
    /// make_fixtures.py on Pillow's decode of the same pixels), with and without alpha.
    @Test(arguments: ["png-gradient.png", "png-gradient-alpha.png"])
    func thumbHashMatchesTheReferenceEncoder(name: String) throws {
        let reference = try #require(try PillowAgreementTests.opinions()[name]?.thumbHash)
        #expect(try Self.placeholder(name).thumbHashBase64 == reference)
    }

    /// The hash describes the image as displayed: a landscape photo turned by EXIF orientation 6
    /// gets a portrait hash (bit 15 of the second header is ThumbHash's "landscape" flag).
    @Test func thumbHashFollowsOrientation() throws {
        let upright = try Self.placeholder("jpeg-gradient.jpg").thumbHash
        let turned = try Self.placeholder("jpeg-gradient-orientation-6.jpg").thumbHash
        #expect(upright[4] & 0x80 != 0)
        #expect(turned[4] & 0x80 == 0)
        #expect(upright != turned)
    }

    @Test func averageColourOfAGradient() throws {
        // x runs 0...255 in red and 255...0 in blue, y 0...255 in green: the mean is mid-grey.
        let colour = try Self.placeholder("png-gradient.png").averageColor
        for channel in [colour.red, colour.green, colour.blue] {
            #expect(abs(Int(channel) - 127) <= 2, "\(colour)")
        }
        #expect(colour.alpha == 255)
    }

    @Test func localFilePlaceholder() throws {
        let placeholder = try LocalImageProber().placeholder(path: Fixtures.path("jpeg-gradient.jpg"))
        #expect(placeholder.thumbHash.count >= 20)
        #expect(placeholder.averageColor.alpha == 255)
    }

    /// A 3×2 image with distinct pixels, turned each of the eight ways.
    @Test func orientationMapsEveryPixel() {
        // Pixel value = 10 * row + column, stored row by row.
        let stored = RGBAImage(width: 3, height: 2, pixels: [0, 1, 2, 10, 11, 12].flatMap { [UInt8($0), 0, 0, 255] })
        func reds(_ image: RGBAImage) -> [Int] {
            stride(from: 0, to: image.pixels.count, by: 4).map { Int(image.pixels[$0]) }
        }
        let expected: [Int: (Int, Int, [Int])] = [
            1: (3, 2, [0, 1, 2, 10, 11, 12]),
            2: (3, 2, [2, 1, 0, 12, 11, 10]),
            3: (3, 2, [12, 11, 10, 2, 1, 0]),
            4: (3, 2, [10, 11, 12, 0, 1, 2]),
            5: (2, 3, [0, 10, 1, 11, 2, 12]),
            6: (2, 3, [10, 0, 11, 1, 12, 2]),
            7: (2, 3, [12, 2, 11, 1, 10, 0]),
            8: (2, 3, [2, 12, 1, 11, 0, 10]),
        ]
        for (orientation, (width, height, values)) in expected {
            let turned = stored.applying(orientation: orientation)
            #expect(turned.width == width && turned.height == height, "orientation \(orientation)")
            #expect(reds(turned) == values, "orientation \(orientation)")
        }
    }

    @Test func boxReductionAveragesBoxesAndKeepsAspect() {
        let image = RGBAImage(
            width: 400, height: 100,
            pixels: (0..<40_000).flatMap { index in
                [UInt8(index % 400 < 200 ? 0 : 200), 0, 0, 255]
            })
        func fitting(within limit: Int) -> RGBAImage {
            var box = BoxDownsampler(width: image.width, height: image.height, limit: limit)
            box.allocate()
            image.pixels.withUnsafeBufferPointer { pixels in
                for y in 0..<image.height {
                    box.consume(
                        DecodedRow(
                            y: y, firstX: 0, xStep: 1, count: image.width,
                            pixels: pixels.baseAddress! + y * image.width * 4))
                }
            }
            return box.image()
        }
        let small = fitting(within: 100)
        #expect(small.width == 100 && small.height == 25)
        #expect(small.pixels[0] == 0)
        #expect(small.pixels[(99) * 4] == 200)
        #expect(fitting(within: 400) == image)
    }

    @Test func base64MatchesTheStandardAlphabet() {
        #expect(ThumbHash.base64([]) == "")
        #expect(ThumbHash.base64([0x66]) == "Zg==")
        #expect(ThumbHash.base64([0x66, 0x6F]) == "Zm8=")
        #expect(ThumbHash.base64(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(ThumbHash.base64([0xFF, 0xFE, 0xFD]) == "//79")
    }
}
