// The join screen: a room code and a nickname (or one picked for you), and coming back after a refresh
// with the saved session. A child the teacher blocked from a room keeps that room's token, so this browser
// asks with it again and the server answers "blocked" (the name is refused by the server as well). A child
// only removed keeps it too: joining that room again from this browser brings back the same child, with
// their answers and points (the teacher may have removed them by mistake). A class child who tapped a name
// that is not theirs presses "That's not me" before their first answer and is back at the names; whichever
// way a name is given back, the page says so kindly, never as an error.

import { $, announce } from "../dom.js";
import { ERROR, errorText } from "../error-codes.js";
import { t, isolate } from "../i18n.js";
import { friendlyName } from "../names.js";
import { room, session, services, show, advance, loadSession, forgetSession, blockedToken, rememberBlocked, forgetBlocked, results } from "./store.js";
import { STAGE, EVENT, isIn, isPicking, isGivingBack } from "./join-stage.js";
import { setPickerConnect, startPicking, stopPicking, pickRefused } from "./picker.js";

let connect = () => {};
/** Digits in this server's room codes (`GET /api/join`): six, as most servers, until it answers. */
let codeDigits = 6;
/** The refusals of a `names` hello by a server that has no class rooms. */
const NAMES_UNKNOWN = new Set([ERROR.UNKNOWN_TYPE, ERROR.HELLO_REQUIRED, ERROR.INVALID_MESSAGE]);

export function startJoin(connectToRoom) {
  connect = connectToRoom;
  setPickerConnect(connectToRoom);
  const params = new URLSearchParams(location.search);
  const linkedRoom = params.get("room");
  if (linkedRoom) $("#room-code").value = digits(linkedRoom).slice(0, 12);
  askCodeDigits();
  $("#random-name").addEventListener("click", () => { $("#nickname").value = friendlyName(); showLength(); $("#nickname").focus(); });
  $("#nickname").addEventListener("input", showLength);
  showLength();
  $("#join-form").addEventListener("submit", submitJoin);
  $("#room-code").addEventListener("input", codeTyped);
  $("#not-me-button").addEventListener("click", notMe);

  // Back after a refresh: the saved token rejoins as the same child (into this page's session).
  const saved = loadSession();
  if (saved && saved.token && (!linkedRoom || linkedRoom === saved.room)) {
    Object.assign(session, { room: saved.room, token: saved.token, nickname: saved.nickname, playerId: saved.playerId, pending: saved.pending ?? null, classMember: saved.classMember ?? null });
    advance(EVENT.JOIN);
    show("lobby");
    connect();
  } else if (linkedRoom && isRoomCode(digits(linkedRoom))) {
    // A link (or the QR code) names the room: ask it for its names first. A class room shows the
    // name-picker; any other brings back the nickname field, focused then (not before: no keyboard
    // comes up over a class's names).
    startPicking(digits(linkedRoom));
  } else {
    show("join");
    $("#room-code").focus();
  }
}

/** A link's code: whole as it came (a link carries the whole code, whatever this server's length). */
export function isRoomCode(code) {
  return /^[0-9]{6,12}$/.test(code);
}

/** How long this server's codes are: a typed code is looked up once it has that many digits. */
function askCodeDigits() {
  fetch("/api/join")
    .then((response) => (response.ok ? response.json() : null))
    .then((info) => {
      const count = info?.roomCodeDigits;
      if (!Number.isInteger(count) || count < 6 || count > 12) return;
      codeDigits = count;
      $("#room-code").maxLength = count;
      // Only a page still asking for its code looks the field's code up: a page that came back with this
      // browser's saved session is already rejoining, and a lookup would close that connection.
      if (session.stage === STAGE.FORM) codeTyped();
    })
    .catch(() => {});
}

/**
 * A whole code typed or pasted by hand: the room is asked for its names at once, as for a link, so a class
 * room's children tap their name without typing one (the nickname field comes back for any other room).
 */
function codeTyped() {
  const code = digits($("#room-code").value);
  if (code.length !== codeDigits || isPicking(session.stage)) return;
  $("#join-error").hidden = true;
  startPicking(code);
}

function submitJoin(event) {
  event.preventDefault();
  const code = digits($("#room-code").value);
  const nickname = $("#nickname").value.trim().replace(/\s+/g, " ");
  if (code.length !== codeDigits) return joinError(() => t("join.code_length", { count: codeDigits }));
  if (!nickname) return joinError(() => t("join.nickname_needed"));
  if (letters(nickname) > maxLength()) return joinError(() => t("error.nickname_invalid.too_long", { max: maxLength() }));
  $("#join-error").hidden = true;
  joinNote(null);
  $("#join-button").disabled = true;
  const sameRoom = session.room === code;
  session.room = code;
  session.nickname = nickname;
  // Asked once: should the server no longer know it, or refuse it, the next join is a new child's.
  const token = blockedToken(code) ?? takeRemovedToken(code);
  session.token = token;
  const onPicker = session.stage === STAGE.NAMING && sameRoom && !token && services.connection?.isOpen;
  advance(token ? EVENT.JOIN_WITH_KEPT_TOKEN : EVENT.JOIN);
  // The connection that asked this room's names takes the join: no second hello for it.
  if (onPicker && services.connection.send({ type: "join", room: code, nickname })) return;
  if (services.connection) services.connection.stop();
  connect();
}

