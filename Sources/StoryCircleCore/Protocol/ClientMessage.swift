import FoundationEssentials

/// A message from a browser (or any client) to the server. The first one on a connection must be a hello:
/// `join`, `rejoin`, `watch` or `control`.
public enum ClientMessage: Sendable, Equatable {
    case join(room: String, nickname: String)
    /// A child of a class room picking their name (`join` with `member` instead of `nickname`).
    case pick(room: String, member: String)
    /// A name-picker's hello: the class's children and which names are taken.
    case names(room: String)
    case rejoin(room: String, token: String)
    case watch(room: String, token: String)
    case control(room: String, token: String)
    case answer(question: Int, option: Int)
    /// Clock sync. `rtt` is the client's latest measured round trip in ms, which the server uses (bounded)
    /// to be fair to children on slow Wi-Fi when it scores speed.
    case ping(id: Int, clientTime: Double?, roundTripMs: Int?)
    case command(TeacherCommand)
    /// A class child who tapped a name that is not theirs gives it back, before their first answer: the
    /// name is free at once and the connection is a name-picker again.
    case notMe

    /// The room code of a hello, `nil` for other messages.
    public var helloRoom: String? {
        switch self {
        case .join(let room, _), .rejoin(let room, _), .watch(let room, _), .control(let room, _), .pick(let room, _), .names(let room): room
        default: nil
        }
    }

    public var typeName: String { kind.rawValue }

    public var kind: ClientMessageType {
        switch self {
        case .join, .pick: .join
        case .names: .names
        case .rejoin: .rejoin
        case .watch: .watch
        case .control: .control
        case .answer: .answer
        case .ping: .ping
        case .command: .command
        case .notMe: .notMe
        }
    }

    public static let typeNames = ClientMessageType.allCases.map(\.rawValue)

    /// Every field any client message may carry, read from the parsed object one by one, so that a wrong
    /// type or a missing field is reported precisely, and a field that is JSON but not what the protocol
    /// wants (`2.5` or `2^64` where a whole number goes) is an invalid message, not invalid JSON.
    private struct Fields {
        var type: String?
        var room: String?
        var nickname: String?
        var token: String?
        var question: Int?
        var option: Int?
        var id: Int?
        var clientTime: Double?
        var rtt: Int?
        var command: String?
        var player: String?
        var member: String?
        var settings: RoomSettingsPatch?

        /// The fields a message can have, in the order they are checked (the first wrong one is the error).
        private enum Name: Int, CaseIterable {
            case type, room, nickname, token, question, option, id, clientTime, rtt, command, player, member, settings

            /// Each case by the key a client writes for it, which is the case's own name.
            static let byKey = Dictionary(uniqueKeysWithValues: allCases.map { ("\($0)", $0) })
        }

        /// From the message's members (keys all different), in any order.
        init(_ members: some Sequence<(key: String, value: JSONValue)>) throws(RoomError) {
            // One lookup per member of the object (a frame has two to four), rather than one for each of
            // the thirteen names, which was most of reading it.
            var slots = [JSONValue?](repeating: nil, count: Name.allCases.count)
            for (key, value) in members where value != .null {
                if let name = Name.byKey[key] { slots[name.rawValue] = value }
            }
            func present(_ name: Name) -> JSONValue? { slots[name.rawValue] }
            func string(_ name: Name) throws(RoomError) -> String? {
                guard let value = present(name) else { return nil }
                guard case .string(let text) = value else { throw wrongType("\(name)") }
                return text
            }
            func number(_ name: Name) throws(RoomError) -> Double? {
                guard let value = present(name) else { return nil }
                guard case .number(let number) = value else { throw wrongType("\(name)") }
                return number
            }
            func integer(_ name: Name) throws(RoomError) -> Int? {
                guard let value = try number(name) else { return nil }
                guard let integer = Int(exactly: value) else {
                    throw RoomError(.invalidMessage, "The \"\(name)\" field must be a whole number.")
                }
                return integer
            }
            type = try string(.type)
            room = try string(.room)
            nickname = try string(.nickname)
            token = try string(.token)
            question = try integer(.question)
            option = try integer(.option)
            id = try integer(.id)
            clientTime = try number(.clientTime)
            rtt = try integer(.rtt)
            command = try string(.command)
            player = try string(.player)
            member = try string(.member)
            if let value = present(.settings) {
                do {
                    settings = try JSONDecoder().decode(RoomSettingsPatch.self, from: JSONEncoder().encode(value))
                } catch let error as DecodingError {
                    throw describe(error, in: "settings")
                } catch {
                    throw RoomError(.invalidMessage, "The \"settings\" field has an invalid value.")
                }
            }
        }

        private func wrongType(_ key: String) -> RoomError {
            RoomError(.invalidMessage, "The \"\(key)\" field has the wrong type.")
        }

        private func describe(_ error: DecodingError, in parent: String) -> RoomError {
            let path: [String]
            switch error {
            case .typeMismatch(_, let context), .valueNotFound(_, let context), .keyNotFound(_, let context), .dataCorrupted(let context):
                path = [parent] + context.codingPath.map(\.stringValue)
            @unknown default:
                path = [parent]
            }
            return RoomError(.invalidMessage, "The \"\(path.joined(separator: "."))\" field has the wrong type or an invalid value.")
        }
    }

