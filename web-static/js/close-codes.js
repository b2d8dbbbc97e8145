// WebSocket close codes, named once for every page (docs/protocol.md, "How connections end"); the table is
// made from the Swift enum, whose comments say when each is sent.

import { ERROR } from "./error-codes.js";

// <generated from Sources/StoryCircleCore/Protocol/CloseCode.swift by GeneratedTablesTests: edit the Swift, then `STORYCIRCLE_WRITE_GENERATED=1 swift test --filter GeneratedTables`>
export const CLOSE = Object.freeze({
  NORMAL: 1000,
  GOING_AWAY: 1001,
  PROTOCOL_ERROR: 1002,
  UNSUPPORTED_DATA: 1003,
  ABNORMAL: 1006,
  INVALID_DATA: 1007,
  POLICY: 1008,
  TOO_BIG: 1009,
  SERVICE_RESTART: 1012,
  TRY_AGAIN_LATER: 1013,
  KICKED: 4001,
  REPLACED: 4002,
});
// </generated>

/** Closes after which reconnecting would only be refused again: the page says why and stops. */
export const NO_RECONNECT = new Set([
  CLOSE.PROTOCOL_ERROR, CLOSE.UNSUPPORTED_DATA, CLOSE.INVALID_DATA, CLOSE.POLICY, CLOSE.TOO_BIG, CLOSE.KICKED, CLOSE.REPLACED,
]);

/** A refusal that is only about timing: reconnect, after a pause (for `rate_limited`, the one it says). */
export const RECONNECT_REASONS = new Set([ERROR.HELLO_TIMEOUT, ERROR.RATE_LIMITED]);

/** Whether a close (code and reason) should be followed by reconnecting. */
export function shouldReconnect(code, reason) {
  return !NO_RECONNECT.has(code) || RECONNECT_REASONS.has(reason);
}
