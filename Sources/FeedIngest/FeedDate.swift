/// Parses the dates feeds actually contain and prints them as ISO 8601 UTC.
///
/// Deliberately independent of Foundation's formatters and of the locale: RFC 822 with the usual
/// junk ("Tues", "PST", "12:15 PM", missing seconds, two-digit years), ISO 8601 / RFC 3339 (with
/// or without `T`, separators, fraction, zone) and the common free forms ("May 1, 2024",
/// "2024/05/01 12:00", "Wed May 01 2024 12:00:00 GMT+0000").
enum FeedDate {
    /// Parses `raw` and returns `YYYY-MM-DDTHH:MM:SSZ`, or nil when no date can be read.
    /// - Parameter raw: the element's text.
    /// - Returns: the UTC timestamp, or nil.
    static func iso8601(from raw: String) -> String? {
        iso8601(from: Array(raw.utf8))
    }

    /// The same, from the date's UTF-8 bytes.
    static func iso8601(from bytes: [UInt8]) -> String? {
        guard let parts = parseRFC822(bytes) ?? parseISO(bytes) ?? parseFree(bytes) else { return nil }
        return format(parts)
    }

    /// The strict RFC 822 form almost every RSS date has, `Fri, 02 Feb 2022 11:29:11 -0700` (or
    /// `GMT`), read without the free parser's words and lists; anything else returns nil and goes
    /// to the other parsers, which read this form the same way.
    static func parseRFC822(_ bytes: [UInt8]) -> Parts? {
        bytes.withUnsafeBufferPointer { parseRFC822($0) }
    }

    /// The same, on bytes the finisher reads where they were captured.
    static func parseRFC822(_ bytes: UnsafeBufferPointer<UInt8>) -> Parts? {
        // "Ddd, D Mmm YYYY HH:MM:SS " is 25 or 26 bytes, then the zone.
        guard bytes.count >= 28, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20 else { return nil }
        let weekday = UInt32(bytes[0]) << 16 | UInt32(bytes[1]) << 8 | UInt32(bytes[2])
        guard weekdays.contains(weekday) else { return nil }
        func digit(_ index: Int) -> Int? {
            let byte = bytes[index]
            return isDigit(byte) ? Int(byte - 0x30) : nil
        }
        var index = 5
        guard let firstDigit = digit(index) else { return nil }
        var day = firstDigit
        index += 1
        if let second = digit(index) {
            day = day * 10 + second
            index += 1
        }
        guard day >= 1, day <= 31, bytes.count >= index + 22, bytes[index] == 0x20 else { return nil }
        let monthKey = UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8 | UInt32(bytes[index + 3])
        guard let monthIndex = months.firstIndex(of: monthKey), bytes[index + 4] == 0x20,
            let y1 = digit(index + 5), let y2 = digit(index + 6), let y3 = digit(index + 7), let y4 = digit(index + 8),
            bytes[index + 9] == 0x20, let h1 = digit(index + 10), let h2 = digit(index + 11),
            bytes[index + 12] == UInt8(ascii: ":"), let m1 = digit(index + 13), let m2 = digit(index + 14),
            bytes[index + 15] == UInt8(ascii: ":"), let s1 = digit(index + 16), let s2 = digit(index + 17),
            bytes[index + 18] == 0x20
        else { return nil }
        index += 19
        let offset: Int
        if bytes.count == index + 3, bytes[index] == UInt8(ascii: "G"), bytes[index + 1] == UInt8(ascii: "M"),
            bytes[index + 2] == UInt8(ascii: "T")
        {
            offset = 0
        } else if bytes.count == index + 5, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-"),
            let o1 = digit(index + 1), let o2 = digit(index + 2), let o3 = digit(index + 3), let o4 = digit(index + 4)
        {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            offset = sign * ((o1 * 10 + o2) * 60 + o3 * 10 + o4)
        } else {
            return nil
        }
        var parts = Parts(year: y1 * 1000 + y2 * 100 + y3 * 10 + y4, month: monthIndex + 1, day: day)
        (parts.hour, parts.minute, parts.second) = (h1 * 10 + h2, m1 * 10 + m2, s1 * 10 + s2)
        parts.offsetMinutes = offset
        return isValid(parts) ? parts : nil
    }

