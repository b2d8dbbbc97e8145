/// The stable, machine-readable reason in every refusal: `{"type":"error","code":"...","message":"..."}`
/// on the WebSocket and `{"error":{"code":...,"message":...}}` over HTTP. Codes never change meaning;
/// `docs/protocol.md` lists them all.
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    // The conversation itself.
    case helloRequired = "hello_required"
    case alreadyIdentified = "already_identified"
    case invalidJSON = "invalid_json"
    case unknownType = "unknown_type"
    case invalidMessage = "invalid_message"
    case messageTooBig = "message_too_big"
    case binaryNotSupported = "binary_not_supported"
    case tooManyMessages = "too_many_messages"
    /// No hello within the hello timeout.
    case helloTimeout = "hello_timeout"

    // Getting in.
    case roomNotFound = "room_not_found"
    case badToken = "bad_token"
    case wrongRole = "wrong_role"
    case rateLimited = "rate_limited"
    case roomLocked = "room_locked"
    case joinClosed = "join_closed"
    case roomFull = "room_full"
    case roomEnded = "room_ended"
    case nicknameInvalid = "nickname_invalid"
    case nicknameTaken = "nickname_taken"
    case sessionReplaced = "session_replaced"
    case kicked = "kicked"
    /// The teacher removed this child for good: their name and this browser's token stay refused.
    case blocked = "blocked"

    // Answering.
    case notOpen = "not_open"
    case questionClosed = "question_closed"
    case alreadyAnswered = "already_answered"
    case tooLate = "too_late"
    case invalidOption = "invalid_option"
    case roomPaused = "room_paused"

    // Teacher commands.
    case invalidCommand = "invalid_command"
    case playerNotFound = "player_not_found"
    case settingsLocked = "settings_locked"
    case invalidSettings = "invalid_settings"

    // HTTP and the server as a whole.
    case unauthorized = "unauthorized"
    case notFound = "not_found"
    case methodNotAllowed = "method_not_allowed"
    case payloadTooLarge = "payload_too_large"
    case invalidStory = "invalid_story"
    /// A picture upload that is not a usable picture (params: `reason`, the `PictureError` code).
    case pictureRefused = "picture_refused"
    /// The story or room names a voice this node does not have (the message lists the ones it has).
    case voiceNotInstalled = "voice_not_installed"
    case serverShuttingDown = "server_shutting_down"
    /// A WebSocket upgrade from a page of another site.
    case originNotAllowed = "origin_not_allowed"
    /// A WebSocket upgrade from an address that has `maxConnectionsPerAddress` open already.
    case tooManyConnections = "too_many_connections"
    /// A WebSocket upgrade while `maxConnections` are open.
    case serverFull = "server_full"
    /// A write could not be stored (disk full, read-only, I/O error): nothing was acknowledged; try again.
    case storageUnavailable = "storage_unavailable"
    /// This node cannot serve the room just now (another node still holds it, or this one lost it): the
    /// WebSocket closes with 1012 and HTTP answers 503 with `Retry-After`; trying again shortly reaches the
    /// room's new node.
    case tryAgain = "try_again"
    /// The hello names a different room from the one in the WebSocket URL (`/ws?room=…`).
    case roomMismatch = "room_mismatch"
    /// No story with this id in the library (`params.id`).
    case storyNotFound = "story_not_found"
    /// A change of a library story based on a version that is no longer the current one (`params.version`
    /// is the current; the answer carries the current story as `current`).
    case storyConflict = "story_conflict"
    /// A library story that rooms still running were started from (`params.rooms`).
    case storyInUse = "story_in_use"
    /// A typed nickname in a room of a class: children pick their name (`names`).
    case classRoom = "class_room"
    /// The picked child's name is held by a player of the room.
    case nameTaken = "name_taken"
    /// The teacher released this child's name for another device: this resume token no longer works.
    case released = "released"
    /// A `notMe` from a child who has answered already: the name stays theirs (the teacher can still free it).
    case notMeAfterAnswer = "not_me_after_answer"
    /// A resume token of another room.
    case tokenNotForRoom = "token_not_for_room"
    case memberNotFound = "member_not_found"
    case classNotFound = "class_not_found"
    case invalidClass = "invalid_class"
    /// The class changed since the version a change was based on.
    case versionConflict = "version_conflict"
    /// A room of the class has not finished.
    case classInUse = "class_in_use"
    /// A room that has not finished cannot be deleted, nor a child erased from it (it holds them in memory).
    case roomInUse = "room_in_use"
    /// A password sign-in refused: one answer for an unknown login, a wrong password and a disabled account.
    case signInFailed = "sign_in_failed"
    /// A request the session cookie authenticated, changing something, without the session's CSRF token
    /// (`X-CSRF-Token`) or from a page of another origin.
    case csrfFailed = "csrf_failed"
    /// A sign-in over plain HTTP at an address of the network: the browser would drop the Secure cookie, so
    /// the page says to open the https:// address instead.
    case httpsNeeded = "https_needed"
    /// Adding a passkey with a session older than a few minutes: the account's password is asked for with
    /// the request (`reason` says whether it was missing or wrong, or that only a new sign-in will do).
    case recentSignInNeeded = "recent_sign_in_needed"
    /// An account or school body that cannot be stored as sent (`problems` lists each).
    case invalidAccount = "invalid_account"
    case accountNotFound = "account_not_found"
    case schoolNotFound = "school_not_found"
    case loginTaken = "login_taken"
    case schoolNameTaken = "school_name_taken"
    /// An account changed since the version a change was based on (`current` carries it).
    case conflict = "conflict"
    /// The change would leave no enabled district administrator.
    case lastDistrictAdmin = "last_district_admin"
    /// A setup link that was used, expired, replaced, or is of a disabled account.
    case setupLinkInvalid = "setup_link_invalid"
    /// The room's owner account is disabled: the room carries on for the children and the projector, but
    /// its teacher token controls nothing (commands and results refused) until the account is enabled.
    case accountDisabled = "account_disabled"
    /// A roster that cannot be imported as it is (`problems` lists each, with file, line and field).
    case invalidRoster = "invalid_roster"
    case internalError = "internal_error"
}