/**
 * The room code as ASCII digits, whatever digits the keyboard typed (٣, ۳, ३ and the like count as 3):
 * a child with an Arabic keyboard types the code as they see it.
 */
export function digits(text) {
  return [...text].map((c) => (/[0-9]/.test(c) ? c : String(digitValue(c) ?? ""))).join("");
}

// Unicode keeps each script's ten digits in a run of ten code points starting at its zero.
const ZEROS = [0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xe50, 0xed0, 0xf20, 0x1040, 0xff10];
function digitValue(c) {
  const code = c.codePointAt(0);
  const zero = ZEROS.find((z) => code >= z && code < z + 10);
  return zero === undefined ? null : code - zero;
}

// ---- The nickname's length: shown as it is typed, never cut (the server refuses a longer one, saying
// the limit; the field has no maxlength, which would cut a pasted name without a word) ----

/** The most letters a nickname may have: the server's `Nickname.maximumLength`, kept on the field. */
function maxLength() {
  return Number($("#nickname").dataset.maxLength);
}

/** Letters as the server counts them: what a reader sees as one (👩‍🚀 and é are one each). */
function letters(text) {
  return [...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text)].length;
}

let wasTooLong = false;

/** The count under the field; past the limit, a kind word with the limit, said once as it is crossed. */
function showLength() {
  const count = letters($("#nickname").value.trim().replace(/\s+/g, " "));
  const tooLong = count > maxLength();
  const note = $("#nickname-count");
  const params = { count, max: maxLength() };
  note.textContent = t(tooLong ? "names.too_long" : "names.count", params);
  note.classList.toggle("message", tooLong);
  note.classList.toggle("muted", !tooLong);
  if (tooLong && !wasTooLong) announce(note.textContent);
  wasTooLong = tooLong;
}

/** The join error as words made now, so a change of language words it again. */
let joinErrorWords = null;

export function joinError(words) {
  joinErrorWords = words;
  joinNote(null);
  stopPicking();
  show("join");
  $("#join-button").disabled = false;
  const box = $("#join-error");
  const text = words();
  box.textContent = text;
  box.hidden = false;
  announce(text);
}

/** Words for the join screen's neutral note (this browser left a room), made now like the error's. */
let joinNoteWords = null;

/** A neutral word on the join screen: not a problem with what the child typed, nothing to fix. */
function joinNote(words) {
  joinNoteWords = words;
  const box = $("#join-note");
  box.hidden = !words;
  box.textContent = words ? words() : "";
  if (!words) return;
  $("#join-error").hidden = true;
  stopPicking();
  show("join");
  $("#join-button").disabled = false;
  announce(box.textContent);
}

/** Words the join screen's error again (the language changed). */
export function rewordJoin() {
  showLength();
  if (joinErrorWords && !$("#join-error").hidden) $("#join-error").textContent = joinErrorWords();
  if (joinNoteWords && !$("#join-note").hidden) $("#join-note").textContent = joinNoteWords();
  showNotMe();
}

/** A refusal before the welcome: the hello did not get in. */
export function joinRefused(error) {
  // Not a refusal of this child: the connection asks again by itself at the time the server said, and the
  // banner says when (child.js `status`).
  if (error.code === ERROR.RATE_LIMITED) return advance(EVENT.TOLD_TO_WAIT);
  advance(EVENT.REFUSED);
  if (isPicking(session.stage) && (error.code === ERROR.NAME_TAKEN || error.code === ERROR.MEMBER_NOT_FOUND)) return pickRefused(error);
  if (isPicking(session.stage) && !session.member && NAMES_UNKNOWN.has(error.code)) {
    // A server without class rooms does not know the `names` hello: the typed join, as before.
    services.connection.stop();
    stopPicking();
    $("#nickname").focus();
    return undefined;
  }
  if (error.code === ERROR.CLASS_ROOM) {
    // A typed name in a class room: the children of this class pick theirs.
    return startPicking(session.room, () => errorText(error));
  }
  if (error.code === ERROR.RELEASED) {
    // This browser's name was given back (by this page, its answer lost in a dropped connection, or by the
    // teacher): tap again.
    const own = isGivingBack(session.stage);
    forgetSessionKeepingNothing();
    return startPicking(session.room, () => t(own ? "join.not_me_done" : "join.name_given_back"), { kind: true });
  }
  if (error.code === ERROR.TOKEN_NOT_FOR_ROOM) {
    // The token is another room's: pick again.
    forgetSessionKeepingNothing();
    return startPicking(session.room, () => errorText(error));
  }
  if (error.code === ERROR.BLOCKED) {
    services.connection.stop();
    // Asked with this browser's token: this browser was blocked. Asked with a name: that name was.
    const byToken = Boolean(session.token);
    if (byToken) rememberBlocked(session.room, session.token);
    forgetSessionKeepingNothing();
    return byToken ? joinNote(() => t("join.removed")) : joinError(() => errorText(error));
  }
  if (error.code === ERROR.BAD_TOKEN) {
    if (session.stage === STAGE.RETURNING) {
      // The room no longer knows that token (it was deleted, say): join as anyone would.
      forgetBlocked(session.room);
      advance(EVENT.JOIN);
      session.token = null;
      services.connection.stop();
      return connect();
    }
    // The saved session no longer works (the room was restarted or ended): start over.
    services.connection.stop();
    forgetSession();
    return joinError(() => t("join.not_found_again"));
  }
  if (error.code === ERROR.STORAGE_UNAVAILABLE) {
    // The server could not save this child yet; the connection tries again by itself (close 1013).
    services.banner("connection.saving_place");
    return;
  }
  if (error.code === ERROR.TRY_AGAIN) {
    // The room is moving to another server (one stopped); the connection tries again by itself (close 1012).
    services.banner("connection.getting_room_back");
    return;
  }
  services.connection.stop();
  return joinError(() => errorText(error, { code: session.room }));
}

