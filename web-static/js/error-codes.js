// The server's error codes (docs/protocol.md, "Error codes"), named once for every page, and the groups
// the pages treat alike.

export const ERROR = Object.freeze({
  HELLO_REQUIRED: "hello_required",
  ALREADY_IDENTIFIED: "already_identified",
  INVALID_JSON: "invalid_json",
  UNKNOWN_TYPE: "unknown_type",
  INVALID_MESSAGE: "invalid_message",
  MESSAGE_TOO_BIG: "message_too_big",
  BINARY_NOT_SUPPORTED: "binary_not_supported",
  TOO_MANY_MESSAGES: "too_many_messages",
  HELLO_TIMEOUT: "hello_timeout",
  ROOM_NOT_FOUND: "room_not_found",
  BAD_TOKEN: "bad_token",
  WRONG_ROLE: "wrong_role",
  RATE_LIMITED: "rate_limited",
  ROOM_LOCKED: "room_locked",
  JOIN_CLOSED: "join_closed",
  ROOM_FULL: "room_full",
  ROOM_ENDED: "room_ended",
  NICKNAME_INVALID: "nickname_invalid",
  NICKNAME_TAKEN: "nickname_taken",
  SESSION_REPLACED: "session_replaced",
  KICKED: "kicked",
  BLOCKED: "blocked",
  NOT_OPEN: "not_open",
  QUESTION_CLOSED: "question_closed",
  ALREADY_ANSWERED: "already_answered",
  TOO_LATE: "too_late",
  INVALID_OPTION: "invalid_option",
  ROOM_PAUSED: "room_paused",
  INVALID_COMMAND: "invalid_command",
  PLAYER_NOT_FOUND: "player_not_found",
  SETTINGS_LOCKED: "settings_locked",
  INVALID_SETTINGS: "invalid_settings",
  STORAGE_UNAVAILABLE: "storage_unavailable",
  TRY_AGAIN: "try_again",
  ROOM_MISMATCH: "room_mismatch",
  INTERNAL_ERROR: "internal_error",
});

/** Refusals of a child's answer: they belong under the question, not on the join screen. */
export const ANSWER_REFUSALS = new Set([
  ERROR.ALREADY_ANSWERED, ERROR.TOO_LATE, ERROR.NOT_OPEN, ERROR.QUESTION_CLOSED, ERROR.INVALID_OPTION,
  ERROR.ROOM_PAUSED, ERROR.STORAGE_UNAVAILABLE,
]);

/** Refused answers after which tapping again can still count. */
export const TAP_AGAIN = new Set([ERROR.STORAGE_UNAVAILABLE, ERROR.NOT_OPEN, ERROR.ROOM_PAUSED, ERROR.INVALID_OPTION]);

/** Refusals of a dashboard or teacher link itself (a wrong token, a room that is gone, a token of the wrong kind). */
export const LINK_REFUSALS = new Set([ERROR.BAD_TOKEN, ERROR.ROOM_NOT_FOUND, ERROR.WRONG_ROLE]);
