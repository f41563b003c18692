import Synchronization

/// A bounded queue between two stages of the pipeline: one task sends, one task receives.
///
/// The sender waits while `capacity` elements are queued, so a fast stage never runs more than `capacity`
/// elements ahead of a slow one and memory stays bounded by the queue, not by the feed. The sender ends the
/// stream with ``finish(throwing:)``; the receiver, or the task that runs both stages, can ``close()`` it early
/// (the run stops at `--max-pages`, or fails), after which sends are refused and receives end.
final class PipelineChannel<Element: Sendable>: Sendable {
    private struct State {
        /// At most `capacity` elements, so taking the first (and moving the rest) costs next to nothing; a taken
        /// element must leave the buffer at once, or it would hold its memory as long as the queue is never empty.
        var buffer: [Element] = []
        /// The sender's element that did not fit, and the sender waiting for room for it.
        var pendingSend: (element: Element, continuation: CheckedContinuation<Bool, Never>)?
        var waitingReceiver: CheckedContinuation<Element?, any Error>?
        /// Set by the sender: nothing more comes after the buffer, then this ends the stream (`nil`: normally).
        var finished: Result<Void, any Error>?
        /// Set by the receiver: it takes nothing more.
        var closed = false

        var count: Int { buffer.count }

        mutating func takeFirst() -> Element { buffer.removeFirst() }

        /// Takes the first element when the buffer has one, else the waiting sender's (which then has room: the
        /// caller resumes that sender). A queued pending element moves into the buffer behind the taken one.
        mutating func takeFirstOrPending() -> Element {
            if count > 0 {
                let element = takeFirst()
                if let pending = pendingSend {
                    pendingSend = nil
                    buffer.append(pending.element)
                }
                return element
            }
            let pending = pendingSend!
            pendingSend = nil
            return pending.element
        }
    }

    private let state = Mutex(State())
    let capacity: Int

    init(capacity: Int) {
        precondition(capacity >= 1, "a pipeline channel holds at least one element")
        self.capacity = capacity
    }

    /// What a send does after looking at the state.
    private enum SendStep {
        case refused, queued, waiting
        case handed(CheckedContinuation<Element?, any Error>)
    }

    /// What a receive does after looking at the state.
    private enum ReceiveStep {
        case element(Element, resumingSender: CheckedContinuation<Bool, Never>?)
        case end(Result<Void, any Error>)
        case waiting
    }

    /// Queues an element, waiting while the queue is full.
    ///
    /// - Returns: `false` when the receiver has closed the channel: the sender should stop.
    func send(_ element: Element) async -> Bool {
        switch state.withLock({ sendStep(&$0, element, continuation: nil) }) {
        case .refused: return false
        case .queued: return true
        case .handed(let receiver):
            receiver.resume(returning: element)
            return true
        case .waiting:
            return await withCheckedContinuation { continuation in
                // Looked at again: the receiver may have made room, or started waiting, meanwhile.
                switch state.withLock({ sendStep(&$0, element, continuation: continuation) }) {
                case .waiting: break
                case .refused: continuation.resume(returning: false)
                case .queued: continuation.resume(returning: true)
                case .handed(let receiver):
                    receiver.resume(returning: element)
                    continuation.resume(returning: true)
                }
            }
        }
    }

    /// With no continuation, `.waiting` only says that the sender must wait; with one, the sender now waits.
    private func sendStep(
        _ state: inout State, _ element: Element, continuation: CheckedContinuation<Bool, Never>?
    ) -> SendStep {
        precondition(state.finished == nil, "send after finish")
        if state.closed { return .refused }
        if let receiver = state.waitingReceiver {
            state.waitingReceiver = nil
            return .handed(receiver)
        }
        if state.count < capacity {
            state.buffer.append(element)
            return .queued
        }
        if let continuation {
            precondition(state.pendingSend == nil, "a pipeline channel has one sender")
            state.pendingSend = (element, continuation)
        }
        return .waiting
    }

    /// Ends the stream: the receiver gets what is queued, then `nil`, or `error` when one is given.
    func finish(throwing error: (any Error)? = nil) {
        let receiver = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            guard state.finished == nil else { return nil }
            state.finished = error.map { .failure($0) } ?? .success(())
            defer { state.waitingReceiver = nil }
            return state.waitingReceiver
        }
        guard let receiver else { return }
        if let error { receiver.resume(throwing: error) } else { receiver.resume(returning: nil) }
    }

    /// The next element, waiting for one; `nil` at the end of the stream.
    ///
    /// - Throws: The error the sender finished with, once everything queued before it has been received.
    func receive() async throws -> Element? {
        switch state.withLock({ receiveStep(&$0, continuation: nil) }) {
        case .element(let element, let sender):
            sender?.resume(returning: true)
            return element
        case .end(let result):
            try result.get()
            return nil
        case .waiting:
            return try await withCheckedThrowingContinuation { continuation in
                // Looked at again: the sender may have sent or finished meanwhile.
                switch state.withLock({ receiveStep(&$0, continuation: continuation) }) {
                case .waiting: break
                case .element(let element, let sender):
                    sender?.resume(returning: true)
                    continuation.resume(returning: element)
                case .end(.success): continuation.resume(returning: nil)
                case .end(.failure(let error)): continuation.resume(throwing: error)
                }
            }
        }
    }

    /// With no continuation, `.waiting` only says that the receiver must wait; with one, the receiver now waits.
    private func receiveStep(
        _ state: inout State, continuation: CheckedContinuation<Element?, any Error>?
    ) -> ReceiveStep {
        if state.count > 0 || state.pendingSend != nil {
            // Taking one makes room: a waiting sender's element moves into the buffer and the sender goes on.
            let sender = state.pendingSend?.continuation
            return .element(state.takeFirstOrPending(), resumingSender: sender)
        }
        if let finished = state.finished { return .end(finished) }
        if state.closed { return .end(.success(())) }
        if let continuation { state.waitingReceiver = continuation }
        return .waiting
    }

    /// Stops the stream from the receiving side, or for both sides when a third task ends the run: queued elements
    /// are dropped, the sender's next (or waiting) send returns `false`, and a receiver waiting now or receiving later
    /// gets the end of the stream (a stage cannot wait forever for one that stopped).
    func close() {
        let (sender, receiver) = state.withLock {
            state -> (CheckedContinuation<Bool, Never>?, CheckedContinuation<Element?, any Error>?) in
            state.closed = true
            state.buffer.removeAll()
            defer {
                state.pendingSend = nil
                state.waitingReceiver = nil
            }
            return (state.pendingSend?.continuation, state.waitingReceiver)
        }
        sender?.resume(returning: false)
        receiver?.resume(returning: nil)
    }
}
