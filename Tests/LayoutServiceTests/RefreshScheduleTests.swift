import Foundation
import Testing

@testable import LayoutService

/// When a subscription is fetched next: the hints read from a response and a feed, the clamping, the backoff and the
/// jitter, and what changed between two versions of a feed.
@Suite struct RefreshScheduleTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    /// An id whose jitter fraction is 0.5 (its first eight hex digits are 0x80000000).
    static let halfID = "80000000" + String(repeating: "0", count: 24)

    @Test func freshnessComesFromMaxAgeLessAgeElseExpiresLessDate() {
        #expect(RefreshSchedule.freshness(headers: ["cache-control": "public, max-age=300"], now: Self.now) == 300)
        #expect(RefreshSchedule.freshness(headers: ["cache-control": "max-age=300", "age": "100"], now: Self.now) == 200)
        #expect(RefreshSchedule.freshness(headers: ["cache-control": "no-cache, max-age=300"], now: Self.now) == 0)
        #expect(
            RefreshSchedule.freshness(
                headers: ["expires": "Thu, 01 Jan 1970 00:10:00 GMT", "date": "Thu, 01 Jan 1970 00:00:00 GMT"],
                now: Self.now) == 600)
        // An invalid Expires is already expired.
        #expect(RefreshSchedule.freshness(headers: ["expires": "0"], now: Self.now) == 0)
        #expect(RefreshSchedule.freshness(headers: [:], now: Self.now) == nil)
        // max-age wins over Expires.
        #expect(
            RefreshSchedule.freshness(
                headers: ["cache-control": "max-age=60", "expires": "Thu, 01 Jan 1970 00:10:00 GMT"], now: Self.now)
                == 60)
    }

    @Test func retryAfterIsSecondsOrADate() {
        #expect(RefreshSchedule.retryAfter("120", now: Self.now) == 120)
        #expect(RefreshSchedule.retryAfter("Thu, 01 Jan 1970 00:02:00 GMT", now: Date(timeIntervalSince1970: 0)) == 120)
        #expect(RefreshSchedule.retryAfter("soon", now: Self.now) == nil)
        #expect(RefreshSchedule.retryAfter(nil, now: Self.now) == nil)
    }

    @Test func theFeedsOwnHintsAreItsTTLAndItsUpdatePeriod() {
        func hint(_ head: String) -> Int? {
            RefreshSchedule.feedHint(Array("<rss><channel><title>t</title>\(head)<item/></channel></rss>".utf8))
        }
        #expect(hint("<ttl>15</ttl>") == 900)
        #expect(hint("<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>4</sy:updateFrequency>") == 900)
        #expect(hint("<syn:updatePeriod> daily </syn:updatePeriod>") == 86_400)
        // Both: the longer.
        #expect(hint("<ttl>60</ttl><sy:updatePeriod>daily</sy:updatePeriod>") == 86_400)
        #expect(hint("<ttl>soon</ttl>") == nil)
        #expect(hint("") == nil)
    }

    @Test func intervalsAreClampedBackedOffAndJitteredByTheID() {
        let schedule = RefreshSchedule(minSeconds: 100, maxSeconds: 1000, floorSeconds: 60)
        let zeroID = String(repeating: "0", count: 32)
        #expect(schedule.afterSuccess(hint: nil, id: zeroID) == 100)
        #expect(schedule.afterSuccess(hint: 10, id: zeroID) == 100)
        #expect(schedule.afterSuccess(hint: 5000, id: zeroID) == 1000)
        #expect(schedule.afterSuccess(hint: 300, id: Self.halfID) == 315)
        // Never past the upper bound.
        #expect(schedule.afterSuccess(hint: 990, id: Self.halfID) == 1000)
        #expect(schedule.afterFailure(1, retryAfter: nil, id: zeroID) == 100)
        #expect(schedule.afterFailure(2, retryAfter: nil, id: zeroID) == 200)
        #expect(schedule.afterFailure(4, retryAfter: nil, id: zeroID) == 800)
        #expect(schedule.afterFailure(5, retryAfter: nil, id: zeroID) == 1000)
        #expect(schedule.afterFailure(500, retryAfter: nil, id: zeroID) == 1000)
        #expect(schedule.afterFailure(1, retryAfter: 450, id: zeroID) == 450)
        // The service's floor wins over a lower minimum.
        let floored = RefreshSchedule(minSeconds: 1, maxSeconds: 30, floorSeconds: 60)
        #expect(floored.afterSuccess(hint: nil, id: zeroID) == 60)
        #expect(RefreshSchedule.jitterFraction(id: Self.halfID) == 0.5)
    }

    @Test func changesAreCountedByItemIdentity() async throws {
        func feed(_ items: [(String, String)]) -> [UInt8] {
            var text = "<rss version=\"2.0\"><channel><title>t</title>"
            for (guid, title) in items { text += "<item><guid>\(guid)</guid><title>\(title)</title></item>" }
            return Array((text + "</channel></rss>").utf8)
        }
        let old = try #require(await FeedItemChanges.items(of: feed([("a", "A"), ("b", "B"), ("c", "C")]), name: "f", base: nil))
        let new = try #require(
            await FeedItemChanges.items(of: feed([("d", "D"), ("a", "A"), ("b", "B2")]), name: "f", base: nil))
        let changes = FeedItemChanges(old: old, new: new)
        #expect(changes == FeedItemChanges(added: 1, removed: 1, changed: 1))
        #expect(FeedItemChanges(old: old, new: old) == FeedItemChanges())
        #expect(await FeedItemChanges.items(of: Array("not a feed".utf8), name: "f", base: nil) == nil)
    }

    /// A feed of many megabytes is read whole (handed to the reader in one piece, a 58 MB feed's version listed 7,769
    /// of its 100,020 items: the reader stopped after some 16 MB; it is now read in chunks, as a file is).
    @Test func everyItemOfALargeFeedIsCounted() async throws {
        var text = "<?xml version=\"1.0\"?><rss version=\"2.0\"><channel><title>t</title>\n"
        let caption = String(repeating: "a caption of some length, ", count: 26)
        for index in 0..<30_000 {
            text += "<item><guid>g\(index)</guid><title>Item \(index)</title><description>\(caption)</description></item>\n"
        }
        let feed = Array((text + "</channel></rss>\n").utf8)
        #expect(feed.count > 20_000_000)
        let items = try #require(await FeedItemChanges.items(of: feed, name: "f", base: nil))
        #expect(items.count == 30_000)
        #expect(Set(items.map(\.key)).count == 30_000)
    }
}
