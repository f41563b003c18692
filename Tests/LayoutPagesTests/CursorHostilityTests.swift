import ByteTools
import Foundation
import FeedIngest
import FeedLayoutTestSupport
import PropertyBased
import Testing
import TextMeasure
import WaterfallLayout

@testable import LayoutPages

/// The sequential half of a run over synthetic items, as `--resume` goes through it: no fonts, no files.
struct CursorRun {
    var options: LayoutOptions
    var items: [PreparedItem]
    static let fonts = LayoutFonts(title: [], caption: [])

    /// `count` items with photos of seeded sizes, in a layout with sections when `sections` is set.
    init(
        options: LayoutOptions = LayoutOptions(pagination: PaginationRule(pageSize: 7)), count: Int = 40,
        seed: UInt64 = 1, sections: Bool = false
    ) {
        self.options = options
        var random = SplitMix64(seed: seed)
        items = (0..<count).map { index in
            let size = Size(width: Double(1 + random.next() % 4000), height: Double(1 + random.next() % 4000))
            let section = sections ? "section \(index / 9)" : nil
            return PreparedItem(
                item: FeedItem(index: index, id: "item-\(index)", layout: LayoutHints(section: section)),
                photo: ResolvedPhoto(url: nil, size: size, sizeSource: .fallback, info: nil),
                annotations: [PreparedAnnotation(title: nil, text: nil)], warnings: [])
        }
    }

    /// The pages from `resume` on (from the first page without one).
    func pages(resume: String?) throws -> [LayoutPage] {
        let geometry = try options.geometries(annotationBand: nil)[0]
        var assembler = try PageAssembler(options: options, fonts: Self.fonts, geometry: geometry, resume: resume)
        var pages: [LayoutPage] = []
        let remaining = items.filter { !assembler.isBeforeCursor($0.item) }
        try assembler.add(remaining[...]) { pages.append($0) }
        _ = try assembler.finish { pages.append($0) }
        return pages
    }

    /// The pages from `resume`, or the cursor error it ends in; any other error fails the test.
    func outcome(resume: String) -> Result<[LayoutPage], LayoutError> {
        do {
            return .success(try pages(resume: resume))
        } catch let error as LayoutError {
            #expect([.invalidCursor, .cursorMismatch].contains(error.code), "\(error)")
            #expect(error.message.hasPrefix("--resume:"), "\(error)")
            return .failure(error)
        } catch {
            Issue.record("not a LayoutError: \(error)")
            return .failure(LayoutError(.invalidCursor, "\(error)"))
        }
    }

    /// Every cursor a full run writes.
    func cursors() throws -> [String] { try pages(resume: nil).compactMap(\.cursor) }
}

/// A cursor's payload with a correct checksum, encoded as `prefix` says: what anyone who reads the source can write.
func encodeWithChecksum(_ body: [UInt8], prefix: String) -> String {
    var hash = StableHash()
    for byte in body { hash.combine(byte) }
    var payload = body
    for shift in stride(from: 0, to: 64, by: 8) {
        payload.append(UInt8(truncatingIfNeeded: hash.value >> UInt64(shift)))
    }
    return prefix + Base64.encode(payload, alphabet: .urlSafe, padded: false)
}

/// Values that break naive arithmetic.
let hostileValues = [
    Int.min, Int.min + 1, -(1 << 53), -1, 0, 1, 2, 7, (1 << 53) - 1, 1 << 53, 1 << 62, Int.max - 1, Int.max,
]

@Suite struct CursorHostilityTests {
    @Test func validCursorsResumeToTheSamePages() throws {
        for sections in [false, true] {
            let run = CursorRun(sections: sections)
            let whole = try run.pages(resume: nil)
            for (index, page) in whole.enumerated() {
                guard let cursor = page.cursor else { continue }
                let resumed = try run.pages(resume: cursor)
                #expect(resumed.map { $0.items.map(\.placed) } == whole[(index + 1)...].map { $0.items.map(\.placed) })
            }
        }
    }

