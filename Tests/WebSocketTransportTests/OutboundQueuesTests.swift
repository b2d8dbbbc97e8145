import Dispatch
import Foundation
import Testing
import TransportCore
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

    /// A frame queued alone is taken as it is; one queued behind it keeps the order, and a kill drops both.
    @Test func aLoneFrameIsTakenAloneAndFirst() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 3)
        let queue = queues.open(1)
        var frames: [OutboundFrame] = []
        _ = queues.enqueue(OutboundFrame(text: "alone"), to: [1])
        guard case .frame(let alone, more: false) = queues.take(from: queue, maxBytes: 1 << 14, headerBytes: { _ in 2 }, into: &frames) else {
            Issue.record("the frame queued alone, nothing after it")
            return
        }
        #expect(alone.bytes == Array("alone".utf8) && frames.isEmpty)
        for text in ["first", "second"] { _ = queues.enqueue(OutboundFrame(text: text), to: [1]) }
        guard case .frames(more: false) = queues.take(from: queue, maxBytes: 1 << 14, headerBytes: { _ in 2 }, into: &frames) else {
            Issue.record("two frames, coalesced")
            return
        }
        #expect(frames.map { String(decoding: $0.bytes, as: UTF8.self) } == ["first", "second"])
        for text in ["a", "b", "c"] { _ = queues.enqueue(OutboundFrame(text: text), to: [1]) }
        #expect(queues.enqueue(OutboundFrame(text: "d"), to: [1]).dropped == 1, "the fourth overflows the queue")
        #expect(Self.text(queues, 1) == [], "nothing of a dropped connection is written")
    }

    /// A wake-up noted on a queue hands the service thread that very queue, and a queue removed while noted
    /// is neither taken nor counted as still waiting.
    @Test func aWakeupCarriesItsQueueAndARemovedOneIsForgotten() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        let first = queues.open(1)
        queues.open(2)
        #expect(queues.enqueue(OutboundFrame(text: "news"), to: [1, 2]).woken)
        queues.remove(2)
        let taken = queues.takeWakeups()
        #expect(taken.taken.map(\.connection) == [1])
        #expect(taken.taken.first?.queue === first)
        #expect(!taken.more, "the removed connection is not left waiting")
        #expect(queues.enqueue(OutboundFrame(text: "again"), to: [1]).woken == false, "1 still has a frame: its writes go on")
        #expect(Self.text(queues, 1) == ["news", "again"])
        #expect(queues.enqueue(OutboundFrame(text: "later"), to: [1]).woken, "all taken: the next frame wakes the loop")
    }

    /// An HTTP response is noted by connection id (an HTTP connection has no queue), in the reply lane, once.
    @Test func aResponseIsTakenOnceAheadOfNews() {
        let queues = OutboundQueues(maxBytes: 1 << 20, maxFrames: 100)
        queues.open(1)
        #expect(queues.enqueue(OutboundFrame(text: "news"), to: [1]).woken)
        #expect(!queues.respond(7, sequence: 1, with: HTTPResponse(status: 200)))
        #expect(!queues.respond(7, sequence: 2, with: HTTPResponse(status: 204)), "already noted")
        let taken = queues.takeWakeups()
        #expect(taken.taken.map(\.connection) == [7, 1])
        #expect(taken.taken.first?.queue == nil)
        #expect(queues.takeResponse(7)?.sequence == 2)
        #expect(queues.respond(7, sequence: 3, with: HTTPResponse(status: 200)), "taken: the next response wakes the loop")
    }

    /// The wake-up protocol under contention: four threads send to 64 connections while a service thread
    /// takes wake-ups only when woken (a turn at a time, waking itself for what is left, as the server
    /// does) and writes one frame per connection per write, the rest later in the turn, as WRITEABLE
    /// callbacks would. Frames queued while a connection is being written must still be written, and no
    /// frame may wait for a wake-up that never comes: every frame arrives, in each sender's order.
    @Test func noFrameWaitsForAWakeupThatNeverComes() {
        let queues = OutboundQueues(maxBytes: 1 << 30, maxFrames: 1 << 20)
        let connections = 64
        let senders = 4
        let perSender = 2_000
        for connection in 1...connections { queues.open(UInt64(connection)) }
        let woken = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for sender in 0..<senders {
            done.enter()
            Thread {
                for index in 0..<perSender {
                    let targets = [UInt64(1 + (index * 7 + sender) % connections), UInt64(1 + (index * 13 + sender * 5) % connections)]
                    let frame = OutboundFrame(text: "\(sender) \(index)", priority: index % 50 == 0 ? .reply : .normal)
                    if queues.enqueue(frame, to: Array(Set(targets))).woken { woken.signal() }
                }
                done.leave()
            }.start()
        }
        var expected = 0
        for sender in 0..<senders {
            for index in 0..<perSender {
                let targets = Set([1 + (index * 7 + sender) % connections, 1 + (index * 13 + sender * 5) % connections])
                expected += targets.count
            }
        }
        var received = 0
        var lastIndex: [UInt64: [Int: Int]] = [:]
        var inOrder = true
        var lost = false
        while received < expected {
            guard woken.wait(timeout: .now() + 10) == .success else {
                lost = true
                break
            }
            let wakeups = queues.takeWakeups(limit: 8)
            if wakeups.more { woken.signal() }
            var writable = wakeups.taken.compactMap(\.queue)
            while !writable.isEmpty {
                var again: [OutboundQueues.Queue] = []
                for queue in writable {
                    var frames: [OutboundFrame] = []
                    let more: Bool
                    switch queues.take(from: queue, maxBytes: 0, headerBytes: { _ in 2 }, into: &frames) {
                    case .frame(let frame, let rest):
                        frames = [frame]
                        more = rest
                    case .frames(let rest):
                        more = rest
                    case .close, .nothing:
                        continue
                    }
                    for frame in frames {
                        let parts = String(decoding: frame.bytes, as: UTF8.self).split(separator: " ").compactMap { Int($0) }
                        if let last = lastIndex[queue.id]?[parts[0]], last >= parts[1] { inOrder = false }
                        lastIndex[queue.id, default: [:]][parts[0]] = parts[1]
                        received += 1
                    }
                    if more { again.append(queue) }
                }
                writable = again
            }
        }
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(!lost, "the service thread waited 10 s for a wake-up with \(expected - received) frames queued")
        #expect(received == expected)
        #expect(inOrder, "each sender's frames in its order on every connection")
    }
}
