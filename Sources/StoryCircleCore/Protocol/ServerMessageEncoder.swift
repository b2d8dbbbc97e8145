/// Encodes a room's messages in the order it sends them, as `ServerMessage.encoded()` does, byte for byte.
///
/// After a question a room sends every child a reveal that differs from the others only in `you` (and at
/// the end a podium, the same way): the question, the distribution and the top of the board are the same
/// for 2,000 children. A run of such messages has its shared members written once; each child's message is
/// that start, its own `you`, and that end, copied. Whether a message belongs to the run is an equality test
/// of its shared part, cheap because every child's payload holds the same arrays and strings.
public struct ServerMessageEncoder {
    private var run: (shared: ServerMessage, head: [UInt8], tail: [UInt8])?
    /// Messages built from a run's shared part rather than written whole.
    private(set) var reused = 0

    public init() {}

    public mutating func encode(_ message: ServerMessage) -> [UInt8] {
        switch message {
        case .reveal(let payload) where payload.you != nil:
            encode(payload, of: message, shared: .reveal(payload.shared))
        case .finished(let payload) where payload.you != nil:
            encode(payload, of: message, shared: .finished(payload.shared))
        default:
            message.encoded()
        }
    }

    private mutating func encode(_ payload: some PersonalisedPayload, of message: ServerMessage, shared: ServerMessage) -> [UInt8] {
        if let run, run.shared == shared {
            reused += 1
            var writer = JSONWriter(continuing: run.head, capacity: run.head.count + 256 + run.tail.count)
            payload.writeYou(to: &writer)
            writer.append(written: run.tail)
            return writer.failed ? message.encodedByFoundation() : writer.bytes
        }
        var writer = JSONWriter(capacity: 1_024)
        writer.beginObject()
        writer.field("type", message.type)
        payload.writeMembersBeforeYou(to: &writer)
        let head = writer.count
        payload.writeYou(to: &writer)
        let tail = writer.count
        payload.writeMembersAfterYou(to: &writer)
        writer.endObject()
        guard !writer.failed else {
            run = nil
            return message.encodedByFoundation()
        }
        run = (shared, writer.bytes(0..<head), writer.bytes(tail..<writer.count))
        return writer.bytes
    }
}

/// A payload every child gets alike but for its own `you`.
protocol PersonalisedPayload: JSONObjectWritable {
    /// The payload without `you`: what a run of them shares.
    var shared: Self { get }
    func writeMembersBeforeYou(to writer: inout JSONWriter)
    func writeYou(to writer: inout JSONWriter)
    func writeMembersAfterYou(to writer: inout JSONWriter)
}

extension PersonalisedPayload {
    func writeMembers(to writer: inout JSONWriter) {
        writeMembersBeforeYou(to: &writer)
        writeYou(to: &writer)
        writeMembersAfterYou(to: &writer)
    }
}
