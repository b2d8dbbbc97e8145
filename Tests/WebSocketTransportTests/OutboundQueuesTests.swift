import Testing
@testable import WebSocketTransport

/// The queues between the sending threads and the service thread (no sockets).
@Suite("Outbound queues")
struct OutboundQueuesTests {
    static func text(_ queue: OutboundQueues, _ connection: UInt64) -> [String] {
        var texts: [String] = []
        while case .frame(let frame, _) = queue.next(for: connection) { texts.append(String(decoding: frame.bytes, as: UTF8.self)) }
        return texts
    }

    /// What the service thread takes, as a table (the order is tested where it matters).
    static func table(_ wakeups: OutboundQueues.Wakeups) -> [UInt64: OutboundQueues.Wakeup] {
        Dictionary(wakeups.taken.map { ($0.connection, $0.wakeup) }, uniquingKeysWith: { _, last in last })
    }

    @Test func onlyTheSendThatFindsNoWakeupPendingWakesTheLoop() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        for connection: UInt64 in 1...3 { queues.open(connection) }
        #expect(queues.enqueue(OutboundFrame(text: "a"), to: [1]).woken, "the first wake-up")
        #expect(!queues.enqueue(OutboundFrame(text: "b"), to: [2]).woken, "one is on its way")
        #expect(!queues.close(3, status: 1000, reason: "bye"), "one is on its way")
        #expect(Self.table(queues.takeWakeups()) == [1: .writable, 2: .writable, 3: .writable], "the service thread takes them all")
        #expect(!queues.enqueue(OutboundFrame(text: "c"), to: [1]).woken, "1 is being written already: its callbacks go on")
        #expect(queues.enqueue(OutboundFrame(text: "d"), to: [3]).woken == false, "3 is closing: nothing more is queued")
        #expect(Self.text(queues, 1) == ["a", "c"])
        #expect(queues.enqueue(OutboundFrame(text: "e"), to: [1]).woken, "after taking, a new wake-up")
    }

    @Test func aBatchKeepsItsOrderPerConnectionAndWakesOnce() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        for connection: UInt64 in 1...3 { queues.open(connection) }
        let batch: [(OutboundFrame, [UInt64])] = [
            (OutboundFrame(text: "reveal 1"), [1]), (OutboundFrame(text: "reveal 2"), [2]), (OutboundFrame(text: "reveal 3"), [3]),
            (OutboundFrame(text: "scoreboard"), [1, 2, 3]), (OutboundFrame(text: "extra 2"), [2]),
        ]
        let (woken, dropped) = queues.enqueue(batch)
        #expect(woken && dropped == 0)
        #expect(Self.table(queues.takeWakeups()) == [1: .writable, 2: .writable, 3: .writable])
        #expect(Self.text(queues, 1) == ["reveal 1", "scoreboard"])
        #expect(Self.text(queues, 2) == ["reveal 2", "scoreboard", "extra 2"])
        #expect(Self.text(queues, 3) == ["reveal 3", "scoreboard"])
    }

    @Test func aBatchThatOverflowsOneQueueDropsThatConnectionOnly() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 2)
        for connection: UInt64 in 1...2 { queues.open(connection) }
        let batch: [(OutboundFrame, [UInt64])] = (1...3).map { (OutboundFrame(text: "to 1: \($0)"), [1]) } + [(OutboundFrame(text: "to 2"), [2])]
        let (woken, dropped) = queues.enqueue(batch)
        #expect(woken && dropped == 1)
        #expect(Self.table(queues.takeWakeups()) == [1: .kill, 2: .writable])
        #expect(Self.text(queues, 1) == [], "a dropped connection gets nothing more")
        #expect(Self.text(queues, 2) == ["to 2"])
    }

    @Test func aWriteTakesTheFramesThatFitAndAlwaysAtLeastOne() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        let queue = queues.open(1)
        let header = { (_: Int) in 2 }
        for text in ["aaaa", "bbbb", "cccc", String(repeating: "x", count: 50), "dddd"] {
            _ = queues.enqueue(OutboundFrame(text: text), to: [1])
        }
        _ = queues.close(1, status: 1000, reason: "bye")
        var frames: [OutboundFrame] = []
        func take(_ maxBytes: Int) -> [String] {
            frames = []
            _ = queues.take(from: queue, maxBytes: maxBytes, headerBytes: header, into: &frames)
            return frames.map { String(decoding: $0.bytes, as: UTF8.self) }
        }
        #expect(take(13) == ["aaaa", "bbbb"], "6 bytes each with its header: two fit in 13")
        #expect(take(13) == ["cccc"], "the next one does not fit beside it")
        #expect(take(13) == [String(repeating: "x", count: 50)], "one larger than the limit goes alone")
        frames = []
        guard case .frames(more: true) = queues.take(from: queue, maxBytes: 100, headerBytes: header, into: &frames) else {
            Issue.record("the last frame, with the close still to come")
            return
        }
        #expect(frames.map(\.bytes) == [Array("dddd".utf8)])
        frames = []
        guard case .close(1000, "bye") = queues.take(from: queue, maxBytes: 100, headerBytes: header, into: &frames) else {
            Issue.record("then the close")
            return
        }
    }

    @Test func repliesGoAheadOfNewsAndNewsIsTakenInOrderATurnAtATime() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        for connection: UInt64 in 1...6 { queues.open(connection) }
        let reveals: [(OutboundFrame, [UInt64])] = (1...5).map { (OutboundFrame(text: "reveal \($0)"), [UInt64($0)]) }
        #expect(queues.enqueue(reveals).woken)
        #expect(!queues.enqueue(OutboundFrame(text: "ack", priority: .reply), to: [6]).woken, "one wake-up is on its way")
        let first = queues.takeWakeups(limit: 2)
        #expect(first.taken.map(\.connection) == [6, 1, 2], "the reply first, then two of the news in the order queued")
        #expect(first.more, "three are left: the service thread must come back for them")
        #expect(!queues.enqueue(OutboundFrame(text: "ack 2", priority: .reply), to: [5]).woken, "the set was not empty")
        let second = queues.takeWakeups(limit: 2)
        #expect(second.taken.map(\.connection) == [5, 3, 4], "5 moved up to the reply lane, and is taken once")
        #expect(!second.more)
        #expect(Self.text(queues, 5) == ["reveal 5", "ack 2"], "a connection's own order never changes")
        #expect(queues.takeWakeups().taken.isEmpty)
    }

    @Test func aRemovedConnectionLeavesNothingBehindInTheLanes() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        for connection: UInt64 in 1...3 { queues.open(connection) }
        _ = queues.enqueue(OutboundFrame(text: "news"), to: [1, 2, 3])
        _ = queues.enqueue(OutboundFrame(text: "ack", priority: .reply), to: [2])
        queues.remove(2)
        let taken = queues.takeWakeups(limit: 1)
        #expect(taken.taken.map(\.connection) == [1] && taken.more)
        #expect(queues.takeWakeups(limit: 1).taken.map(\.connection) == [3])
    }

    @Test func aKillGoesAheadOfNews() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 1)
        for connection: UInt64 in 1...2 { queues.open(connection) }
        _ = queues.enqueue(OutboundFrame(text: "news"), to: [1, 2])
        _ = queues.enqueue(OutboundFrame(text: "too much"), to: [2])
        let taken = queues.takeWakeups(limit: 1)
        #expect(taken.taken.map(\.connection) == [2, 1] && taken.taken.first?.wakeup == .kill && !taken.more)
    }
}