    /// Random base64url text after a prefix of a valid cursor: refused (the checksum), never a trap. (A single
    /// character after a whole cursor may add no byte, and then it is that cursor.)
    @Test func randomTextAfterAValidPrefixNeverTraps() async throws {
        let run = CursorRun()
        let cursors = try run.cursors()
        await propertyCheck(count: 300, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix64(seed: UInt64(seed))
            let cursor = cursors[Int(random.next() % UInt64(cursors.count))]
            let kept = cursor.prefix(4 + Int(random.next() % UInt64(cursor.count - 3)))
            let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
            let tail = String((0..<(1 + random.next() % 64)).map { _ in alphabet[Int(random.next() % 64)] })
            _ = run.outcome(resume: String(kept) + tail)
        }
    }

    /// Random bytes appended to, or written over, a valid cursor's payload, with the checksum made right again:
    /// a clear cursor error or a run that ends, never a trap.
    @Test(arguments: [false, true])
    func randomBytesWithAValidChecksumNeverTrap(sections: Bool) async throws {
        let run = CursorRun(sections: sections)
        let cursors = try run.cursors()
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix64(seed: UInt64(seed))
            let cursor = cursors[Int(random.next() % UInt64(cursors.count))]
            let payload = Base64.decode(cursor.dropFirst(4).utf8, alphabet: .urlSafe, padded: false)!
            var body = Array(payload.dropLast(8))
            let start = 1 + Int(random.next() % UInt64(body.count - 1))
            let bytes = (0..<(1 + random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            if random.next() % 2 == 0 {
                body = Array(body[..<start]) + bytes
            } else {
                for (offset, byte) in bytes.enumerated() where start + offset < body.count {
                    body[start + offset] = byte
                }
            }
            _ = run.outcome(resume: encodeWithChecksum(body, prefix: String(cursor.prefix(4))))
        }
    }

    /// Cursors of this run re-encoded with hostile field values: refused with a cursor error, or (for values a
    /// run could have written) resumed; never a trap, never a page past what the feed holds.
    @Test(arguments: [false, true])
    func hostileFieldValuesAreRefused(sections: Bool) async throws {
        let run = CursorRun(sections: sections)
        let cursors = try run.cursors().map { try LayoutCursor(decoding: $0) }
        await propertyCheck(count: 400, input: Gen.int(in: 0...Int.max)) { seed in
            var random = SplitMix64(seed: UInt64(seed))
            func hostile() -> Int { hostileValues[Int(random.next() % UInt64(hostileValues.count))] }
            var cursor = cursors[Int(random.next() % UInt64(cursors.count))]
            guard case .waterfall(var state) = cursor.state else { return }
            for _ in 0..<(1 + random.next() % 3) {
                switch random.next() % 13 {
                case 0: cursor.pageIndex = hostile()
                case 1: state.nextIndex = hostile()
                case 2: state.contentBottom = hostile()
                case 3: state.placementCursor = hostile()
                case 4: cursor.qualityTotals.orderInversions = hostile()
                case 5: cursor.qualityTotals.largestDisplacement = hostile()
                case 6: state.columnHeights[Int(random.next() % UInt64(state.columnHeights.count))] = hostile()
                case 7: state.columnHeights.append(hostile())
                case 8: state.columnHeights.removeLast()
                case 9: state.section.index = hostile()
                // The encoder writes the start plus one: Int.max would trap the test's own encoding.
                case 10: state.section.start = min(hostile(), Int.max - 1)
                case 11: state.section.headerLength = hostile()
                default: state.section.firstIndex = hostile()
                }
            }
            // A section key forces version 4, which carries the section fields.
            if random.next() % 2 == 0 { cursor.sectionKey = 1 }
            cursor.state = .waterfall(state)
            if case .success(let pages) = run.outcome(resume: cursor.encoded()) {
                #expect(pages.allSatisfy { $0.items.allSatisfy { $0.index < run.items.count } })
                // An accepted cursor is one the run could have written: the pages go on where it says.
                if let first = pages.first {
                    #expect(first.index == cursor.pageIndex)
                    #expect(first.items.first?.index == state.nextIndex)
                }
            }
        }
    }

    @Test func namedHostileCursorsSayWhatIsWrong() throws {
        let run = CursorRun()
        let valid = try LayoutCursor(decoding: try run.cursors()[1])
        guard case .waterfall(let state) = valid.state else { throw CursorTestError.notAWaterfall }

        func message(_ change: (inout LayoutCursor, inout WaterfallState) -> Void) -> String {
            var cursor = valid
            var changed = state
            change(&cursor, &changed)
            cursor.state = .waterfall(changed)
            guard case .failure(let error) = run.outcome(resume: cursor.encoded()) else { return "accepted" }
            return error.message
        }
        #expect(message { cursor, _ in cursor.pageIndex = Int.max }.contains("page \(Int.max) cannot follow"))
        #expect(message { cursor, _ in cursor.pageIndex = 1 << 62 }.contains("cannot follow 14 items"))
        // Two pages of at most 7 items cannot hold 14 items and a third page: page 1 after 14 items is a lie.
        #expect(message { cursor, _ in cursor.pageIndex = 1 }.contains("pages hold at most 7"))
        #expect(message { _, state in state.columnHeights.append(16) }.contains("has 5 columns; this layout has 4"))
        #expect(message { _, state in state.columnHeights[0] = 1 << 60 }.contains("heights outside"))
        #expect(message { _, state in state.contentBottom = Int.max }.contains("content bottom"))
        #expect(message { _, state in state.nextIndex = 1 << 53 }.contains("next item"))
        #expect(
            message { cursor, state in
                cursor.sectionKey = 1
                state.section.start = 1 << 60
            }.contains("inconsistent section"))
        #expect(message { cursor, _ in cursor.qualityTotals.orderInversions = 1 << 60 }.contains("order totals"))
    }

