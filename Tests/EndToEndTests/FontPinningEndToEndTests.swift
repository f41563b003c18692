import Foundation
import Testing

/// Fonts are part of a layout: the same feed and options give the same pages on every machine that has the same
/// font files, whatever else fontconfig knows or prefers, and a clear refusal where a font is missing or differs,
/// never other pages with exit 0.
@Suite struct FontPinningEndToEndTests {
    static let options = ["--width", "1024", "--page-size", "20", "--quiet"]

    /// A fontconfig configuration that knows only these folders (and caches in a folder of its own).
    static func fontconfig(folders: [String], extra: String = "") throws -> [String: String] {
        let directory = try CommandRunner.temporaryDirectory()
        let file = directory.appendingPathComponent("fonts.conf")
        let dirs = folders.map { "<dir>\($0)</dir>" }.joined()
        try """
            <?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd">
            <fontconfig>\(dirs)<cachedir>\(directory.path)/cache</cachedir>\(extra)</fontconfig>
            """.write(to: file, atomically: true, encoding: .utf8)
        return ["FONTCONFIG_FILE": file.path]
    }

    static func layout(_ extra: [String] = [], environment: [String: String] = [:]) async throws -> CommandRunner.Output {
        try await CommandRunner.run(["layout", CommandRunner.sampleFeed] + options + extra, environment: environment)
    }

    /// Today's machine, another locale and another fontconfig with the same files but other preferences (a
    /// Chinese locale and Noto Sans CJK SC preferred for sans-serif, which fontconfig's own fallback would pick for
    /// Han): the same pages, byte for byte.
    @Test func theSameFontFilesGiveTheSamePagesUnderAnyFontconfigSetup() async throws {
        let reference = try await Self.layout()
        // 1: the sample feed has a missing and a corrupt image on purpose.
        #expect(reference.status == 1, "\(reference.stderr)")
        let preferChinese = """
            <alias><family>sans-serif</family><prefer><family>Noto Sans CJK SC</family></prefer></alias>
            """
        let other = try Self.fontconfig(folders: ["/usr/share/fonts"], extra: preferChinese)
        let rerun = try await Self.layout(environment: other.merging(["LANG": "zh_CN.UTF-8", "LC_ALL": "zh_CN.UTF-8"]) { $1 })
        #expect(rerun.status == 1, "\(rerun.stderr)")
        #expect(rerun.stdout == reference.stdout)
    }

    /// With only DejaVu installed, a layout refuses to start, naming the font that is missing.
    @Test func aMissingFontIsAClearErrorAtStart() async throws {
        let dejaVuOnly = try Self.fontconfig(folders: ["/usr/share/fonts/truetype/dejavu"])
        let output = try await Self.layout(environment: dejaVuOnly)
        #expect(output.status == 2, "\(output.stderr)")
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.contains("fallback font 2"), "\(output.stderr)")  // after DejaVu Sans
        #expect(output.stderr.contains("'Noto Sans Devanagari' is not installed"), "\(output.stderr)")
    }

    /// `--font-dir` looks names up in one folder only: a folder holding the same files gives the same pages (the
    /// digests are the files', not their paths), and a folder without one of them refuses, naming it.
    @Test func aFontFolderWithTheSameFilesGivesTheSamePages() async throws {
        let reference = try await Self.layout()
        let folder = try CommandRunner.temporaryDirectory()
        let files = [
            "truetype/dejavu/DejaVuSans.ttf", "truetype/dejavu/DejaVuSans-Bold.ttf",
            "truetype/noto/NotoSansDevanagari-Regular.ttf", "truetype/noto/NotoSansDevanagari-Bold.ttf",
            "truetype/noto/NotoSansThai-Regular.ttf", "truetype/noto/NotoSansThai-Bold.ttf",
            "opentype/noto/NotoSansCJK-Regular.ttc", "opentype/noto/NotoSansCJK-Bold.ttc",
            "truetype/noto/NotoColorEmoji.ttf",
        ]
        for file in files {
            try FileManager.default.createSymbolicLink(
                at: folder.appendingPathComponent(String(file.split(separator: "/").last!)),
                withDestinationURL: URL(fileURLWithPath: "/usr/share/fonts/" + file))
        }
        let pinned = try await Self.layout(["--font-dir", folder.path])
        #expect(pinned.status == 1, "\(pinned.stderr)")
        #expect(!pinned.stderr.contains("ontconfig"), "\(pinned.stderr)")
        #expect(pinned.stdout == reference.stdout)

        for file in ["NotoSansThai-Regular.ttf", "NotoSansThai-Bold.ttf"] {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(file))
        }
        let missing = try await Self.layout(["--font-dir", folder.path])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("'Noto Sans Thai' is not in the font folder"), "\(missing.stderr)")
    }

    /// Every page records the fonts; a cursor made with one font set is refused by a run with another, naming the
    /// font that differs, and accepted by a run with the same set.
    @Test func aCursorFromAnotherFontSetIsRefusedNamingTheFont() async throws {
        let first = try await Self.layout(["--max-pages", "1"])
        let page = try PageFile(Data(first.stdoutText.split(separator: "\n")[0].utf8))
        let layout = try #require(page.json["layout"] as? [String: Any])
        let fonts = try #require(layout["fonts"] as? [String: [[String: Any]]])
        #expect(fonts["caption"]?.map { $0["family"] as? String } == [
            "DejaVu Sans", "Noto Sans Devanagari", "Noto Sans Thai", "Noto Sans CJK JP", "Noto Color Emoji",
        ])
        #expect(fonts["title"]?.first?["style"] as? String == "Bold")
        let cursor = try #require(page.cursor)

        let same = try await Self.layout(["--resume", cursor, "--max-pages", "1"])
        #expect(same.status == 1, "\(same.stderr)")

        let korean = ["--fallback-font", "DejaVu Sans", "--fallback-font", "Noto Sans CJK KR"]
        let other = try await Self.layout(["--resume", cursor] + korean)
        #expect(other.status == 2)
        #expect(other.stderr.contains("the cursor was made with other fonts"), "\(other.stderr)")
        #expect(other.stderr.contains("Noto Sans CJK KR"), "\(other.stderr)")
    }
}