    private static func key(_ name: StaticString) -> UInt32 {
        UInt32(name.utf8Start[0]) << 16 | UInt32(name.utf8Start[1]) << 8 | UInt32(name.utf8Start[2])
    }
    private static let weekdays: [UInt32] = [
        key("Mon"), key("Tue"), key("Wed"), key("Thu"), key("Fri"), key("Sat"), key("Sun"),
    ]
    private static let months: [UInt32] = [
        key("Jan"), key("Feb"), key("Mar"), key("Apr"), key("May"), key("Jun"), key("Jul"), key("Aug"), key("Sep"),
        key("Oct"), key("Nov"), key("Dec"),
    ]

    /// The broken-down time, with the offset from UTC in minutes.
    struct Parts: Equatable {
        var year: Int, month: Int, day: Int
        var hour = 0, minute = 0, second = 0
        var offsetMinutes = 0
    }

    // MARK: ISO 8601

    /// `2024-05-01`, `2024-05-01T12:00Z`, `2024-05-01 12:00:00.123+02:00`, `20240501T120000Z`.
    static func parseISO(_ bytes: [UInt8]) -> Parts? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpaces()
        guard let year = scanner.digits(exactly: 4) else { return nil }
        let dashed = scanner.take(UInt8(ascii: "-"))
        guard let month = scanner.digits(exactly: 2) else { return nil }
        if dashed { guard scanner.take(UInt8(ascii: "-")) else { return nil } }
        guard let day = scanner.digits(exactly: 2) else { return nil }
        var parts = Parts(year: year, month: month, day: day)
        if scanner.take(UInt8(ascii: "T")) || scanner.take(UInt8(ascii: "t")) || scanner.take(UInt8(ascii: " ")) {
            guard let hour = scanner.digits(exactly: 2) else { return nil }
            let colon = scanner.take(UInt8(ascii: ":"))
            guard let minute = scanner.digits(exactly: 2) else { return nil }
            parts.hour = hour
            parts.minute = minute
            if !colon || scanner.take(UInt8(ascii: ":")) {
                if let second = scanner.digits(exactly: 2) { parts.second = second }
            }
            if scanner.take(UInt8(ascii: ".")) || scanner.take(UInt8(ascii: ",")) {
                _ = scanner.digitRun()  // fractions are truncated: output has whole seconds
            }
            scanner.skipSpaces()
            if scanner.take(UInt8(ascii: "Z")) || scanner.take(UInt8(ascii: "z")) {
            } else if let sign = scanner.sign() {
                guard let offsetHours = scanner.digits(exactly: 2) else { return nil }
                _ = scanner.take(UInt8(ascii: ":"))
                let offsetMinutes = scanner.digits(exactly: 2) ?? 0
                parts.offsetMinutes = sign * (offsetHours * 60 + offsetMinutes)
            } else if let word = scanner.word(), let zone = zoneOffsets[word.lowercased()] {
                parts.offsetMinutes = zone
            }
        }
        scanner.skipSpaces()
        guard scanner.atEnd, isValid(parts) else { return nil }
        return parts
    }

    // MARK: Free forms (RFC 822 and friends)

    /// Reads tokens in any order: words (month, weekday, zone, AM/PM), numbers (day, year),
    /// `h:mm[:ss]` times and `±hhmm` offsets.
    static func parseFree(_ bytes: [UInt8]) -> Parts? {
        var scanner = Scanner(bytes: bytes)
        var year: Int?, month: Int?, day: Int?
        var time: (hour: Int, minute: Int, second: Int)?
        var offset: Int?
        var meridiem: Int?  // 0 = AM, 12 = PM
        var numbers: [(value: Int, length: Int)] = []
        while !scanner.atEnd {
            let byte = scanner.peek!
            if isDigit(byte) {
                let start = scanner.position
                let value = scanner.digitRun()!
                let length = scanner.position - start
                if scanner.peek == UInt8(ascii: ":") {
                    scanner.position += 1
                    guard let minute = scanner.digitRun() else { return nil }
                    var second = 0
                    if scanner.take(UInt8(ascii: ":")) { second = scanner.digitRun() ?? 0 }
                    if scanner.take(UInt8(ascii: ".")) { _ = scanner.digitRun() }
                    time = (value, minute, second)
                } else if (scanner.peek == UInt8(ascii: "-") || scanner.peek == UInt8(ascii: "/"))
                    && numbers.isEmpty && year == nil && month == nil
                    && scanner.position + 1 < bytes.count && isDigit(bytes[scanner.position + 1])
                {
                    // 2024/05/01 or 2024-05-01 12:00 PST or 05/01/2024 (US order, as feedparser).
                    let separator = scanner.peek!
                    scanner.position += 1
                    guard let second = scanner.digitRun(), scanner.take(separator),
                        let third = scanner.digitRun()
                    else { return nil }
                    if length == 4 {
                        (year, month, day) = (value, second, third)
                    } else {
                        (month, day, year) = (value, second, expandYear(third))
                    }
                } else {
                    numbers.append((value, length))
                }
            } else if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                scanner.position += 1
                let start = scanner.position
                if let value = scanner.digitRun() {
                    let sign = byte == UInt8(ascii: "-") ? -1 : 1
                    let length = scanner.position - start
                    if scanner.take(UInt8(ascii: ":")), let minutes = scanner.digits(exactly: 2) {
                        offset = sign * (value * 60 + minutes)
                    } else if length <= 2 {
                        offset = sign * value * 60
                    } else {
                        offset = sign * ((value / 100) * 60 + value % 100)
                    }
                }
            } else if isLetter(byte) {
                let word = scanner.word()!.lowercased()
                if let monthNumber = monthNumber(word) {
                    month = monthNumber
                } else if word == "am" || word == "a" {
                    meridiem = 0
                } else if word == "pm" || word == "p" {
                    meridiem = 12
                } else if let zone = zoneOffsets[word] {
                    if offset == nil { offset = zone }
                }
                // Weekdays ("Tues", "Thurs"), "at", "of" and unknown zones are ignored;
                // feedparser also treats an unknown zone as UTC.
            } else {
                scanner.position += 1
            }
        }
        for number in numbers {
            if number.length >= 3 {
                if year == nil { year = number.value } else { return nil }
            } else if day == nil && number.value >= 1 && number.value <= 31 {
                day = number.value
            } else if year == nil {
                year = expandYear(number.value)
            } else {
                return nil
            }
        }
        guard let year, let month, let day else { return nil }
        var parts = Parts(year: year, month: month, day: day)
        if var time {
            if let meridiem {
                guard time.hour >= 1 && time.hour <= 12 else { return nil }
                time.hour = time.hour % 12 + meridiem
            }
            (parts.hour, parts.minute, parts.second) = time
        }
        parts.offsetMinutes = offset ?? 0
        guard isValid(parts) else { return nil }
        return parts
    }

    /// Two-digit years as RFC 2822 §4.3 reads them: 00–49 → 20xx, 50–99 → 19xx.
    static func expandYear(_ value: Int) -> Int {
        if value >= 100 { return value }
        return value < 50 ? 2000 + value : 1900 + value
    }

    static func monthNumber(_ word: String) -> Int? {
        guard word.count >= 3 else { return nil }
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        guard let index = names.firstIndex(of: String(word.prefix(3))) else { return nil }
        // "mars", "march", "sept" are fine; "mayday" is not a month.
        let full = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september",
            "october", "november", "december",
        ][index]
        return full.hasPrefix(word) || word == "sept" ? index + 1 : nil
    }

    /// Zone abbreviations RFC 822 names, plus the few others feeds use, in minutes east of UTC.
    static let zoneOffsets: [String: Int] = [
        "ut": 0, "utc": 0, "gmt": 0, "z": 0, "wet": 0, "bst": 60, "cet": 60, "cest": 120,
        "met": 60, "mest": 120, "eet": 120, "eest": 180, "msk": 180, "ist": 330, "jst": 540,
        "kst": 540, "hkt": 480, "sgt": 480, "aest": 600, "aedt": 660, "nzst": 720, "nzdt": 780,
        "est": -300, "edt": -240, "cst": -360, "cdt": -300, "mst": -420, "mdt": -360,
        "pst": -480, "pdt": -420, "akst": -540, "akdt": -480, "hst": -600, "ast": -240,
        "adt": -180,
    ]

    static func isValid(_ parts: Parts) -> Bool {
        guard (1...12).contains(parts.month), parts.year >= 1, parts.year <= 9999 else { return false }
        guard parts.day >= 1, parts.day <= daysInMonth(parts.year, parts.month) else { return false }
        // 24:00 and leap seconds are clamped away below rather than refused.
        return parts.hour <= 24 && parts.minute <= 59 && parts.second <= 60
            && abs(parts.offsetMinutes) <= 18 * 60
    }

    static func daysInMonth(_ year: Int, _ month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func format(_ parts: Parts) -> String {
        let second = min(parts.second, 59)
        let totalSeconds =
            daysFromCivil(parts.year, parts.month, parts.day) * 86_400 + parts.hour * 3600
            + parts.minute * 60 + second - parts.offsetMinutes * 60
        let days = totalSeconds >= 0 ? totalSeconds / 86_400 : (totalSeconds - 86_399) / 86_400
        let secondsOfDay = totalSeconds - days * 86_400
        let date = civilFromDays(days)
        // Written as bytes: seven String concatenations cost more than parsing the date.
        guard (0...9999).contains(date.year) else {
            return pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) + "T"
                + pad(secondsOfDay / 3600, 2) + ":" + pad(secondsOfDay / 60 % 60, 2) + ":"
                + pad(secondsOfDay % 60, 2) + "Z"
        }
        return String(unsafeUninitializedCapacity: 20) { buffer in
            func put(_ value: Int, _ width: Int, at offset: Int) {
                var rest = value
                for position in stride(from: offset + width - 1, through: offset, by: -1) {
                    buffer[position] = UInt8(0x30 + rest % 10)
                    rest /= 10
                }
            }
            put(date.year, 4, at: 0)
            buffer[4] = UInt8(ascii: "-")
            put(date.month, 2, at: 5)
            buffer[7] = UInt8(ascii: "-")
            put(date.day, 2, at: 8)
            buffer[10] = UInt8(ascii: "T")
            put(secondsOfDay / 3600, 2, at: 11)
            buffer[13] = UInt8(ascii: ":")
            put(secondsOfDay / 60 % 60, 2, at: 14)
            buffer[16] = UInt8(ascii: ":")
            put(secondsOfDay % 60, 2, at: 17)
            buffer[19] = UInt8(ascii: "Z")
            return 20
        }
    }

    static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

    /// A cursor over ASCII bytes.
    struct Scanner {
        let bytes: [UInt8]
        var position = 0
        var atEnd: Bool { position >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[position] }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        mutating func skipSpaces() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                position += 1
            }
        }

        mutating func digits(exactly count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let byte = bytes[position + offset]
                guard FeedDate.isDigit(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            position += count
            return value
        }

        /// Up to 9 digits (more are skipped), so that no input can overflow.
        mutating func digitRun() -> Int? {
            var value = 0
            var count = 0
            while let byte = peek, FeedDate.isDigit(byte) {
                if count < 9 { value = value * 10 + Int(byte - 0x30) }
                count += 1
                position += 1
            }
            return count > 0 ? value : nil
        }

        mutating func sign() -> Int? {
            if take(UInt8(ascii: "+")) { return 1 }
            if take(UInt8(ascii: "-")) { return -1 }
            return nil
        }

        mutating func word() -> String? {
            let start = position
            while let byte = peek, FeedDate.isLetter(byte) { position += 1 }
            guard position > start else { return nil }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }
    }
}
