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

    @Test func onlyTheSendThatFindsNoWakeupPendingWakesTheLoop() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        for connection: UInt64 in 1...3 { queues.open(connection) }
        #expect(queues.enqueue(OutboundFrame(text: "a"), to: [1]).woken, "the first wake-up")
        #expect(!queues.enqueue(OutboundFrame(text: "b"), to: [2]).woken, "one is on its way")
        #expect(!queues.close(3, status: 1000, reason: "bye"), "one is on its way")
        #expect(queues.takeWakeups() == [1: .writable, 2: .writable, 3: .writable], "the service thread takes them all")
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
        #expect(queues.takeWakeups() == [1: .writable, 2: .writable, 3: .writable])
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
        #expect(queues.takeWakeups() == [1: .kill, 2: .writable])
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
}
