import ByteTools
import FeedIngest
import FeedLayout
import LayoutPages

/// What changed between two versions of a feed: items matched by their identity (their pages' `key`,
/// `ItemKey.key(forID:)` of ``FeedItem/id``: the guid / Atom id / JSON Feed id, else the link, else a digest of the
/// content), and an item present in both counted as changed when its content (title, caption, link, author, date,
/// image) differs.
struct FeedItemChanges: Sendable, Equatable {
    var added = 0
    var removed = 0
    var changed = 0

    /// An item's identity and a digest of its content.
    struct Item: Sendable, Hashable {
        var key: String
        var content: String
    }

    /// The items of a feed, in feed order; `nil` when it cannot be read as a feed. Parsed on one task while another
    /// finishes the items (`ingestFeed`), off the caller's actor: a large feed's takes a second or more.
    static func items(of feed: [UInt8], name: String, base: String?) async -> [Item]? {
        var items: [Item] = []
        do {
            _ = try await ingestFeed(.bytes(feed, name: name, baseURL: base)) { item in
                items.append(Item(key: key(of: item), content: contentDigest(of: item)))
            }
            return items
        } catch {
            return nil
        }
    }

    /// An item's identity across versions: its `key` in the pages.
    static func key(of item: FeedItem) -> String { ItemKey.key(forID: item.id) }

    private static func contentDigest(of item: FeedItem) -> String {
        let fields = [item.title, item.text, item.link, item.author, item.published, item.image?.url]
        let text = fields.map { $0.map { "+" + $0 } ?? "-" }.joined(separator: "\u{1F}")
        return SHA256.hexDigest(Array(text.utf8))
    }
}

extension FeedItemChanges {
    /// The changes from `old` to `new` (an item whose key repeats counts once, its first occurrence).
    init(old: [Item], new: [Item]) {
        self.init()
        var before: [String: String] = [:]
        for item in old where before[item.key] == nil { before[item.key] = item.content }
        var seen: Set<String> = []
        for item in new where seen.insert(item.key).inserted {
            if let content = before[item.key] {
                if content != item.content { changed += 1 }
            } else {
                added += 1
            }
        }
        removed = before.keys.filter { !seen.contains($0) }.count
    }
}

extension FeedItemChanges {
    init(added: Int) {
        self.init()
        self.added = added
    }
}