    @Test func oversizedAndTruncatedCursorsAreRefused() {
        let run = CursorRun()
        let long = "fl3." + String(repeating: "A", count: LayoutCursor.maximumLength)
        guard case .failure(let error) = run.outcome(resume: long) else {
            Issue.record("a cursor over \(LayoutCursor.maximumLength) characters was accepted")
            return
        }
        #expect(error.message.contains("cursors are at most"))
        for text in ["", "fl3.", "fl4.AAAA", "fl5.AAAA", "fl3.!!!!"] {
            #expect(throws: LayoutError.self) { try LayoutCursor(decoding: text) }
        }
    }
}

enum CursorTestError: Error { case notAWaterfall }

/// Replays `Fixtures/cursor-fuzz/`: inputs the `CursorFuzzer` (FuzzTesting/) found interesting, turned into cursors as
/// it does — the first byte picks the layout (bit 7: with sections) and the mode (÷3: the text whole, a cut real
/// cursor plus text, a real cursor's payload overwritten with a valid checksum), the second byte the real cursor and
/// the cut or offset — over this file's synthetic runs instead of the fuzzer's feed. Each ends in pages or a cursor
/// error, never a trap.
@Suite struct CursorFuzzRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/Fixtures/cursor-fuzz"

    /// The cursor the fuzzer makes of `input` from `cursors`.
    static func cursor(from input: [UInt8], cursors: [String]) -> String {
        let chosen = cursors[Int(input[1]) % cursors.count]
        let rest = Array(input[2...])
        switch input[0] % 3 {
        case 0: return String(decoding: input[1...], as: UTF8.self)
        case 1: return String(chosen.prefix(Int(input[1]) % (chosen.count + 1))) + String(decoding: rest, as: UTF8.self)
        default:
            let body = Array(Base64.decode(chosen.dropFirst(4).utf8, alphabet: .urlSafe, padded: false)!.dropLast(8))
            let start = 1 + Int(input[1]) % (body.count - 1)
            let rewritten = Array(body[..<start]) + rest + body[min(body.count, start + rest.count)...]
            return encodeWithChecksum(rewritten, prefix: String(chosen.prefix(4)))
        }
    }

    @Test func fuzzedCursorInputsStayFixed() throws {
        let inputs = try TestInputs.files(in: Self.folder).filter { $0.bytes.count >= 2 }
        // An empty folder would let this test pass without checking anything.
        try #require(inputs.count >= 10, "\(Self.folder) holds the cursor fuzzer's inputs to replay")
        let runs = [CursorRun(), CursorRun(sections: true)]
        let cursors = try runs.map { try $0.cursors() }
        for (_, input) in inputs {
            let which = Int(input[0] >> 7)
            _ = runs[which].outcome(resume: Self.cursor(from: input, cursors: cursors[which]))
        }
    }
}
