// The child's join stage (web-static/js/child/join-stage.js): the ways into a room, a drop on the way or
// once in, "That's not me", and what each stage answers to the questions the page asks of it.

import { test } from "node:test";
import assert from "node:assert/strict";
import { STAGE, EVENT, nextStage, isIn, awaitsWelcome, isPicking, isGivingBack } from "../../web-static/js/child/join-stage.js";

/** The stage after `events`, from `stage`. */
function after(stage, ...events) {
  return events.reduce(nextStage, stage);
}

test("the stages and events are fixed", () => {
  assert.ok(Object.isFrozen(STAGE));
  assert.ok(Object.isFrozen(EVENT));
  assert.equal(new Set(Object.values(STAGE)).size, Object.keys(STAGE).length, "no two stages alike");
  assert.throws(() => nextStage(STAGE.FORM, "jump"), /unknown join event/);
});

test("a typed nickname: form, joining, in", () => {
  assert.equal(after(STAGE.FORM, EVENT.JOIN), STAGE.JOINING);
  assert.equal(after(STAGE.FORM, EVENT.JOIN, EVENT.OPEN), STAGE.JOINING, "the first hello changes nothing");
  assert.equal(after(STAGE.FORM, EVENT.JOIN, EVENT.OPEN, EVENT.WELCOME), STAGE.JOINED);
});

test("a class room's names: looking, picking, a tap, in", () => {
  assert.equal(after(STAGE.FORM, EVENT.LOOK), STAGE.LOOKING);
  assert.equal(after(STAGE.LOOKING, EVENT.CLASS_NAMES), STAGE.PICKING);
  assert.equal(after(STAGE.PICKING, EVENT.CLASS_NAMES), STAGE.PICKING, "the list follows the room");
  assert.equal(after(STAGE.PICKING, EVENT.TAP), STAGE.TAPPED);
  assert.equal(after(STAGE.TAPPED, EVENT.CLASS_NAMES), STAGE.TAPPED, "a fresh list keeps the tap on its way");
  assert.equal(after(STAGE.TAPPED, EVENT.TAP_REFUSED), STAGE.PICKING, "taken a moment ago: tap another");
  assert.equal(after(STAGE.TAPPED, EVENT.WELCOME), STAGE.JOINED);
});

test("a tap lost with its connection: back to picking, the names asked again", () => {
  assert.equal(after(STAGE.TAPPED, EVENT.OPEN), STAGE.PICKING);
  assert.equal(after(STAGE.LOOKING, EVENT.OPEN), STAGE.LOOKING);
});

test("a room without a class: the nickname goes on the connection that asked", () => {
  assert.equal(after(STAGE.LOOKING, EVENT.NO_CLASS), STAGE.NAMING);
  assert.equal(after(STAGE.NAMING, EVENT.OPEN), STAGE.NAMING, "dropped while typing: the names asked again");
  assert.equal(after(STAGE.NAMING, EVENT.SHOW_FORM), STAGE.NAMING, "a nickname to fix keeps the connection");
  assert.equal(after(STAGE.NAMING, EVENT.JOIN), STAGE.JOINING);
  assert.equal(after(STAGE.NAMING, EVENT.REFUSED), STAGE.FORM, "refused: no connection waits any more");
  assert.equal(after(STAGE.FORM, EVENT.CLASS_NAMES), STAGE.FORM, "names nobody asked for change nothing");
});

test("a kept token: returning, and joining as anyone when the room no longer knows it", () => {
  assert.equal(after(STAGE.FORM, EVENT.JOIN_WITH_KEPT_TOKEN), STAGE.RETURNING);
  assert.equal(after(STAGE.RETURNING, EVENT.OPEN, EVENT.REFUSED), STAGE.RETURNING);
  assert.equal(after(STAGE.RETURNING, EVENT.JOIN), STAGE.JOINING);
  assert.equal(after(STAGE.RETURNING, EVENT.WELCOME), STAGE.JOINED);
});

