import ImageProbe
import Testing

/// The nastiest cases from issue 4, one fixture each (see `Fixtures/make_fixtures.py`):
/// orientation 1–8 in both byte orders, IFD0 not at offset 8, Exif after SOF, a thumbnail SOF
/// inside Exif, MPO, SOF1/2/3/9/10/15, fill bytes, junk between segments, bad segment
/// lengths, truncation before and after SOF, height 0, CMYK, CgBI, APNG, a chunk before IHDR,
/// a bad IHDR CRC, eXIf before and after IDAT, 16-bit and interlaced PNG, huge dimensions,
/// GIF, WebP and BMP variants.
struct FixtureExpectationTests {
    /// What a fixture must parse to.
    enum Expectation: Sendable, CustomTestStringConvertible {
        /// All of ImageInfo except `bytesRead` (checked by `PrefixTests`), and warnings given as
        /// one expected fragment per warning, in order.
        case info(ImageInfo, warningFragments: [String] = [])
        case failure(ImageProbeError.Code, messageFragment: String)

        var testDescription: String {
            switch self {
            case .info(let info, _): "\(info.format) \(info.width)×\(info.height) o\(info.orientation)"
            case .failure(let code, _): "failure \(code)"
            }
        }
    }

    static func jpeg(
        _ width: Int = 6, _ height: Int = 4, orientation: Int = 1, progressive: Bool = false, cmyk: Bool = false,
        bitDepth: Int = 8
    ) -> ImageInfo {
        ImageInfo(
            format: .jpeg, width: width, height: height, orientation: orientation, isProgressive: progressive,
            isCMYK: cmyk, bitDepth: bitDepth)
    }

    static func png(
        _ width: Int = 6, _ height: Int = 4, orientation: Int = 1, interlaced: Bool = false, animated: Bool = false,
        bitDepth: Int = 8, apple: Bool = false
    ) -> ImageInfo {
        ImageInfo(
            format: .png, width: width, height: height, orientation: orientation, isInterlaced: interlaced,
            isAnimated: animated, bitDepth: bitDepth, isAppleOptimizedPNG: apple)
    }

    static let orientationCases: [(String, Expectation)] = (1...8).flatMap { value in
        ["le", "be"].map { order in
            ("jpeg-orientation-\(value)-\(order).jpg", Expectation.info(jpeg(orientation: value)))
        }
    }

