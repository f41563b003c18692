import Testing

@testable import FeedIngest

/// Dates as feeds write them. Where feedparser 6.0 disagrees the case says so and why.
struct DateTests {
    @Test(arguments: [
        // RFC 822 / 2822 as specified.
        ("Tue, 10 Jun 2003 04:00:00 GMT", "2003-06-10T04:00:00Z"),
        ("Wed, 01 May 2024 05:12:33 -0700", "2024-05-01T12:12:33Z"),
        ("Sun, 31 Dec 2023 23:30:00 -0100", "2024-01-01T00:30:00Z"),
        // Junk: long weekday names, 12-hour clock with a US zone (feedparser 6.0.14 ignores both
        // "PM" and "PST" here and says 12:15Z; 12:15 PM PST is 20:15 UTC).
        ("Tues, 07 May 2024 12:15 PM PST", "2024-05-07T20:15:00Z"),
        ("Thurs, 9 May 24 23:05 EDT", "2024-05-10T03:05:00Z"),
        ("Mon, 1 Jan 2024 12:00 AM GMT", "2024-01-01T00:00:00Z"),
        ("01 Jan 2024 10:00 +05:30", "2024-01-01T04:30:00Z"),
        ("Saturday, 4 May 2024 9:05:07 UT", "2024-05-04T09:05:07Z"),
        // ISO 8601 / RFC 3339 forms.
        ("2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z"),
        ("2024-05-11T08:00:00.123+05:30", "2024-05-11T02:30:00Z"),
        ("2024-05-10 14:30:00", "2024-05-10T14:30:00Z"),
        ("20240501T120000Z", "2024-05-01T12:00:00Z"),
        ("2024-05-01", "2024-05-01T00:00:00Z"),
        ("2024-05-01T23:00:00-02:00", "2024-05-02T01:00:00Z"),
        // Other common forms (feedparser returns None for "May 12, 2024"; it is unambiguous).
        ("May 12, 2024", "2024-05-12T00:00:00Z"),
        ("Mon May 13 2024 18:00:00 GMT+0200 (CEST)", "2024-05-13T16:00:00Z"),
        ("2024/05/01 12:00", "2024-05-01T12:00:00Z"),
        ("12 September 2024", "2024-09-12T00:00:00Z"),
        ("  Wed, 29 Feb 2024 08:00:00 +0000  ", "2024-02-29T08:00:00Z"),
    ])
    func parsesCommonForms(input: String, expected: String) {
        #expect(FeedDate.iso8601(from: input) == expected)
    }

    @Test(arguments: [
        "", "yesterday-ish", "Fri, 31 Feb 2024 10:00:00 GMT", "2023-02-29", "13/45/2024", "Mayday 5",
        "2024-13-01T00:00:00Z", "99999999999999999999", "Tue, 10 Jun 2003 25:61:00 GMT",
    ])
    func refusesNonDates(input: String) {
        #expect(FeedDate.iso8601(from: input) == nil)
    }

    @Test func civilDayConversionRoundTrips() {
        for days in stride(from: -800_000, through: 800_000, by: 997) {
            let date = FeedDate.civilFromDays(days)
            #expect(FeedDate.daysFromCivil(date.year, date.month, date.day) == days)
        }
        #expect(FeedDate.daysFromCivil(1970, 1, 1) == 0)
        #expect(FeedDate.daysFromCivil(2000, 3, 1) == 11_017)
    }
}
