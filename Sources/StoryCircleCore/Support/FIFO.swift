/// An array that is emptied from the front: `removeFirst` moves a start index instead of every element,
/// so a room with thousands of records in flight does not pay for each one stored twice over.
public struct FIFO<Element>: RandomAccessCollection, MutableCollection {
    private var storage: [Element] = []
    private var head = 0

    public init() {}

    public var startIndex: Int { head }
    public var endIndex: Int { storage.count }

    public subscript(position: Int) -> Element {
        get { storage[position] }
        set { storage[position] = newValue }
    }

    public mutating func append(_ element: Element) {
        storage.append(element)
    }

    public mutating func removeFirst(_ count: Int) {
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

    public mutating func removeAll() {
        storage.removeAll(keepingCapacity: true)
        head = 0
    }
}

extension FIFO: Sendable where Element: Sendable {}