/**
 * The teacher gave this child's name back (a mix-up: back to the names, kindly) or took them out of the room
 * (said neutrally: a child is never shamed on their own phone); when blocked, this browser remembers it.
 */
export function kicked(message) {
  services.connection.stop();
  services.player.stop();
  if (message.code === ERROR.RELEASED) {
    forgetSessionKeepingNothing();
    return startPicking(session.room, () => t("join.name_given_back"), { kind: true });
  }
  if (!message.blocked && (room.state.player?.member ?? session.classMember)) {
    // A class child removed: their token is no use, and picking their name again brings back the same child.
    forgetSessionKeepingNothing();
    return startPicking(session.room, () => t("join.removed"), { kind: true });
  }
  if (message.blocked && session.token) rememberBlocked(session.room, session.token);
  else if (session.token) rememberRemoved(session.room, session.token);
  forgetSessionKeepingNothing();
  joinNote(() => t("join.removed"));
}

// ---- "That's not me": a wrong tap undone by the child, before their first answer ----

/** Whether this child has answered anything here (then the name is theirs: only the teacher can fix it). */
function hasAnswered() {
  return session.notMeClosed || session.chosen !== null || Boolean(session.pending)
    || results().some((result) => result === "correct" || result === "wrong");
}

/** Shows "That's not me" to a class child who has not answered yet, in a room still going. */
export function showNotMe() {
  const shown = Boolean(isIn(session.stage) && !isGivingBack(session.stage) && session.classMember && room.state.phase !== "finished" && !hasAnswered());
  const box = $("#not-me");
  box.hidden = !shown;
  if (shown) $("#not-me-button").setAttribute("aria-label", t("join.not_me_label", { name: isolate(session.nickname ?? "") }));
  const note = $("#not-me-note");
  if (!note.hidden && session.notMeClosed) note.textContent = t("join.not_me_after_answer");
}

function notMe() {
  if (!services.connection?.send({ type: "notMe" })) return;
  advance(EVENT.NOT_ME);
  showNotMe();
}

/** The server freed the name (its `names` to this connection says so): back to the names, to tap one's own. */
export function gaveBack() {
  services.player.stop();
  forgetSessionKeepingNothing();
  startPicking(session.room, () => t("join.not_me_done"), { kind: true });
}

/** Refused: this child has answered, so the name stays; said kindly, and the button goes. */
export function notMeRefused() {
  advance(EVENT.NOT_ME_REFUSED);
  session.notMeClosed = true;
  showNotMe();
  const note = $("#not-me-note");
  note.textContent = t("join.not_me_after_answer");
  note.hidden = false;
  announce(note.textContent);
}

function forgetSessionKeepingNothing() {
  forgetSession();
  // Out of the room: the caller shows the names again or the form (which set the stage).
  session.notMeClosed = false;
  $("#not-me").hidden = true;
  $("#not-me-note").hidden = true;
}

// ---- Removed: the token of a room this browser was removed from (not blocked), kept to come back ----

const REMOVED_KEY = "storycircle.removed";

function rememberRemoved(room, token) {
  try {
    const removed = JSON.parse(localStorage.getItem(REMOVED_KEY) ?? "{}");
    removed[room] = token;
    localStorage.setItem(REMOVED_KEY, JSON.stringify(removed));
  } catch { /* private mode: the child joins again as a new one */ }
}

/** This room's kept token, forgotten as it is handed out. */
function takeRemovedToken(room) {
  try {
    const removed = JSON.parse(localStorage.getItem(REMOVED_KEY) ?? "{}");
    const token = removed[room] ?? null;
    delete removed[room];
    localStorage.setItem(REMOVED_KEY, JSON.stringify(removed));
    return token;
  } catch {
    return null;
  }
}
