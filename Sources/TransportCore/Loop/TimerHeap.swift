/// Deadlines waiting to fire, earliest first: a binary min-heap, ordered by deadline and then by the order
/// they were pushed (two timers for the same instant fire in the order they were set).
///
/// A value with no clock and no thread: the service thread owns one (`LoopExecutor`) and asks it what is due
/// at the time it read. Why not lws's own timer list: lws 4.1 keeps its timers in one sorted linked list, so
/// every insert walks it, and a node with hundreds of rooms sets timers hundreds of times a second.
package struct TimerHeap<Element> {
    private struct Entry {
        var deadline: UInt64
        var order: UInt64
        var element: Element

        func precedes(_ other: Entry) -> Bool {
            deadline != other.deadline ? deadline < other.deadline : order < other.order
        }
    }

    private var entries: [Entry] = []
    private var pushed: UInt64 = 0

    package init() {}

    package var count: Int { entries.count }
    package var isEmpty: Bool { entries.isEmpty }

    /// The earliest deadline, if any.
    package var nextDeadline: UInt64? { entries.first?.deadline }

    package mutating func push(_ element: Element, deadline: UInt64) {
        pushed += 1
        entries.append(Entry(deadline: deadline, order: pushed, element: element))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].precedes(entries[parent]) else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns, in order, every element whose deadline is at or before `now`.
    package mutating func popDue(at now: UInt64) -> [Element] {
        var due: [Element] = []
        while let first = entries.first, first.deadline <= now {
            due.append(first.element)
            removeFirst()
        }
        return due
    }

    /// Removes every element, with its deadline, in no particular order.
    package mutating func removeAll() -> [(element: Element, deadline: UInt64)] {
        defer { entries = [] }
        return entries.map { ($0.element, $0.deadline) }
    }

    private mutating func removeFirst() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { return }
            let right = left + 1
            let child = right < entries.count && entries[right].precedes(entries[left]) ? right : left
            guard entries[child].precedes(entries[parent]) else { return }
            entries.swapAt(child, parent)
            parent = child
        }
    }
}
