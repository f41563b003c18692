import ByteTools
import FeedIngest
import FeedLayout
import Foundation
import LayoutPages
import LayoutStore
import Logging

/// A request's layout options, checked and made into the pipeline that decides a layout's identity and parts.
struct CheckedLayoutOptions: Sendable {
    /// The options as the request named them (stored with the layout as JSON).
    var named: [String: OptionValue]
    var pipeline: LayoutPipeline
}

extension RouteHandlers {
    /// Checks named options (``ClientOptions``) and makes their pipeline.
    /// - Throws: ``ServiceProblem`` `invalid-options`, naming the option.
    func checkedOptions(_ named: [String: OptionValue]) throws -> CheckedLayoutOptions {
        let options = try ClientOptions.layoutOptions(named, settings: settings)
        do {
            return CheckedLayoutOptions(named: named, pipeline: try LayoutPipeline(options: options, resources: resources))
        } catch {
            throw ServiceProblem.invalidOptions(
                error.message,
                field: error.code == .fontUnavailable
                    ? "options.font" : error.option.map { "options." + LayoutOptionValues.jsonName($0) })
        }
    }

    /// What decides a layout's id besides its feed and base (``layoutID(identity:feed:base:)``): the pipeline's
    /// identity and the service's `--max-items`.
    func layoutIdentity(_ options: CheckedLayoutOptions) -> String {
        // --max-items decides which pages a layout keeps: a service started with another bound makes another layout.
        options.pipeline.identity + (settings.maximumItems.map { "max-items=\($0)\n" } ?? "")
    }

    /// The one way a layout is made from a feed's bytes, for `POST /v1/layouts` and for every new version of a
    /// feed subscription: its id (a digest of what decides its pages), its row in the store, and its place in the
    /// runner's queue.
    /// - Parameters:
    ///   - feed: The feed's bytes (already checked to be within the size limit and to look like a feed).
    ///   - name: How the layout names its feed (a URL, or `feedText`).
    ///   - base: The URL its references resolve against.
    ///   - options: The checked options.
    ///   - predecessor: The layout this one follows (a subscription's previous version), or `nil`.
    ///   - feedDigest: `SHA256.hexDigest(feed)`, when the caller has it.
    ///   - append: How `feed` extends the predecessor's feed, when the caller found it (``FeedAppend``).
    ///   - beforeQueueing: Called with the id of a new layout before it is queued (a client's quota counts it).
    /// - Returns: The layout's id and whether it was new (an existing one is left as it is).
    func startLayout(
        feed: [UInt8], name: String, base: String?, options: CheckedLayoutOptions, predecessor: String?,
        feedDigest: String? = nil, append: FeedAppend.Match? = nil, beforeQueueing: (String) -> Void = { _ in }
    ) async throws -> (id: String, isNew: Bool) {
        let identity = layoutIdentity(options)
        // The image root decides which photos are read: a service started with another one makes other layouts.
        let source = base ?? settings.imageRoot.map { "image-root:" + $0 }
        // Digesting a large feed takes a while: on the layout threads, not on the threads that answer requests.
        let id = await withTaskExecutorPreference(resources.executor) {
            Self.layoutID(identity: identity, feed: feed, feedDigest: feedDigest, base: source)
        }
        let parts = zip(options.pipeline.options.layouts, options.pipeline.grids).map { layout, grid in
            (width: layout.waterfall.containerWidth, columns: grid.columnCount)
        }
        // A feed that is its predecessor's with items appended shares that one's bytes up to the cut.
        let sharing = predecessor.flatMap { predecessor in
            append.map { LayoutFeedPrefix(layoutId: predecessor, prefixLength: $0.cut) }
        }
        let isNew = try await store.insertLayout(
            id: id, options: LayoutOptionValues.storedJSON(options.named), feedName: name, baseURL: base, feed: feed,
            sharing: sharing, parts: parts)
        if isNew {
            logger.info("layout posted", metadata: ["layout": "\(id)", "feed": "\(name)", "bytes": "\(feed.count)"])
            beforeQueueing(id)
            await runner.enqueue(id, feed: feed, predecessor: predecessor, append: append)
            // A client views a layout right after posting it: its style sheet (fonts resolved, their character
            // maps read) is ready by then.
            Task { _ = try? await self.clientStyle(id: id) }
        }
        return (id, isNew)
    }
}
