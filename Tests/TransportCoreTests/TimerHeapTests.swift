import Testing
import TransportCore

/// The loop executor's timers, as a value: no clock, no thread.
@Suite("Timer heap")
struct TimerHeapTests {
    @Test func dueTimersComeOutByDeadlineAndTiesInTheOrderTheyWereSet() {
        var heap = TimerHeap<String>()
        heap.push("c", deadline: 30)
        heap.push("a", deadline: 10)
        heap.push("b1", deadline: 20)
        heap.push("d", deadline: 40)
        heap.push("b2", deadline: 20)
        #expect(heap.nextDeadline == 10)
        #expect(heap.popDue(at: 9).isEmpty)
        #expect(heap.popDue(at: 20) == ["a", "b1", "b2"])
        #expect(heap.nextDeadline == 30)
        #expect(heap.popDue(at: 100) == ["c", "d"])
        #expect(heap.isEmpty && heap.nextDeadline == nil)
    }

    @Test func manyTimersInAnyOrderComeOutSorted() {
        var heap = TimerHeap<Int>()
        var generator = SystemRandomNumberGenerator()
        let deadlines = (0..<1_000).map { _ in UInt64.random(in: 0..<500, using: &generator) }
        for (index, deadline) in deadlines.enumerated() { heap.push(index, deadline: deadline) }
        let out = heap.popDue(at: .max)
        // By deadline, and among equal deadlines by the order they were pushed (their index).
        let expected = deadlines.enumerated().sorted { ($0.element, $0.offset) < ($1.element, $1.offset) }.map(\.offset)
        #expect(out == expected)
    }
}
