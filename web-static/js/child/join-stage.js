// Where a child's page is in getting into a room: one stage, changed only by `nextStage(stage, event)`
// (child/store.js keeps it in `session.stage`; `advance(event)` is the one place that sets it). Every
// question the page asks about joining (is this page in? does a refusal mean it did not get in? does a
// `names` answer belong to the picker?) is asked of the stage. Pure: node's tests load it as it is
// (Tests/Pages/join-stage.test.mjs).
//
//   form ──code typed / link──▶ looking ──class names──▶ picking ──tap──▶ tapped ──welcome──▶ joined
//     │                            └──no class──▶ naming ──nickname──▶ joining ──welcome──▶ joined
//     └──nickname──▶ joining (or returning, with the token of a room this browser was blocked or removed from)
//   joined ──connection back──▶ rejoining ──welcome──▶ joined
//   joined ──"That's not me"──▶ givingBack ──the server frees the name──▶ looking (its names again)

export const STAGE = Object.freeze({
  /** The typed join: a room code and a nickname; no connection waits for anything. */
  FORM: "form",
  /** A room was asked for its names (a link, a code typed whole) and has not answered yet. */
  LOOKING: "looking",
  /** A class room's names are shown, for the child to tap theirs. */
  PICKING: "picking",
  /** A name was tapped; its join is on its way (no other name can be tapped meanwhile). */
  TAPPED: "tapped",
  /** A room without a class answered the names: the connection that asked waits for the typed nickname. */
  NAMING: "naming",
  /** A join (a nickname, or this browser's saved session) is on its way; no welcome yet. */
  JOINING: "joining",
  /** Like joining, with the token this browser kept from a room it was blocked or removed from. */
  RETURNING: "returning",
  /** In the room. */
  JOINED: "joined",
  /** In the room, the connection back after a drop: its rejoin waits for the welcome again. */
  REJOINING: "rejoining",
  /** In the room; "That's not me" was sent and the page waits for the server to free the name. */
  GIVING_BACK: "givingBack",
  /** Giving the name back, the connection back after a drop: the rejoin's answer says whether it was read. */
  GIVING_BACK_REJOINING: "givingBackRejoining",
});

export const EVENT = Object.freeze({
  /** The typed join's form is shown (a refusal, a note, the picker put away). */
  SHOW_FORM: "showForm",
  /** A room is asked for its names. */
  LOOK: "look",
  /** The room answered its names as a class's. */
  CLASS_NAMES: "classNames",
  /** The room answered it has no class. */
  NO_CLASS: "noClass",
  /** A name was tapped. */
  TAP: "tap",
  /** The tapped name was refused (taken a moment ago, or gone from the class). */
  TAP_REFUSED: "tapRefused",
  /** A join goes out: a typed nickname, or the saved session after a refresh. */
  JOIN: "join",
  /** A join goes out with a token kept from a room this browser was blocked or removed from. */
  JOIN_WITH_KEPT_TOKEN: "joinWithKeptToken",
  /** A connection opened and said its hello (the first one, or one after a drop). */
  OPEN: "open",
  /** The server welcomed this page. */
  WELCOME: "welcome",
  /** The server refused a hello. */
  REFUSED: "refused",
  /** The server asked this page to wait (`rate_limited`): the connection says the same hello again by
   * itself at the time it was told (connection.js), so the stage stays as it is. */
  TOLD_TO_WAIT: "toldToWait",
  /** "That's not me" was sent. */
  NOT_ME: "notMe",
  /** "That's not me" was refused: this child has answered, so the name is theirs. */
  NOT_ME_REFUSED: "notMeRefused",
});

const S = STAGE;
const ANY = "*";

/** event → { from: to }; `*` is any stage not named; a stage missing from its event stays as it is. */
const TRANSITIONS = {
  // A refusal's form keeps a nickname's connection waiting (the child fixes the name and sends it on it).
  [EVENT.SHOW_FORM]: { [S.NAMING]: S.NAMING, [ANY]: S.FORM },
  [EVENT.LOOK]: { [ANY]: S.LOOKING },
  // A fresh list while a tap is on its way keeps the tap.
  [EVENT.CLASS_NAMES]: { [S.LOOKING]: S.PICKING, [S.PICKING]: S.PICKING, [S.TAPPED]: S.TAPPED },
  [EVENT.NO_CLASS]: { [S.LOOKING]: S.NAMING, [S.PICKING]: S.NAMING, [S.TAPPED]: S.NAMING },
  [EVENT.TAP]: { [S.PICKING]: S.TAPPED },
  [EVENT.TAP_REFUSED]: { [S.TAPPED]: S.PICKING },
  [EVENT.JOIN]: { [ANY]: S.JOINING },
  [EVENT.JOIN_WITH_KEPT_TOKEN]: { [ANY]: S.RETURNING },
  // After a drop the page says hello again: a tap not yet answered was lost with the connection.
  [EVENT.OPEN]: { [S.JOINED]: S.REJOINING, [S.GIVING_BACK]: S.GIVING_BACK_REJOINING, [S.TAPPED]: S.PICKING },
  [EVENT.WELCOME]: { [ANY]: S.JOINED },
  // Whatever it was, the connection that asked for the names no longer waits for a typed join on it.
  [EVENT.REFUSED]: { [S.NAMING]: S.FORM },
  [EVENT.TOLD_TO_WAIT]: {},
  [EVENT.NOT_ME]: { [S.JOINED]: S.GIVING_BACK, [S.REJOINING]: S.GIVING_BACK_REJOINING },
  [EVENT.NOT_ME_REFUSED]: { [S.GIVING_BACK]: S.JOINED, [S.GIVING_BACK_REJOINING]: S.REJOINING },
};

/** The stage after `event`; the same stage when the event means nothing there. */
export function nextStage(stage, event) {
  const moves = TRANSITIONS[event];
  if (!moves) throw new Error(`unknown join event ${event}`);
  return moves[stage] ?? moves[ANY] ?? stage;
}

/** The page has been welcomed (since its last join): the room's screens are showing. */
export function isIn(stage) {
  return stage === S.JOINED || stage === S.REJOINING || stage === S.GIVING_BACK || stage === S.GIVING_BACK_REJOINING;
}

/** A refusal now is about getting in: a hello waits for its welcome. */
export function awaitsWelcome(stage) {
  return stage !== S.JOINED && stage !== S.GIVING_BACK;
}

/** The name-picker is up (asking, showing the names, or a tap on its way). */
export function isPicking(stage) {
  return stage === S.LOOKING || stage === S.PICKING || stage === S.TAPPED;
}

/** "That's not me" was sent and not yet answered. */
export function isGivingBack(stage) {
  return stage === S.GIVING_BACK || stage === S.GIVING_BACK_REJOINING;
}
