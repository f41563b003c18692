import FeedIngest
import IngestFuzzSupport

/// One libFuzzer input through the ingest entry point, three ways:
///
/// 1. the whole input as one chunk, then `finish()`;
/// 2. the same bytes in small chunks whose sizes come from the input's first byte, so that chunk
///    boundaries land inside tags, entities, UTF-8 sequences and the encoding sniff window;
/// 3. the input wrapped as the HTML caption of an RSS item (CDATA), which reaches the HTML→text
///    converter and the `<img>` choice without the fuzzer having to invent a feed around them.
///
/// A crash, an assertion, a sanitizer report or a leak is a finding; thrown `FeedIngestError`s are
/// the expected way to refuse bad input. Items are touched so their strings are really built.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFeedIngest(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    // Small limits keep each run quick and exercise the truncation and size-limit paths.
    var options = FeedIngestOptions()
    options.maxInputBytes = 1 << 20
    options.maxFieldBytes = 4096
    options.maxTextLength = 300

    readFeed(input, chunkSizes: [max(input.count, 1)], options: options)
    let firstByte = input.first ?? 0
    readFeed(input, chunkSizes: [1 + Int(firstByte % 13), 1, 64, 3], options: options)

    var wrapped = Array(
        #"<?xml version="1.0" encoding="utf-8"?><rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/"><channel><title>t</title><item><title>x</title><description><![CDATA["#
            .utf8)
    wrapped.append(contentsOf: input.prefix(64 * 1024).filter { $0 != 0 })
    wrapped.append(contentsOf: "]]></description></item></channel></rss>".utf8)
    wrapped.withUnsafeBytes { readFeed($0, chunkSizes: [4096], options: options) }
    return 0
}
