// Ad-hoc warm-cache timing for TextMeasure, compiled with the module's sources so it can
// run optimised without a release build of the whole package. Run scripts/bench-textmeasure.
#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` `iterations` times and prints the mean in microseconds.
func report(_ label: String, iterations: Int = 20_000, _ body: () -> Void) {
    var start = timespec()
    clock_gettime(CLOCK_MONOTONIC, &start)
    for _ in 0..<iterations { body() }
    var end = timespec()
    clock_gettime(CLOCK_MONOTONIC, &end)
    let elapsed = Double(end.tv_sec - start.tv_sec) * 1e6 + Double(end.tv_nsec - start.tv_nsec) / 1e3
    print("\(label): \(elapsed / Double(iterations)) µs per call")
}

let measurer = try TextMeasurer(style: TextStyle(font: "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", size: 14))
let captions = [
    (
        "latin, 100 characters",
        "Sunset over the harbour, with boats coming home after a long day at sea; fishermen unload the catch."
    ),
    ("chinese, 50 characters", "夕阳西下，港口的渔船缓缓归来。渔民们一边收网，一边谈论着今天的天气和收成。摄影师在码头上等待最好的光线。"),
    (
        "cyrillic, 100 characters",
        "Закат над рекой был особенно красив: лодки медленно возвращались к берегу, а рыбаки разбирали сети."
    ),
]
for (label, text) in captions {
    _ = measurer.measure(text, width: 200)  // warm the caches
    _ = measurer.measure(text, width: 200, maxLines: 3)
    report("warm \(label), width 200") { _ = measurer.measure(text, width: 200) }
    report("warm \(label), width 200, 3 lines max") { _ = measurer.measure(text, width: 200, maxLines: 3) }
}
