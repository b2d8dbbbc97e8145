import Foundation
import Glibc
import Locking

/// Open-loop sending: every action has an intended time fixed before it is due, and latencies are
/// measured from that time, never from when the generator got round to it. A server that falls behind
/// cannot slow the schedule down and so hide its own delay (coordinated omission): late sends show up as
/// latency. How late the generator itself was (`lag`) is recorded too, so a reader can tell the two apart.
///
/// One thread runs the actions in order of intended time; actions must be quick (queue a frame, open a
/// connection, push the next action).
final class Timeline: @unchecked Sendable {
    private struct Item {
        var due: UInt64
        var sequence: UInt64
        var action: @Sendable () -> Void
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var heap: [Item] = []
    private var sequence: UInt64 = 0
    private var stopped = false
    private var lags: [UInt64] = []
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "bench-timeline"
        thread.start()
        self.thread = thread
    }

    /// Runs `action` at `due` (monotonic nanoseconds, as `nanoseconds()`), or at once if that has passed.
    func at(_ due: UInt64, _ action: @escaping @Sendable () -> Void) {
        condition.lock()
        sequence += 1
        push(Item(due: due, sequence: sequence, action: action))
        condition.signal()
        condition.unlock()
    }

    /// Stops after the actions already due; later ones are dropped. Returns how late actions ran.
    func stop() -> Percentiles {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
        finished.wait()
        condition.lock()
        defer { condition.unlock() }
        return Percentiles(nanoseconds: lags)
    }

    private func run() {
        condition.lock()
        while !stopped {
            guard let next = heap.first else {
                condition.wait()
                continue
            }
            let now = nanoseconds()
            if next.due > now {
                // Sleep in the condition until it is due (or an earlier action arrives). No spinning: the
                // generator's core also receives, and a timed wait's overshoot (tens of microseconds) is
                // recorded as lag like any other lateness.
                _ = condition.wait(until: Date().addingTimeInterval(Double(next.due - now) / 1e9))
                continue
            }
            let item = pop()
            lags.append(now - item.due)
            condition.unlock()
            item.action()
            condition.lock()
        }
        condition.unlock()
        finished.signal()
    }

    // A binary min-heap on (due, sequence): equal times keep the order they were added in.
    private func less(_ a: Item, _ b: Item) -> Bool { a.due != b.due ? a.due < b.due : a.sequence < b.sequence }

    private func push(_ item: Item) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private func pop() -> Item {
        let top = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < heap.count, less(heap[left], heap[smallest]) { smallest = left }
                if right < heap.count, less(heap[right], heap[smallest]) { smallest = right }
                if smallest == parent { break }
                heap.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}

/// Converts the server's wall-clock milliseconds (`opensAt`, `at`) to this process's monotonic
/// nanoseconds. Same machine, same clock: only the epochs differ, measured once.
struct ClockMapping {
    let monotonicAtZero: Double

    init() {
        let mono = Double(nanoseconds())
        let wall = Date().timeIntervalSince1970 * 1e9
        monotonicAtZero = mono - wall
    }

    func monotonic(wallMilliseconds: Double) -> UInt64 {
        UInt64(max(0, wallMilliseconds * 1e6 + monotonicAtZero))
    }
}

/// A small deterministic generator (SplitMix64), so every run of a scenario makes the same choices.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