test("a drop once in: rejoining until the welcome, and refusals then are about getting in", () => {
  const back = after(STAGE.JOINED, EVENT.OPEN);
  assert.equal(back, STAGE.REJOINING);
  assert.ok(isIn(back), "the room's screens stay");
  assert.ok(awaitsWelcome(back));
  assert.equal(after(back, EVENT.WELCOME), STAGE.JOINED);
  assert.equal(after(back, EVENT.REFUSED), STAGE.REJOINING, "a busy store: the connection tries again");
});

test("That's not me: giving back, then the names; refused, the name stays", () => {
  assert.equal(after(STAGE.JOINED, EVENT.NOT_ME), STAGE.GIVING_BACK);
  assert.equal(after(STAGE.GIVING_BACK, EVENT.NOT_ME_REFUSED), STAGE.JOINED);
  assert.equal(after(STAGE.GIVING_BACK, EVENT.LOOK), STAGE.LOOKING, "the name freed: pick again");
  assert.equal(after(STAGE.FORM, EVENT.NOT_ME), STAGE.FORM, "nothing to give back before joining");
});

test("That's not me across a drop: the rejoin's answer says whether the server read it", () => {
  const dropped = after(STAGE.GIVING_BACK, EVENT.OPEN);
  assert.equal(dropped, STAGE.GIVING_BACK_REJOINING);
  assert.ok(isGivingBack(dropped));
  assert.ok(awaitsWelcome(dropped));
  assert.equal(after(dropped, EVENT.WELCOME), STAGE.JOINED, "never read: it can be pressed again");
  assert.equal(after(dropped, EVENT.NOT_ME_REFUSED), STAGE.REJOINING);
  assert.equal(after(STAGE.REJOINING, EVENT.NOT_ME), STAGE.GIVING_BACK_REJOINING);
});

test("what each stage answers", () => {
  const inRoom = [STAGE.JOINED, STAGE.REJOINING, STAGE.GIVING_BACK, STAGE.GIVING_BACK_REJOINING];
  const picking = [STAGE.LOOKING, STAGE.PICKING, STAGE.TAPPED];
  for (const stage of Object.values(STAGE)) {
    assert.equal(isIn(stage), inRoom.includes(stage), `in: ${stage}`);
    assert.equal(isPicking(stage), picking.includes(stage), `picking: ${stage}`);
    assert.equal(awaitsWelcome(stage), stage !== STAGE.JOINED && stage !== STAGE.GIVING_BACK, `awaits a welcome: ${stage}`);
    assert.equal(isGivingBack(stage), stage === STAGE.GIVING_BACK || stage === STAGE.GIVING_BACK_REJOINING, `giving back: ${stage}`);
  }
});

test("any stage: a welcome lets the page in, the names asked or the form shown take it out", () => {
  for (const stage of Object.values(STAGE)) {
    assert.equal(nextStage(stage, EVENT.WELCOME), STAGE.JOINED, stage);
    assert.equal(nextStage(stage, EVENT.LOOK), STAGE.LOOKING, stage);
    assert.equal(nextStage(stage, EVENT.SHOW_FORM), stage === STAGE.NAMING ? STAGE.NAMING : STAGE.FORM, stage);
  }
});

test("told to wait (rate_limited), every stage stays: the same hello goes again by itself", () => {
  for (const stage of Object.values(STAGE)) assert.equal(nextStage(stage, EVENT.TOLD_TO_WAIT), stage);
  // Asking a link's room for its names: asked again after the wait, not dropped to the typed form.
  assert.equal(after(STAGE.FORM, EVENT.LOOK, EVENT.TOLD_TO_WAIT, EVENT.OPEN), STAGE.LOOKING);
  assert.equal(after(STAGE.FORM, EVENT.JOIN, EVENT.TOLD_TO_WAIT, EVENT.OPEN, EVENT.WELCOME), STAGE.JOINED);
  assert.ok(awaitsWelcome(after(STAGE.FORM, EVENT.JOIN, EVENT.TOLD_TO_WAIT)));
});
