import FoundationEssentials

/// The server's messages as bytes, written by `JSONWriter` rather than `JSONEncoder`: a reveal and a
/// podium are one message per child, and Foundation's encoder cost several times what the rest of a send
/// does. Each payload writes its members in declaration order and leaves out `nil` optionals, exactly as
/// the synthesised `Codable` conformances (still used to decode, and as the reference) do;
/// `ServerMessageEncodingTests` checks the two agree for every kind of message, nasty strings included.
///
/// Most payloads' writers are generated from their declarations (`ServerMessagePayloads+Writing.swift`,
/// README, "Generated tables"), so that a field is named once; the ones at the end of this file are those
/// written otherwise: in two halves around `you`, or with `null`s, as their own `encode(to:)` does.
extension ServerMessage {
    /// The message as the UTF-8 bytes of one text frame.
    public func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: expectedSize)
        writer.beginObject()
        writer.field("type", type)
        switch self {
        case .welcome(let payload): payload.writeMembers(to: &writer)
        case .error(let payload): payload.writeMembers(to: &writer)
        case .pong(let payload): payload.writeMembers(to: &writer)
        case .lobby(let payload): payload.writeMembers(to: &writer)
        case .preparing(let payload): payload.writeMembers(to: &writer)
        case .narrationPlan(let payload): payload.writeMembers(to: &writer)
        case .narrationSentence(let payload): payload.writeMembers(to: &writer)
        case .narrationNotice(let payload): payload.writeMembers(to: &writer)
        case .progress(let payload): payload.writeMembers(to: &writer)
        case .narrationComplete(let payload): payload.writeMembers(to: &writer)
        case .narrationError(let payload): payload.writeMembers(to: &writer)
        case .quizUnlock(let payload): payload.writeMembers(to: &writer)
        case .question(let payload): payload.writeMembers(to: &writer)
        case .answerAck(let payload): payload.writeMembers(to: &writer)
        case .reveal(let payload): payload.writeMembers(to: &writer)
        case .scoreboard(let payload): payload.writeMembers(to: &writer)
        case .paused(let payload): payload.writeMembers(to: &writer)
        case .resumed(let payload): payload.writeMembers(to: &writer)
        case .room(let payload): payload.writeMembers(to: &writer)
        case .finished(let payload): payload.writeMembers(to: &writer)
        case .kicked(let payload): payload.writeMembers(to: &writer)
        case .storage(let payload): payload.writeMembers(to: &writer)
        case .names(let payload): payload.writeMembers(to: &writer)
        case .classRoster(let payload): payload.writeMembers(to: &writer)
        }
        writer.endObject()
        // Only a non-finite number (a `Pong` made in code, never one decoded from JSON) has no JSON form.
        return writer.failed ? encodedByFoundation() : writer.bytes
    }

    /// The message as Foundation's `JSONEncoder` writes it: the reference `encoded()` is tested against.
    public func encodedByFoundation() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        // Every payload is plain data: encoding fails only for a non-finite number.
        return Array((try? encoder.encode(self)) ?? Data(#"{"type":"error","code":"internal_error","message":"Encoding failed."}"#.utf8))
    }

    /// Room for most messages of the kind at once, so the bytes are rarely copied while growing.
    private var expectedSize: Int {
        switch self {
        case .answerAck, .pong, .progress, .preparing, .narrationComplete, .quizUnlock, .paused, .resumed: 96
        case .error, .kicked, .narrationError, .narrationNotice, .room, .storage: 384
        case .names, .classRoster: 4_096
        case .reveal, .finished, .question, .narrationSentence: 1_024
        case .welcome, .lobby, .narrationPlan, .scoreboard: 4_096
        }
    }
}

extension Role: JSONWritable {}
extension PhaseName: JSONWritable {}
extension NarrationMode: JSONWritable {}
extension QuestionOutcome: JSONWritable {}
extension ErrorCode: JSONWritable {}
extension StoreProblem: JSONWritable {}
extension NarrationProblem.Reason: JSONWritable {}

extension Dictionary: JSONWritable where Key == String, Value == String {
    func write(to writer: inout JSONWriter) { writer.stringObject(self) }
}

extension Reveal: PersonalisedPayload {
    func writeMembersBeforeYou(to writer: inout JSONWriter) {
        writer.field("question", question)
        writer.field("correctOption", correctOption)
        writer.field("explanation", explanation)
        writer.field("distribution", distribution)
    }

    func writeYou(to writer: inout JSONWriter) {
        writer.field("you", you)
    }

    func writeMembersAfterYou(to writer: inout JSONWriter) {
        writer.field("top", top)
    }

    var shared: Reveal {
        var shared = self
        shared.you = nil
        return shared
    }
}

extension Finished: PersonalisedPayload {
    func writeMembersBeforeYou(to writer: inout JSONWriter) {
        writer.field("podium", podium)
        writer.field("podiumMore", podiumMore)
    }

    func writeYou(to writer: inout JSONWriter) {
        writer.field("you", you)
    }

    func writeMembersAfterYou(to writer: inout JSONWriter) {
        writer.field("entries", entries)
    }

    var shared: Finished {
        var shared = self
        shared.you = nil
        return shared
    }
}

extension NamesList: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("room", room)
        writer.fieldOrNull("class", schoolClass)
        writer.field("children", children)
    }
}

extension RosterMember: JSONObjectWritable {
    func writeMembers(to writer: inout JSONWriter) {
        writer.field("member", member)
        writer.field("name", name)
        writer.field("avatar", avatar)
        writer.fieldOrNull("player", player)
        writer.field("taken", taken)
        writer.field("connected", connected)
    }
}