    /// Decodes one text frame, or explains exactly what is wrong with it: by `QuickJSON` when it can
    /// read the frame, otherwise by Foundation. The two give the same answer for every frame (the
    /// fuzzer compares them); only the time differs.
    ///
    /// Inlinable so that the server's call (with `[UInt8]`) is specialised where it is made: unspecialised,
    /// every frame went through the generic collection's witness table and its metadata.
    @inlinable
    public static func decode(_ bytes: some Collection<UInt8>) -> Result<ClientMessage, RoomError> {
        decodeQuickly(bytes) ?? decodeWithFoundation(bytes)
    }

    /// The frame decoded by `QuickJSON`, or `nil` when it leaves the frame to Foundation (anything but
    /// a plain JSON object, and anything it is unsure of).
    @inlinable
    public static func decodeQuickly(_ bytes: some Collection<UInt8>) -> Result<ClientMessage, RoomError>? {
        if let decoded = bytes.withContiguousStorageIfAvailable({ decodeQuickly(contiguous: $0) }) { return decoded }
        return Array(bytes).withUnsafeBufferPointer { decodeQuickly(contiguous: $0) }
    }

    @usableFromInline
    static func decodeQuickly(contiguous bytes: UnsafeBufferPointer<UInt8>) -> Result<ClientMessage, RoomError>? {
        guard let members = QuickJSON.members(bytes) else { return nil }
        return Result { () throws(RoomError) in try message(from: Fields(members)) }
    }

    /// The frame decoded by Foundation's `JSONDecoder`: the reference, and the answer for every frame
    /// `QuickJSON` leaves alone.
    public static func decodeWithFoundation(_ bytes: some Collection<UInt8>) -> Result<ClientMessage, RoomError> {
        let object: [String: JSONValue]
        do {
            guard case .object(let value) = try JSONDecoder().decode(JSONValue.self, from: Data(bytes)) else {
                return .failure(RoomError(.invalidMessage, "A message must be a JSON object with a \"type\" field."))
            }
            object = value
        } catch {
            return .failure(RoomError(.invalidJSON, "That message is not valid JSON."))
        }
        return Result { () throws(RoomError) in try message(from: Fields(object)) }
    }

    private static func message(from fields: Fields) throws(RoomError) -> ClientMessage {
        guard let type = fields.type else {
            throw RoomError(.invalidMessage, "A message needs a \"type\" field.")
        }
        func require<T>(_ value: T?, _ name: String) throws(RoomError) -> T {
            guard let value else {
                throw RoomError(.invalidMessage, "A \"\(type.prefix(40))\" message needs a \"\(name)\" field.")
            }
            return value
        }
        switch ClientMessageType(rawValue: type) {
        case .join:
            if fields.nickname == nil, let member = fields.member { return .pick(room: try require(fields.room, "room"), member: member) }
            return .join(room: try require(fields.room, "room"), nickname: try require(fields.nickname, "nickname"))
        case .names: return .names(room: try require(fields.room, "room"))
        case .rejoin: return .rejoin(room: try require(fields.room, "room"), token: try require(fields.token, "token"))
        case .watch: return .watch(room: try require(fields.room, "room"), token: try require(fields.token, "token"))
        case .control: return .control(room: try require(fields.room, "room"), token: try require(fields.token, "token"))
        case .answer: return .answer(question: try require(fields.question, "question"), option: try require(fields.option, "option"))
        case .ping: return .ping(id: fields.id ?? 0, clientTime: fields.clientTime, roundTripMs: fields.rtt)
        case .notMe: return .notMe
        case .command:
            return .command(try TeacherCommand.named(try require(fields.command, "command"), player: fields.player, settings: fields.settings, member: fields.member))
        case nil:
            throw RoomError(.unknownType, "\"\(type.prefix(40))\" is not a message type. Types: \(typeNames.joined(separator: ", ")).")
        }
    }
}

/// Every `type` a client may send, in the order the refusal of an unknown one lists them: the pages' table
/// (`web-static/js/message-types.js`) is generated from this one (`GeneratedTables`).
public enum ClientMessageType: String, Sendable, CaseIterable {
    case join, rejoin, watch, control, names, answer, ping, command, notMe
}

extension ClientMessage: Encodable {
    private enum CodingKeys: String, CodingKey {
        case type, room, nickname, token, question, option, id, clientTime, rtt, command, player, member, settings
    }

    /// Encodes the message as a client sends it (used by the load generator and tests).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(typeName, forKey: .type)
        switch self {
        case .join(let room, let nickname):
            try container.encode(room, forKey: .room)
            try container.encode(nickname, forKey: .nickname)
        case .pick(let room, let member):
            try container.encode(room, forKey: .room)
            try container.encode(member, forKey: .member)
        case .names(let room):
            try container.encode(room, forKey: .room)
        case .rejoin(let room, let token), .watch(let room, let token), .control(let room, let token):
            try container.encode(room, forKey: .room)
            try container.encode(token, forKey: .token)
        case .answer(let question, let option):
            try container.encode(question, forKey: .question)
            try container.encode(option, forKey: .option)
        case .ping(let id, let clientTime, let roundTrip):
            try container.encode(id, forKey: .id)
            try container.encodeIfPresent(clientTime, forKey: .clientTime)
            try container.encodeIfPresent(roundTrip, forKey: .rtt)
        case .notMe:
            break
        case .command(let command):
            try container.encode(command.name, forKey: .command)
            try container.encodeIfPresent(command.player, forKey: .player)
            try container.encodeIfPresent(command.member, forKey: .member)
            if case .settings(let patch) = command { try container.encode(patch, forKey: .settings) }
        }
    }
}
