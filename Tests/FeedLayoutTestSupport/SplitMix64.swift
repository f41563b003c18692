/// SplitMix64, a small deterministic generator: randomised tests take a fixed seed, so every run
/// tests the same inputs and a failure replays from its seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's whole state; it advances by a constant on every draw.
    public var state: UInt64

    /// Starts the sequence of `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