    static let cases: [(String, Expectation)] =
        orientationCases + [
            ("jpeg-baseline.jpg", .info(jpeg())),
            ("jpeg-ifd0-far-offset.jpg", .info(jpeg(orientation: 6))),
            ("jpeg-exif-after-sof.jpg", .info(jpeg(orientation: 8))),
            ("jpeg-thumbnail-sof-in-exif.jpg", .info(jpeg(orientation: 3))),
            ("jpeg-orientation-only-in-ifd1.jpg", .info(jpeg(orientation: 1))),
            ("jpeg-second-exif-ignored.jpg", .info(jpeg(orientation: 1))),
            ("jpeg-orientation-invalid.jpg", .info(jpeg(orientation: 1), warningFragments: ["orientation value 9"])),
            ("jpeg-orientation-long-type.jpg", .info(jpeg(orientation: 7))),
            ("jpeg-mpo.jpg", .info(jpeg())),
            ("jpeg-sof1-extended-12bit.jpg", .info(jpeg(bitDepth: 12))),
            ("jpeg-sof2-progressive.jpg", .info(jpeg(progressive: true))),
            ("jpeg-sof3-lossless.jpg", .info(jpeg())),
            ("jpeg-sof9-arithmetic.jpg", .info(jpeg())),
            ("jpeg-sof10-progressive-arithmetic.jpg", .info(jpeg(progressive: true))),
            ("jpeg-sof15-lossless-arithmetic.jpg", .info(jpeg())),
            ("jpeg-cmyk-adobe.jpg", .info(jpeg(cmyk: true))),
            ("jpeg-grayscale.jpg", .info(jpeg())),
            ("jpeg-fill-bytes.jpg", .info(jpeg(orientation: 5))),
            (
                "jpeg-junk-between-segments.jpg",
                .info(jpeg(), warningFragments: ["skipped 6 junk byte(s) between segments at byte 20"])
            ),
            ("jpeg-standalone-markers.jpg", .info(jpeg())),
            (
                "jpeg-segment-length-too-small.jpg",
                .failure(.invalidHeader, messageFragment: "declares length 1, the minimum is 2")
            ),
            ("jpeg-segment-length-past-end.jpg", .failure(.truncated, messageFragment: "before the frame header")),
            ("jpeg-truncated-before-sof.jpg", .failure(.truncated, messageFragment: "before the frame header")),
            ("jpeg-truncated-after-sof.jpg", .info(jpeg(), warningFragments: ["before the first scan"])),
            ("jpeg-truncated-in-scan.jpg", .info(jpeg())),
            ("jpeg-height-zero-dnl.jpg", .failure(.invalidDimensions, messageFragment: "height 0")),
            ("jpeg-huge-dimensions.jpg", .info(jpeg(65535, 65500))),

            ("png-rgb.png", .info(png())),
            ("png-gradient.png", .info(png(40, 30))),
            ("png-gradient-alpha.png", .info(png(30, 40))),
            ("jpeg-gradient.jpg", .info(jpeg(300, 200))),
            ("jpeg-gradient-orientation-6.jpg", .info(jpeg(300, 200, orientation: 6))),
            ("png-16bit-gray.png", .info(png(bitDepth: 16))),
            ("png-palette.png", .info(png(bitDepth: 1))),
            ("png-interlaced.png", .info(png(7, 5, interlaced: true))),
            ("png-exif-before-idat.png", .info(png(orientation: 6))),
            ("png-exif-after-idat.png", .info(png(), warningFragments: ["after the image data (IDAT) and is ignored"])),
            ("png-exif-with-identifier.png", .info(png(orientation: 7))),
            ("png-chunk-before-ihdr.png", .failure(.invalidHeader, messageFragment: "the first chunk is 'tEXt'")),
            ("png-bad-ihdr-crc.png", .failure(.invalidHeader, messageFragment: "IHDR CRC is 0x12345678")),
            ("png-bad-colour-depth.png", .failure(.invalidHeader, messageFragment: "colour type 2 with bit depth 4")),
            ("png-bad-idat-crc.png", .info(png())),
            ("png-huge-dimensions.png", .info(png(2_147_483_647, 2_147_483_647))),
            ("png-truncated-in-ihdr.png", .failure(.truncated, messageFragment: "inside the IHDR chunk")),
            ("png-apple-cgbi.png", .info(png(5, 3, apple: true))),
            ("png-apng.png", .info(png(animated: true))),

            ("gif-static.gif", .info(ImageInfo(format: .gif, width: 6, height: 4))),
            ("gif-animated.gif", .info(ImageInfo(format: .gif, width: 6, height: 4, isAnimated: true))),
            ("gif-truncated-screen.gif", .failure(.truncated, messageFragment: "logical screen descriptor")),
            ("webp-lossy.webp", .info(ImageInfo(format: .webp, width: 6, height: 4))),
            ("webp-lossless.webp", .info(ImageInfo(format: .webp, width: 6, height: 4))),
            ("webp-animated.webp", .info(ImageInfo(format: .webp, width: 6, height: 4, isAnimated: true))),
            ("webp-exif.webp", .info(ImageInfo(format: .webp, width: 6, height: 4, orientation: 6))),
            ("bmp-bottom-up.bmp", .info(ImageInfo(format: .bmp, width: 6, height: 4, bitDepth: 24))),
            ("bmp-top-down.bmp", .info(ImageInfo(format: .bmp, width: 6, height: 4, bitDepth: 24))),
            ("bmp-os2-core.bmp", .info(ImageInfo(format: .bmp, width: 5, height: 2, bitDepth: 24))),
            // The message says what the file looks like, never its bytes (they may be a secret).
            ("unknown-format.bin", .failure(.unknownFormat, messageFragment: "the file starts like binary data")),
            ("empty.bin", .failure(.truncated, messageFragment: "empty")),
        ]

    @Test(arguments: cases)
    func fixtureParsesAsExpected(name: String, expectation: Expectation) throws {
        let result = Fixtures.parse(try Fixtures.bytes(name))
        switch expectation {
        case .info(var expected, let fragments):
            let actual = try #require(result.info, "\(name): \(result)")
            expected.bytesRead = actual.bytesRead
            expected.warnings = actual.warnings
            #expect(actual == expected)
            #expect(actual.warnings.count == fragments.count, "\(actual.warnings)")
            for (warning, fragment) in zip(actual.warnings, fragments) {
                #expect(warning.contains(fragment), "\(warning)")
            }
        case .failure(let code, let fragment):
            let error = try #require(result.error, "\(name): \(result)")
            #expect(error.code == code)
            #expect(error.message.contains(fragment), "\(error.message)")
            #expect(error.offset != nil)
        }
    }

    @Test func everyFixtureHasAnExpectation() throws {
        let covered = Set(Self.cases.map(\.0))
        #expect(Set(try Fixtures.allNames()).subtracting(covered).isEmpty)
        #expect(covered.count == Self.cases.count)
    }

    @Test func quarterTurnsSwapDisplaySize() throws {
        for orientation in 1...8 {
            let info = try #require(Fixtures.parse(try Fixtures.bytes("jpeg-orientation-\(orientation)-be.jpg")).info)
            let swaps = orientation >= 5
            #expect(info.displayWidth == (swaps ? 4 : 6))
            #expect(info.displayHeight == (swaps ? 6 : 4))
        }
    }

    @Test func hugeHeadersAreReportedAndFlaggedAboveTheBudget() throws {
        let png = try #require(Fixtures.parse(try Fixtures.bytes("png-huge-dimensions.png")).info)
        #expect(png.pixelCount == 2_147_483_647 * 2_147_483_647)
        #expect(png.exceedsPixelBudget())
        let jpeg = try #require(Fixtures.parse(try Fixtures.bytes("jpeg-huge-dimensions.jpg")).info)
        #expect(jpeg.exceedsPixelBudget())
        #expect(!jpeg.exceedsPixelBudget(65535 * 65500))
        let small = try #require(Fixtures.parse(try Fixtures.bytes("jpeg-baseline.jpg")).info)
        #expect(!small.exceedsPixelBudget())
    }
}
