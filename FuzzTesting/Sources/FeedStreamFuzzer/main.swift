import FeedIngest
import IngestFuzzSupport

/// One libFuzzer input, up to a megabyte, as a feed arriving over a network: `FeedReader` with the default options
/// (the ones `layout` and `ingest` use), fed in chunks whose sizes the input's first four bytes choose (from 1 byte to
/// 64 KiB, repeating), so that large feeds — seeded with `sample-feed` and the ingest fixtures, RSS, Atom, RDF and
/// JSON Feed — cross chunk boundaries at every kind of place. The chunking bytes are part of the feed too, so a seed
/// feed is fuzzed unchanged.
///
/// A crash, an assertion, a sanitizer report, a timeout or an out-of-memory is a finding; thrown `FeedIngestError`s
/// are the expected way to refuse bad input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFeedStream(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    let chunkSizes = input.prefix(4).map { byte in 1 + Int(byte) << Int(byte % 9) }
    readFeed(input, chunkSizes: chunkSizes.isEmpty ? [1] : chunkSizes, options: FeedIngestOptions())
    return 0
}
