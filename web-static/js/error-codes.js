// The server's error codes (docs/protocol.md, "Error codes"), named once for every page (the table is made
// from the Swift enum), and the groups the pages treat alike.

import { t, isolate } from "./i18n.js";

// <generated from Sources/StoryCircleCore/Protocol/ErrorCode.swift by GeneratedTablesTests: edit the Swift, then `STORYCIRCLE_WRITE_GENERATED=1 swift test --filter GeneratedTables`>
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
  UNAUTHORIZED: "unauthorized",
  NOT_FOUND: "not_found",
  METHOD_NOT_ALLOWED: "method_not_allowed",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  INVALID_STORY: "invalid_story",
  PICTURE_REFUSED: "picture_refused",
  VOICE_NOT_INSTALLED: "voice_not_installed",
  SERVER_SHUTTING_DOWN: "server_shutting_down",
  ORIGIN_NOT_ALLOWED: "origin_not_allowed",
  TOO_MANY_CONNECTIONS: "too_many_connections",
  SERVER_FULL: "server_full",
  STORAGE_UNAVAILABLE: "storage_unavailable",
  TRY_AGAIN: "try_again",
  ROOM_MISMATCH: "room_mismatch",
  STORY_NOT_FOUND: "story_not_found",
  STORY_CONFLICT: "story_conflict",
  STORY_IN_USE: "story_in_use",
  CLASS_ROOM: "class_room",
  NAME_TAKEN: "name_taken",
  RELEASED: "released",
  NOT_ME_AFTER_ANSWER: "not_me_after_answer",
  TOKEN_NOT_FOR_ROOM: "token_not_for_room",
  MEMBER_NOT_FOUND: "member_not_found",
  CLASS_NOT_FOUND: "class_not_found",
  INVALID_CLASS: "invalid_class",
  VERSION_CONFLICT: "version_conflict",
  CLASS_IN_USE: "class_in_use",
  ROOM_IN_USE: "room_in_use",
  SIGN_IN_FAILED: "sign_in_failed",
  CSRF_FAILED: "csrf_failed",
  HTTPS_NEEDED: "https_needed",
  RECENT_SIGN_IN_NEEDED: "recent_sign_in_needed",
  INVALID_ACCOUNT: "invalid_account",
  ACCOUNT_NOT_FOUND: "account_not_found",
  SCHOOL_NOT_FOUND: "school_not_found",
  LOGIN_TAKEN: "login_taken",
  SCHOOL_NAME_TAKEN: "school_name_taken",
  CONFLICT: "conflict",
  LAST_DISTRICT_ADMIN: "last_district_admin",
  SETUP_LINK_INVALID: "setup_link_invalid",
  ACCOUNT_DISABLED: "account_disabled",
  INVALID_ROSTER: "invalid_roster",
  INTERNAL_ERROR: "internal_error",
});
// </generated>

/** Refusals of a child's answer: they belong under the question, not on the join screen. */
export const ANSWER_REFUSALS = new Set([
  ERROR.ALREADY_ANSWERED, ERROR.TOO_LATE, ERROR.NOT_OPEN, ERROR.QUESTION_CLOSED, ERROR.INVALID_OPTION,
  ERROR.ROOM_PAUSED, ERROR.STORAGE_UNAVAILABLE,
]);

/** Refused answers after which tapping again can still count. */
export const TAP_AGAIN = new Set([ERROR.STORAGE_UNAVAILABLE, ERROR.NOT_OPEN, ERROR.ROOM_PAUSED, ERROR.INVALID_OPTION]);

/** Refusals of a dashboard or teacher link itself (a wrong token, a room that is gone, a token of the wrong kind). */
export const LINK_REFUSALS = new Set([ERROR.BAD_TOKEN, ERROR.ROOM_NOT_FOUND, ERROR.WRONG_ROLE]);

