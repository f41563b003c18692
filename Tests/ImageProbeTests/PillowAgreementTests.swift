import Foundation
import ImageProbe
import Testing

/// Checks our answers against Pillow's, recorded in `Fixtures/pillow.json` by
/// `make_fixtures.py` (`Image.open(p).size`, `getexif()[0x0112]`, `is_animated`).
///
/// Where Pillow refuses a file it has no opinion. Where it has one, we agree except in the
/// deliberate disagreements listed here, each with its reason.
struct PillowAgreementTests {
    static let deliberateDisagreements: [String: String] = [
        "jpeg-orientation-invalid.jpg": "Pillow reports orientation 9; EXIF defines only 1...8, so we use 1 and warn",
        "png-exif-after-idat.png": "Pillow reads eXIf after IDAT; the PNG specification and issue 4 say to ignore it",
        "png-chunk-before-ihdr.png": "Pillow accepts a chunk before IHDR; PNG requires IHDR first",
        "jpeg-segment-length-too-small.jpg": "Pillow skips a segment of length 1; no reader can know where it ends",
        "jpeg-mpo.jpg/animated": "Pillow counts the MPO stereo pair as frames; we describe the first frame only",
    ]

    struct Opinion: Decodable {
        var width: Int?
        var height: Int?
        var orientation: Int?
        var animated: Bool?
        var error: String?
        var meanColor: [Int]?
        var thumbHash: String?
    }

    static func opinions() throws -> [String: Opinion] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("pillow.json")))
        return try JSONDecoder().decode([String: Opinion].self, from: data)
    }

    @Test func everyFixtureHasAPillowOpinion() throws {
        #expect(Set(try Self.opinions().keys) == Set(try Fixtures.allNames()))
    }

    @Test func sizeOrientationAndAnimationAgreeWithPillow() throws {
        var compared = 0
        for (name, opinion) in try Self.opinions().sorted(by: { $0.key < $1.key }) {
            guard opinion.error == nil, Self.deliberateDisagreements[name] == nil else { continue }
            let info = try #require(Fixtures.parse(try Fixtures.bytes(name)).info, "\(name)")
            #expect(info.width == opinion.width, "\(name)")
            #expect(info.height == opinion.height, "\(name)")
            #expect(info.orientation == opinion.orientation, "\(name)")
            if Self.deliberateDisagreements["\(name)/animated"] == nil {
                #expect(info.isAnimated == opinion.animated, "\(name)")
            }
            compared += 1
        }
        #expect(compared >= 50)
    }

    /// Opt-in: any set of real files, with Pillow's opinions recorded by `Fixtures/pillow_corpus.py`
    /// in the JSON file named by `IMAGEPROBE_PILLOW_CORPUS`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["IMAGEPROBE_PILLOW_CORPUS"] != nil))
    func realFilesAgreeWithPillow() throws {
        let path = try #require(ProcessInfo.processInfo.environment["IMAGEPROBE_PILLOW_CORPUS"])
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let opinions = try JSONDecoder().decode([String: Opinion].self, from: data)
        var (agreed, pillowOnly, oursOnly) = (0, 0, 0)
        for (file, opinion) in opinions.sorted(by: { $0.key < $1.key }) {
            let result = Result { () throws(ImageProbeError) in try LocalImageProber().probe(path: file) }
            switch (result, opinion.error) {
            case (.success(let info), nil):
                #expect(info.width == opinion.width && info.height == opinion.height, "\(file)")
                // Pillow honours an eXIf after IDAT (libpng's own pngtest.png has one); we ignore it,
                // with a warning when the chunk is among the bytes at hand (the whole file here).
                var ignoredLateExif = false
                if info.format == .png && info.orientation != opinion.orientation {
                    let whole = Fixtures.parse(try Fixtures.bytes(atPath: file)).info
                    ignoredLateExif = (whole?.warnings ?? []).contains { $0.contains("after the image data (IDAT)") }
                }
                #expect(info.orientation == opinion.orientation || ignoredLateExif, "\(file)")
                agreed += 1
            case (.failure(let error), nil):
                // Pillow reads formats we do not (ICO, TIFF, ...); anything else is a disagreement.
                #expect(error.code == .unknownFormat, "\(file): \(error)")
                pillowOnly += 1
            case (.success, _):
                oursOnly += 1
            case (.failure, _):
                break
            }
        }
        print("Pillow corpus: \(agreed) agree, \(pillowOnly) only Pillow reads, \(oursOnly) only we read")
        // Decoding every JPEG and PNG must never crash or print; failures are reported, not fatal.
        var (decoded, refused) = (0, 0)
        for file in opinions.keys.sorted() where file.hasSuffix(".png") || file.hasSuffix(".jpg") {
            switch Result(catching: { () throws(ImageProbeError) in try LocalImageProber().placeholder(path: file) }) {
            case .success(let placeholder):
                #expect(placeholder.thumbHash.count >= 5)
                decoded += 1
            case .failure: refused += 1
            }
        }
        print("Pillow corpus: \(decoded) decoded with placeholders, \(refused) refused by libjpeg/libpng")
    }

    /// The listed disagreements really are disagreements (so the list cannot go stale).
    @Test func deliberateDisagreementsStillDiffer() throws {
        let opinions = try Self.opinions()
        for (key, _) in Self.deliberateDisagreements {
            let name = String(key.split(separator: "/")[0])
            let opinion = try #require(opinions[name])
            let result = Fixtures.parse(try Fixtures.bytes(name))
            if key.hasSuffix("/animated") {
                #expect(result.info?.isAnimated != opinion.animated, "\(key)")
            } else {
                #expect(
                    result.info == nil || result.info?.orientation != opinion.orientation
                        || result.info?.width != opinion.width, "\(key)")
            }
        }
    }
}
