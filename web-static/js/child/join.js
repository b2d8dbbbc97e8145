// The join screen: a room code and a nickname (or one picked for you), and coming back after a refresh
// with the saved session. A child the teacher blocked from a room keeps that room's token, so this browser
// asks with it again and the server answers "blocked" (the name is refused by the server as well).

import { $, announce } from "../dom.js";
import { ERROR } from "../error-codes.js";
import { friendlyName } from "../names.js";
import { session, services, show, loadSession, forgetSession, blockedToken, rememberBlocked, forgetBlocked } from "./store.js";

let connect = () => {};

export function startJoin(connectToRoom) {
  connect = connectToRoom;
  const params = new URLSearchParams(location.search);
  const linkedRoom = params.get("room");
  if (linkedRoom) $("#room-code").value = linkedRoom.replace(/\D/g, "").slice(0, 6);
  $("#random-name").addEventListener("click", () => { $("#nickname").value = friendlyName(); $("#nickname").focus(); });
  $("#join-form").addEventListener("submit", submitJoin);

  const session = loadSession();
  if (session && session.token && (!linkedRoom || linkedRoom === session.room)) {
    Object.assign(session, { room: session.room, token: session.token, nickname: session.nickname, playerId: session.playerId, pending: session.pending ?? null });
    show("lobby");
    $("#lobby-name").textContent = session.nickname ?? "";
    $("#lobby-room").textContent = session.room;
    connect();
  } else {
    show("join");
    (linkedRoom ? $("#nickname") : $("#room-code")).focus();
  }
}

function submitJoin(event) {
  event.preventDefault();
  const code = $("#room-code").value.replace(/\D/g, "");
  const nickname = $("#nickname").value.trim().replace(/\s+/g, " ");
  if (code.length !== 6) return joinError("The room code has 6 numbers. Look at the board and try again.");
  if (!nickname) return joinError("Please type a nickname, or press “Pick a name for me”.");
  $("#join-error").hidden = true;
  $("#join-button").disabled = true;
  session.room = code;
  session.nickname = nickname;
  const blocked = blockedToken(code);
  session.token = blocked;
  session.tryingBlockedToken = Boolean(blocked);
  connect();
}

export function joinError(text) {
  show("join");
  $("#join-button").disabled = false;
  const box = $("#join-error");
  box.textContent = text;
  box.hidden = false;
  announce(text);
}

/** A refusal before the welcome: the hello did not get in. */
export function joinRefused(error) {
  if (error.code === ERROR.BLOCKED) {
    services.connection.stop();
    // Asked with this browser's token: this browser was blocked. Asked with a name: that name was.
    const byToken = Boolean(session.token);
    if (byToken) rememberBlocked(session.room, session.token);
    forgetSessionKeepingNothing();
    return joinError(byToken ? "Your teacher removed you from this room." : error.message);
  }
  if (error.code === ERROR.BAD_TOKEN) {
    if (session.tryingBlockedToken) {
      // The room no longer knows that token (it was deleted, say): join as anyone would.
      forgetBlocked(session.room);
      session.tryingBlockedToken = false;
      session.token = null;
      services.connection.stop();
      return connect();
    }
    // The saved session no longer works (the room was restarted or ended): start over.
    services.connection.stop();
    forgetSession();
    return joinError("We could not find you in this room any more. Please join again.");
  }
  if (error.code === ERROR.STORAGE_UNAVAILABLE) {
    // The server could not save this child yet; the connection tries again by itself (close 1013).
    const banner = $("#connection-message");
    $("#connection-text").textContent = "We could not save your place yet. Trying again…";
    banner.hidden = false;
    return;
  }
  if (error.code === ERROR.TRY_AGAIN) {
    // The room is moving to another server (one stopped); the connection tries again by itself (close 1012).
    const banner = $("#connection-message");
    $("#connection-text").textContent = "Getting your room back. Trying again…";
    banner.hidden = false;
    return;
  }
  services.connection.stop();
  return joinError(error.message);
}

/** The teacher removed this child; when blocked, this browser remembers it for this room. */
export function kicked(message) {
  services.connection.stop();
  services.player.stop();
  if (message.blocked && session.token) rememberBlocked(session.room, session.token);
  forgetSessionKeepingNothing();
  joinError(message.message);
}

function forgetSessionKeepingNothing() {
  forgetSession();
  session.welcomed = false;
  session.tryingBlockedToken = false;
}
