/// An array that is emptied from the front: `removeFirst` moves a start index instead of every element,
/// so a room with thousands of records in flight does not pay for each one stored twice over.
///
/// Inlinable: the outbox's shell, in another module, keeps one per room and touches it for every message;
/// an unspecialised generic there would look its metadata up at run time on each call.
public struct FIFO<Element>: RandomAccessCollection, MutableCollection {
    @usableFromInline var storage: [Element] = []
    @usableFromInline var head = 0

    @inlinable public init() {}

    @inlinable public var startIndex: Int { head }
    @inlinable public var endIndex: Int { storage.count }

    @inlinable public subscript(position: Int) -> Element {
        get { storage[position] }
        set { storage[position] = newValue }
    }

    @inlinable public mutating func append(_ element: Element) {
        storage.append(element)
    }

    @inlinable public mutating func removeFirst(_ count: Int) {
        precondition(count <= self.count, "removing more than there is")
        head += count
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    @inlinable public mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }
}

extension FIFO: Sendable where Element: Sendable {}