extension ErrorCode {
    /// The status of an HTTP response refusing with this code. Exhaustive on purpose: a new code says here
    /// what it is over HTTP.
    public var httpStatus: Int {
        switch self {
        case .invalidJSON, .invalidMessage, .roomMismatch, .invalidSettings, .unknownType, .nicknameInvalid, .invalidClass, .invalidAccount: 400
        case .unauthorized, .badToken, .tokenNotForRoom, .signInFailed: 401
        case .wrongRole, .originNotAllowed, .csrfFailed, .accountDisabled, .httpsNeeded, .recentSignInNeeded: 403
        case .roomNotFound, .notFound, .playerNotFound, .storyNotFound, .memberNotFound, .classNotFound, .accountNotFound, .schoolNotFound,
             .setupLinkInvalid: 404
        case .methodNotAllowed: 405
        case .invalidCommand, .settingsLocked, .roomEnded, .alreadyAnswered, .questionClosed, .notOpen, .storyConflict, .storyInUse,
             .versionConflict, .classInUse, .roomInUse, .classRoom, .nameTaken, .released, .loginTaken, .schoolNameTaken, .conflict,
             .lastDistrictAdmin: 409
        case .payloadTooLarge, .messageTooBig: 413
        case .invalidStory, .voiceNotInstalled, .pictureRefused, .invalidRoster: 422
        case .rateLimited, .tooManyMessages, .tooManyConnections: 429
        case .serverShuttingDown, .serverFull, .storageUnavailable, .tryAgain: 503
        // Refusals only a WebSocket carries: an HTTP answer with one of them would be the server's fault.
        case .helloRequired, .alreadyIdentified, .binaryNotSupported, .helloTimeout, .roomLocked, .joinClosed, .roomFull, .nicknameTaken,
             .sessionReplaced, .kicked, .blocked, .tooLate, .invalidOption, .roomPaused, .notMeAfterAnswer, .internalError: 500
        }
    }

    /// How a WebSocket refused with this code is closed, after the error message. Refused hellos and floods
    /// close with `policy`, after which a page does not reconnect; the others tell it when to come back.
    /// (A room taken out of memory closes its connections with `goingAway` whatever the reason.)
    public var closeCode: CloseCode {
        switch self {
        case .tryAgain: .serviceRestart
        case .storageUnavailable: .tryAgainLater
        case .serverShuttingDown: .goingAway
        case .messageTooBig: .tooBig
        case .binaryNotSupported: .unsupportedData
        case .kicked: .kicked
        case .sessionReplaced: .replaced
        case .helloRequired, .alreadyIdentified, .invalidJSON, .unknownType, .invalidMessage, .tooManyMessages, .helloTimeout,
             .roomNotFound, .badToken, .wrongRole, .rateLimited, .roomLocked, .joinClosed, .roomFull, .roomEnded, .nicknameInvalid,
             .nicknameTaken, .blocked, .notOpen, .questionClosed, .alreadyAnswered, .tooLate, .invalidOption, .roomPaused,
             .invalidCommand, .playerNotFound, .settingsLocked, .invalidSettings, .unauthorized, .notFound, .methodNotAllowed,
             .payloadTooLarge, .invalidStory, .pictureRefused, .voiceNotInstalled, .originNotAllowed, .tooManyConnections,
             .serverFull, .roomMismatch, .storyNotFound, .storyConflict, .storyInUse, .classRoom, .nameTaken, .released,
             .notMeAfterAnswer, .tokenNotForRoom, .memberNotFound, .classNotFound, .invalidClass, .versionConflict, .classInUse,
             .roomInUse, .invalidAccount, .accountNotFound, .schoolNotFound, .loginTaken, .schoolNameTaken, .conflict, .lastDistrictAdmin,
             .setupLinkInvalid, .signInFailed, .csrfFailed, .accountDisabled, .httpsNeeded, .recentSignInNeeded, .invalidRoster, .internalError:
            .policy
        }
    }
}

/// A refusal: a stable code, the parameters a page words it with (`params`, absent when there are none),
/// and an English sentence for API clients and logs. The pages never show `message`: they word the code
/// from their catalog (docs/protocol.md, "Error codes").
public struct RoomError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String
    public var params: [String: String]?

    public init(_ code: ErrorCode, _ message: String, params: [String: String]? = nil) {
        self.code = code
        self.message = message
        self.params = params
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
