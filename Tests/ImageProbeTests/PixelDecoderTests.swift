import Foundation
import FeedLayoutTestSupport
import ImageProbe
import Testing

/// libjpeg-turbo and libpng through the C shim: verification, limits and placeholder colours.
struct PixelDecoderTests {
    static func verify(_ name: String, options: PixelDecodeOptions = PixelDecodeOptions()) throws -> Result<
        PixelDecodeReport, ImageProbeError
    > {
        let bytes = try Fixtures.bytes(name)
        return bytes.withUnsafeBytes { raw in
            Result { () throws(ImageProbeError) in
                try ImagePixelDecoder.verifyDecodable(raw, source: name, options: options)
            }
        }
    }

    /// Sound files from Pillow decode, and the average colour matches Pillow's within JPEG noise.
    @Test(arguments: [
        "jpeg-baseline.jpg", "jpeg-sof2-progressive.jpg", "jpeg-grayscale.jpg", "jpeg-orientation-6-be.jpg",
        "jpeg-thumbnail-sof-in-exif.jpg", "jpeg-mpo.jpg", "jpeg-cmyk-adobe.jpg",
        "png-rgb.png", "png-palette.png", "png-interlaced.png", "png-apng.png", "png-exif-before-idat.png",
    ])
    func soundFilesDecodeToPillowsColour(name: String) throws {
        let report = try Self.verify(name).get()
        let info = try #require(Fixtures.parse(try Fixtures.bytes(name)).info)
        #expect(report.width == info.width && report.height == info.height)
        #expect(report.decodedWidth == info.width && report.decodedHeight == info.height)
        let pillow = try #require(try PillowAgreementTests.opinions()[name]?.meanColor)
        let ours = [report.averageColor.red, report.averageColor.green, report.averageColor.blue].map(Int.init)
        for (channel, expected) in zip(ours, pillow) {
            #expect(abs(channel - expected) <= 3, "\(name): ours \(ours), Pillow \(pillow)")
        }
    }

    @Test func exactColourOfALosslessFile() throws {
        // png-rgb.png is filled with (10, 20, 30) by make_fixtures.py.
        let report = try Self.verify("png-rgb.png").get()
        #expect(report.averageColor == PlaceholderColor(red: 10, green: 20, blue: 30))
        #expect(report.averageColor.hexString == "#0a141e")
        #expect(report.scanCount == 0)
    }

    @Test func eighthScaleDecodeForPlaceholders() throws {
        let report = try Self.verify("jpeg-baseline.jpg", options: .placeholder).get()
        #expect(report.width == 6 && report.height == 4)
        #expect(report.decodedWidth == 1 && report.decodedHeight == 1)
        let full = try Self.verify("jpeg-baseline.jpg").get()
        #expect(abs(Int(report.averageColor.red) - Int(full.averageColor.red)) <= 3)
    }

    @Test func progressiveScanCap() throws {
        let uncapped = try Self.verify("jpeg-sof2-progressive.jpg").get()
        #expect(uncapped.scanCount > 2)
        let capped = try Self.verify(
            "jpeg-sof2-progressive.jpg", options: PixelDecodeOptions(maximumProgressiveScans: 2))
        #expect(throws: ImageProbeError.self) { try capped.get() }
        if case .failure(let error) = capped {
            #expect(error.code == .notDecodable)
            #expect(error.message.contains("more than 2 scans"), "\(error.message)")
        }
    }

    @Test func pixelBudgetRefusesBeforeDecoding() throws {
        for name in ["jpeg-baseline.jpg", "png-rgb.png"] {
            guard case .failure(let error) = try Self.verify(name, options: PixelDecodeOptions(pixelBudget: 23)) else {
                Issue.record("\(name) decoded above its budget")
                continue
            }
            #expect(error.code == .exceedsPixelBudget)
            #expect(error.message.hasPrefix(name))
        }
        #expect((try? Self.verify("jpeg-baseline.jpg", options: PixelDecodeOptions(pixelBudget: 24)).get()) != nil)
        guard case .failure(let huge) = try Self.verify("png-huge-dimensions.png") else {
            Issue.record("a 2³¹×2³¹ PNG decoded")
            return
        }
        #expect(huge.code == .exceedsPixelBudget)
    }