// What each code says to a person, from the catalog (the server's English `message` is for API clients
// and logs; the pages never show it). Keys are written out so the catalog test sees every one in use.
const WORDS = {
  hello_required: "error.hello_required", already_identified: "error.already_identified", invalid_json: "error.invalid_json",
  unknown_type: "error.unknown_type", invalid_message: "error.invalid_message", message_too_big: "error.message_too_big",
  binary_not_supported: "error.binary_not_supported", too_many_messages: "error.too_many_messages",
  hello_timeout: "error.hello_timeout", room_not_found: "error.room_not_found", bad_token: "error.bad_token",
  wrong_role: "error.wrong_role", rate_limited: "error.rate_limited", room_locked: "error.room_locked",
  join_closed: "error.join_closed", room_full: "error.room_full", room_ended: "error.room_ended",
  nickname_taken: "error.nickname_taken", session_replaced: "error.session_replaced", kicked: "join.removed",
  not_open: "error.not_open", question_closed: "error.question_closed", already_answered: "error.already_answered",
  too_late: "error.too_late", invalid_option: "error.invalid_option", room_paused: "error.room_paused",
  invalid_command: "error.invalid_command", player_not_found: "error.player_not_found",
  settings_locked: "error.settings_locked", invalid_settings: "error.invalid_settings",
  storage_unavailable: "error.storage_unavailable", try_again: "error.try_again", room_mismatch: "error.room_mismatch",
  internal_error: "error.internal_error", voice_not_installed: "error.voice_not_installed",
  class_room: "error.class_room", name_taken: "error.name_taken", released: "join.name_given_back", not_me_after_answer: "join.not_me_after_answer", token_not_for_room: "error.token_not_for_room", member_not_found: "error.member_not_found",
  class_not_found: "error.class_not_found", invalid_class: "error.invalid_class", version_conflict: "error.version_conflict",
  class_in_use: "error.class_in_use", sign_in_failed: "error.sign_in_failed", csrf_failed: "error.csrf_failed",
  account_disabled: "error.account_disabled",
};
const COMMAND_PROBLEMS = {
  already_started: "error.invalid_command.already_started", nothing_failed: "error.invalid_command.nothing_failed",
  already_paused: "error.invalid_command.already_paused", nothing_to_pause: "error.invalid_command.nothing_to_pause",
  not_paused: "error.invalid_command.not_paused", not_narrating: "error.invalid_command.not_narrating",
  no_open_question: "error.invalid_command.no_open_question", not_started: "error.invalid_command.not_started",
  story_not_over: "error.invalid_command.story_not_over", already_locked: "error.invalid_command.already_locked",
  not_locked: "error.invalid_command.not_locked", unknown_command: "error.invalid_command.unknown_command",
  not_taken: "error.invalid_command.not_taken",
};
const SETTINGS_PROBLEMS = {
  questionSeconds: "error.invalid_settings.question_seconds", maxPlayers: "error.invalid_settings.max_players",
  voice: "error.invalid_settings.voice", language: "error.invalid_settings.language",
};
const NICKNAME_PROBLEMS = {
  empty: "error.nickname_invalid.empty", too_long: "error.nickname_invalid.too_long",
  invalid_characters: "error.nickname_invalid.invalid_characters",
};

/**
 * A refusal (`{code, params}`) in the page's language. `known` adds what the page itself knows (the room
 * `code` it asked for).
 */
export function errorText(error, known = {}) {
  const params = error.params ?? {};
  if (error.code === ERROR.ROOM_NOT_FOUND) {
    const asked = params.code ?? known.code;
    return asked ? t("error.room_not_found", { code: asked }) : t("error.room_not_found_any");
  }
  if (error.code === ERROR.RATE_LIMITED) return t("error.rate_limited", { count: retryAfterSeconds(error) });
  if (error.code === ERROR.INVALID_COMMAND) return t(COMMAND_PROBLEMS[params.problem] ?? "error.invalid_command");
  if (error.code === ERROR.INVALID_SETTINGS) {
    return t(SETTINGS_PROBLEMS[params.setting] ?? "error.invalid_settings", { min: Number(params.min ?? 0), max: Number(params.max ?? 0) });
  }
  const named = (value) => isolate(value ?? "");
  if (error.code === ERROR.NICKNAME_INVALID) {
    return t(NICKNAME_PROBLEMS[params.problem] ?? "error.nickname_invalid.invalid_characters", { max: Number(params.max ?? 40) });
  }
  if (error.code === ERROR.BLOCKED) return params.nickname ? t("error.blocked_name", { nickname: named(params.nickname) }) : t("join.removed");
  if (error.code === ERROR.CLASS_ROOM) return t("error.class_room", { class: named(params.class) });
  if (error.code === ERROR.NAME_TAKEN) return t("error.name_taken", { name: named(params.name) });
  if (error.code === ERROR.NICKNAME_TAKEN) return t("error.nickname_taken", { nickname: named(params.nickname) });
  return t(WORDS[error.code] ?? "error.unknown");
}

/** The seconds a `rate_limited` refusal says to wait before trying again (a minute if it does not say). */
export function retryAfterSeconds(error) {
  const seconds = Number(error?.params?.retryAfter);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(Math.ceil(seconds), 3600) : 60;
}

