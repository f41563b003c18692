internal import CLibXML2

/// Where the reader's warnings go: to the item being read, else to the feed; libxml2's errors
/// and the sanitizer's repairs become warnings here.
extension FeedReader {
    /// Records a warning on the item being read, or on the feed between items.
    func warn(code: String, message: String, line: Int?, column: Int?) {
        let warning = FeedWarning(code: code, message: message, line: line, column: column)
        if item != nil {
            // libxml2 repeats some errors (an encoding failure once per retry): say it once.
            if item!.warnings.last != warning { item!.warn(warning) }
            return
        }
        feedLevelWarnings.add(warning)
    }

    /// Turns a libxml2 error into a warning, or into the reader's failure for an entity bomb.
    func handleError(_ error: UnsafePointer<xmlError>) {
        let code = Int(error.pointee.code)
        let line = error.pointee.line > 0 ? Int(error.pointee.line) : nil
        let column = error.pointee.int2 > 0 ? Int(error.pointee.int2) : nil
        var message = error.pointee.message.map { String(cString: $0) } ?? "XML error \(code)"
        while message.last == "\n" || message.last == " " { message.removeLast() }
        if code == Int(XML_ERR_ENTITY_LOOP.rawValue) {
            fail(
                FeedIngestError(
                    code: .entityExpansion,
                    message:
                        "entity expansion exceeds libxml2's limits (\(message)); this looks like an entity bomb and is not parsed further",
                    source: sourceName, line: line, column: column))
            return
        }
        if code == Int(XML_ERR_DOCUMENT_END.rawValue) && rootClosed {
            warn(
                code: "garbageAfterRoot", message: "content after the end of the feed was ignored", line: line,
                column: column)
            return
        }
        if code == Int(XML_ERR_DOCUMENT_EMPTY.rawValue) { return }  // reported by finish()
        let isEncodingError =
            error.pointee.domain == Int32(XML_FROM_I18N.rawValue)
            || code == Int(XML_ERR_INVALID_ENCODING.rawValue) || code == Int(XML_ERR_UNSUPPORTED_ENCODING.rawValue)
        warn(code: isEncodingError ? "encodingError" : "xmlError", message: message, line: line, column: column)
    }

    /// Gives every repair the parser has passed to the item it is in (or to the feed).
    /// - Parameter consumed: how many sanitized bytes the parser has consumed.
    func attributeRepairs(upTo consumed: Int) {
        while let repair = pendingRepairs.next(before: consumed) {
            if item != nil {
                item!.recordRepair(repair)
            } else {
                feedLevelWarnings.addRepair(repair)
            }
        }
        if !pendingRepairs.hasWaiting {
            pendingRepairs.removeAll()
            repairsWaiting.pointee = false
        } else {
            pendingRepairs.dropGivenOut()
        }
    }

    /// Called from SAX events: cheap unless a repair is waiting.
    @inline(__always)
    func attributeRepairsIfAny() {
        guard repairsWaiting.pointee, pendingRepairs.hasWaiting, let parser else { return }
        attributeRepairs(upTo: Int(xmlByteConsumed(parser)))
    }
}

/// The warnings not tied to one item, at most a hundred (then a count of the rest), with one
/// summary per kind of input repair.
struct FeedLevelWarnings {
    private var list: [FeedWarning] = []
    private var suppressedCount = 0
    private var repairSummaries = RepairSummaries()
    private static let maximumCount = 100

    /// The warnings in the order found, and a `tooManyWarnings` one when some were dropped.
    var all: [FeedWarning] {
        guard suppressedCount > 0 else { return list }
        return list + [
            FeedWarning(code: "tooManyWarnings", message: "\(suppressedCount) more feed warnings were dropped")
        ]
    }

    /// Adds a warning, unless it repeats the last one.
    mutating func add(_ warning: FeedWarning) {
        if list.last == warning { return }
        guard list.count < Self.maximumCount else {
            suppressedCount += 1
            return
        }
        list.append(warning)
    }

    /// Counts a repair into its kind's summary warning (which does not count towards the maximum).
    mutating func addRepair(_ repair: InputSanitizer.Repair) {
        repairSummaries.record(repair, into: &list)
    }
}

/// Sanitizer repairs in output order, waiting for the parser to reach them.
struct PendingRepairs {
    var repairs: [InputSanitizer.Repair] = []
    private var head = 0

    /// Whether some repairs were not given out yet.
    var hasWaiting: Bool { head < repairs.count }

    /// The next repair before output offset `consumed`, if the parser has passed it.
    mutating func next(before consumed: Int) -> InputSanitizer.Repair? {
        guard head < repairs.count, repairs[head].outputOffset < consumed else { return nil }
        head += 1
        return repairs[head - 1]
    }

    /// Forgets the repairs given out once they are most of the storage, so that a parser that never
    /// quite catches up (a chunk's repairs arrive before the last chunk's are all passed) keeps only
    /// what waits, not every repair of the feed.
    mutating func dropGivenOut() {
        guard head >= 1024, head * 2 >= repairs.count else { return }
        repairs.removeFirst(head)
        head = 0
    }

    /// Forgets the repairs given out, keeping the storage.
    mutating func removeAll() {
        repairs.removeAll(keepingCapacity: true)
        head = 0
    }
}
