import Foundation

/// The clock the service's periodic store work goes by: when reads happened, which layouts are old enough to remove,
/// and when to look again. The service runs on ``SystemServiceClock``; tests pass a clock they move by hand, so
/// nothing timed waits on the wall clock.
public protocol ServiceClock: Sendable {
    /// The time now.
    var now: Date { get }

    /// Returns once `duration` has passed on this clock.
    /// - Throws: `CancellationError` when the task is cancelled first.
    func sleep(for duration: Duration) async throws
}

/// The system's clock: `Date()` and `Task.sleep`.
public struct SystemServiceClock: ServiceClock {
    public init() {}

    public var now: Date { Date() }

    public func sleep(for duration: Duration) async throws { try await Task.sleep(for: duration) }
}