    /// Headers that parse but pixels that do not: libjpeg warnings count as failures.
    @Test(arguments: [
        ("jpeg-truncated-in-scan.jpg", "libjpeg warned"),
        ("jpeg-truncated-after-sof.jpg", "libjpeg"),
        ("jpeg-sof9-arithmetic.jpg", "libjpeg"),
        ("png-bad-idat-crc.png", "libpng"),
        ("png-apple-cgbi.png", "libpng"),
    ])
    func damagedPixelsAreNotDecodable(name: String, fragment: String) throws {
        guard case .failure(let error) = try Self.verify(name) else {
            Issue.record("\(name) decoded")
            return
        }
        #expect(error.code == .notDecodable)
        #expect(error.message.contains(fragment), "\(error.message)")
        #expect(error.message.hasPrefix(name))
    }

    @Test func otherFormatsAreRefusedWithTheirHeaderStillValid() throws {
        guard case .failure(let error) = try Self.verify("gif-static.gif") else {
            Issue.record("GIF decoded")
            return
        }
        #expect(error.code == .unknownFormat)
        #expect(error.message.contains("gif"))
    }

    @Test func localFileVerification() throws {
        let report = try LocalImageProber().verifyDecodable(path: Fixtures.path("png-exif-before-idat.png"))
        #expect(report.format == .png && report.width == 6)
        #expect(throws: ImageProbeError.self) {
            try LocalImageProber().verifyDecodable(path: Fixtures.path("png-huge-dimensions.png"))
        }
    }
}

/// Replays `Fixtures/decoder-fuzz/`: inputs the `PixelDecoderFuzzer` found interesting (new coverage, crashes once
/// fixed), through the decoders as the fuzzer calls them (verify, placeholder, resampled); each ends in a result that keeps the decoders'
/// promises or an `ImageProbeError` naming the input.
struct PixelDecoderFuzzRegressionTests {
    static let folder = Fixtures.path("decoder-fuzz")

    @Test func fuzzedDecoderInputsStayFixed() throws {
        let inputs = try TestInputs.files(in: Self.folder)
        // An empty folder would let this test pass without checking anything.
        try #require(inputs.count >= 10, "\(Self.folder) holds the pixel decoder fuzzer's inputs to replay")
        for (name, bytes) in inputs {
            // The fuzzer's options: a 16-megapixel budget and a JPEG scale chosen by the input's length.
            let options = PixelDecodeOptions(
                pixelBudget: 16_000_000, maximumProgressiveScans: 100, jpegScaleDenominator: 1 << (bytes.count % 4))
            bytes.withUnsafeBytes { raw in
                do throws(ImageProbeError) {
                    let report = try ImagePixelDecoder.verifyDecodable(raw, source: name, options: options)
                    #expect(report.decodedWidth > 0 && report.decodedWidth <= report.width, "\(name)")
                    #expect(report.decodedHeight > 0 && report.decodedHeight <= report.height, "\(name)")
                } catch {
                    #expect(error.source == name, "\(name): \(error)")
                }
                do throws(ImageProbeError) {
                    let placeholder = try ImagePixelDecoder.placeholder(raw, source: name, options: options)
                    #expect(!placeholder.thumbHash.isEmpty, "\(name)")
                } catch {
                    #expect(error.source == name, "\(name): \(error)")
                }
                do throws(ImageProbeError) {
                    let (width, height) = (1 + bytes.count % 97, 1 + bytes.count % 61)
                    let image = try ImagePixelDecoder.resampled(
                        raw, source: name, width: width, height: height, options: options)
                    #expect(image.width == width && image.height == height, "\(name)")
                    #expect(image.pixels.count == width * height * 4, "\(name)")
                } catch {
                    #expect(error.source == name, "\(name): \(error)")
                }
            }
        }
    }
}
