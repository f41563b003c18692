/// Rows one layout reads from another layout's rows: a new version of a feed takes its predecessor's pages (and, in
/// PostgreSQL, its feed's chunks) by reference instead of copying them. Both stores keep such references as ranges
/// (`start..<end` of a part's pages, or of a feed's chunks, held by `owner`) and do the same two things with them,
/// which live here: what a layout adopting another's first rows references, and how a removal hands the rows others
/// reference to one of them.
struct SharedRows: Equatable, Sendable {
    /// The layout whose rows these are.
    var owner: String
    var rows: Range<Int>
}

/// A range of a sharer's rows (of one part: a layout index, or 0 for a feed's chunks) held by another layout.
struct RowShare: Equatable, Sendable {
    var sharer: String
    var part: Int
    var shared: SharedRows
}

enum RowSharing {
    /// The ranges that make up rows `0..<count` of `source`, whose shared ranges are `sourceShares` (in row order,
    /// covering `0..<n` without gaps; its own rows follow them): those ranges cut at `count`, then the source's own.
    /// Every range names the layout that holds its rows, never one that only references them.
    static func adopted(from source: String, sourceShares: [SharedRows], count: Int) -> [SharedRows] {
        let ownStart = sourceShares.last?.rows.upperBound ?? 0
        var shares = sourceShares.compactMap { share -> SharedRows? in
            let rows = share.rows.clamped(to: 0..<count)
            return rows.isEmpty ? nil : SharedRows(owner: share.owner, rows: rows)
        }
        if ownStart < count { shares.append(SharedRows(owner: source, rows: ownStart..<count)) }
        return shares
    }

    /// One step of handing over the rows that others reference before their owner goes: the heir is the sharer
    /// referencing the most of them (ties by key), which takes the rows of its own ranges (rows it never stored
    /// itself, so they cannot collide with its own); every other range is cut around what the heir took, and its
    /// taken pieces name the heir. Ranges left naming the owner go to the next step's heir.
    struct HandOver: Equatable {
        var heir: String
        /// The owner's rows that become the heir's, by part.
        var taken: [(part: Int, rows: Range<Int>)]
        /// Other sharers' ranges that change, and the pieces that replace each.
        var replaced: [(old: RowShare, pieces: [RowShare])]

        static func == (left: HandOver, right: HandOver) -> Bool {
            left.heir == right.heir && left.taken.elementsEqual(right.taken) { $0 == $1 }
                && left.replaced.elementsEqual(right.replaced) { $0.old == $1.old && $0.pieces == $1.pieces }
        }
    }

    /// The next step of handing over `owner`'s referenced rows, given every range that names it; `nil` when none does.
    static func handOver(_ shares: [RowShare], removing owner: String) -> HandOver? {
        var referenced: [String: Int] = [:]
        for share in shares { referenced[share.sharer, default: 0] += share.shared.rows.count }
        guard let heir = referenced.max(by: { $0.value < $1.value || ($0.value == $1.value && $0.key < $1.key) })?.key
        else { return nil }
        let taken = shares.filter { $0.sharer == heir }.map { (part: $0.part, rows: $0.shared.rows) }
        var replaced: [(old: RowShare, pieces: [RowShare])] = []
        for share in shares where share.sharer != heir {
            var pieces = [share.shared]
            for took in taken where took.part == share.part {
                pieces = pieces.flatMap { piece -> [SharedRows] in
                    guard piece.owner == owner, piece.rows.overlaps(took.rows) else { return [piece] }
                    let inside = piece.rows.clamped(to: took.rows)
                    return [
                        SharedRows(owner: owner, rows: piece.rows.lowerBound..<inside.lowerBound),
                        SharedRows(owner: heir, rows: inside),
                        SharedRows(owner: owner, rows: inside.upperBound..<piece.rows.upperBound),
                    ].filter { !$0.rows.isEmpty }
                }
            }
            guard pieces != [share.shared] else { continue }
            replaced.append((share, pieces.map { RowShare(sharer: share.sharer, part: share.part, shared: $0) }))
        }
        return HandOver(heir: heir, taken: taken, replaced: replaced)
    }
}
