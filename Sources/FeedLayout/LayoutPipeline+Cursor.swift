import LayoutPages

extension LayoutPipeline {
    /// Whether a run of this pipeline can resume from `cursor`: it was made with the same options and fonts, is
    /// whole, and fits this pipeline's one layout (what ``run(_:resume:logger:onProgress:onPage:)`` checks before
    /// reading the feed; that the feed's items before it are the ones it was made from is checked as they are read).
    public func accepts(cursor: String) -> Bool { resumeIndex(ofCursor: cursor) != nil }

    /// The index of the item a run resumed from `cursor` begins with, when this pipeline accepts the cursor
    /// (``accepts(cursor:)``); else `nil`.
    public func resumeIndex(ofCursor cursor: String) -> Int? {
        guard geometries.count == 1 else { return nil }
        return (try? RunAssembler(options: options, fonts: fonts, geometries: geometries, resume: cursor))?.resumeIndex
    }
}
