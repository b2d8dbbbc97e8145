// WebSocket close codes, named once for every page (docs/protocol.md, "How connections end").

export const CLOSE = Object.freeze({
  NORMAL: 1000,
  GOING_AWAY: 1001, // the server is stopping or restarting
  PROTOCOL_ERROR: 1002,
  UNSUPPORTED_DATA: 1003, // a binary frame
  ABNORMAL: 1006, // no close frame: a dropped network, or an upgrade refused (HTTP 429, 503)
  INVALID_DATA: 1007,
  POLICY: 1008, // a refused hello or a flood; the reason is the error code
  TOO_BIG: 1009,
  SERVICE_RESTART: 1012,
  TRY_AGAIN_LATER: 1013, // e.g. storage_unavailable: the join could not be stored yet
  KICKED: 4001,
  REPLACED: 4002, // the same child opened the room in another window
});

/** Closes after which reconnecting would only be refused again: the page says why and stops. */
export const NO_RECONNECT = new Set([
  CLOSE.PROTOCOL_ERROR, CLOSE.UNSUPPORTED_DATA, CLOSE.INVALID_DATA, CLOSE.POLICY, CLOSE.TOO_BIG, CLOSE.KICKED, CLOSE.REPLACED,
]);

/** A refusal that is only about timing: reconnect, after a pause. */
export const RECONNECT_REASONS = new Set(["hello_timeout"]);

/** Whether a close (code and reason) should be followed by reconnecting. */
export function shouldReconnect(code, reason) {
  return !NO_RECONNECT.has(code) || RECONNECT_REASONS.has(reason);
}
