// `reduce`, the one pure function every page keeps its room with (web-static/js/room-store.js): what each
// server message does to the state, and what it leaves alone. `make page-test` runs this with node's own
// test runner (no packages).

import { test } from "node:test";
import assert from "node:assert/strict";
import { initialState, reduce, changes, RoomStore } from "../../web-static/js/room-store.js";

/** A teacher's welcome to a room in `phase`, with `room` fields over a small lobby. */
function welcome(room = {}, extra = {}) {
  return {
    type: "welcome", role: "teacher",
    room: { code: "123456", title: "Pip", phase: "lobby", paused: false, locked: false, questionCount: 3, players: [], ...room },
    ...extra,
  };
}

const ana = { id: "p1", nickname: "Ana", connected: true };
const ben = { id: "p2", nickname: "Ben", connected: false };

test("a page starts in the lobby knowing nothing", () => {
  const state = initialState();
  assert.equal(state.phase, "lobby");
  assert.equal(state.code, null);
  assert.deepEqual(state.players, []);
  assert.deepEqual(state.commands, []);
  assert.deepEqual(state.storage, { ok: true, reason: null });
});

test("a welcome replaces everything the page knew", () => {
  let state = reduce(initialState(), welcome({ players: [ana] }));
  state = reduce(state, { type: "paused" });
  state = reduce(state, { type: "storage", ok: false, reason: "disk_full" });
  const again = reduce(state, welcome({ phase: "question", question: { index: 1 }, yourAnswer: 2, commands: ["pause"], language: "es" }, { player: { id: "p1" } }));
  assert.equal(again.phase, "question");
  assert.equal(again.paused, false);
  assert.deepEqual(again.storage, { ok: true, reason: null }, "nothing from before the welcome");
  assert.deepEqual(again.question, { index: 1 });
  assert.equal(again.yourAnswer, 2);
  assert.deepEqual(again.commands, ["pause"]);
  assert.equal(again.language, "es");
  assert.deepEqual(again.player, { id: "p1" });
  assert.deepEqual(again.players, [], "the new snapshot's roster, not the old one");
});

test("a welcome to a failed narration keeps the reason as codes", () => {
  const state = reduce(initialState(), welcome({ phase: "error", errorReason: "voice_failed", errorParams: { voice: "x" } }));
  assert.deepEqual(state.error, { reason: "voice_failed", params: { voice: "x" } });
  assert.equal(reduce(initialState(), welcome()).error, null);
});

test("a class room's teacher keeps the class and its roster follows", () => {
  const members = [{ member: "m1", name: "Ana" }];
  let state = reduce(initialState(), welcome({ class: { id: "cls_1", name: "1B", members } }));
  assert.equal(state.classRoom.id, "cls_1");
  state = reduce(state, { type: "class.roster", members: [] });
  assert.deepEqual(state.classRoom.members, []);
  const plain = reduce(initialState(), welcome());
  assert.equal(plain.classRoom, null);
  assert.equal(reduce(plain, { type: "class.roster", members }), plain, "no class, nothing to follow");
});

test("the commands change only with a message that carries them", () => {
  let state = reduce(initialState(), welcome({ commands: ["start"] }));
  state = reduce(state, { type: "lobby", players: [ana] });
  assert.deepEqual(state.commands, ["start"]);
  state = reduce(state, { type: "room", locked: true, settings: {}, commands: ["start", "unlock"] });
  assert.deepEqual(state.commands, ["start", "unlock"]);
  state = reduce(state, { type: "room", locked: false, settings: {}, commands: [] });
  assert.deepEqual(state.commands, []);
});

test("the lobby's roster takes scores and streaks from the board", () => {
  let state = reduce(initialState(), welcome({ scoreboard: [{ id: "p1", score: 300, rank: 1, streak: 2, results: ["correct"] }] }));
  state = reduce(state, { type: "lobby", players: [ana, ben] });
  assert.deepEqual(state.players, [
    { id: "p1", nickname: "Ana", connected: true, score: 300, rank: 1, streak: 2, answered: null, results: ["correct"] },
    { id: "p2", nickname: "Ben", connected: false, score: 0, rank: null, streak: 0, answered: null, results: [] },
  ]);
});

test("the answer counts are kept only while a question is open", () => {
  const entries = [{ ...ana, score: 0, answered: true }];
  const answers = { answered: 1, total: 2 };
  const inQuestion = reduce(reduce(initialState(), welcome({ phase: "question", question: { index: 0 } })), { type: "scoreboard", entries, answers });
  assert.deepEqual(inQuestion.answers, answers);
  assert.equal(inQuestion.players[0].answered, true);
  const inLobby = reduce(reduce(initialState(), welcome()), { type: "scoreboard", entries, answers });
  assert.equal(inLobby.answers, null);
});

test("preparing, then a plan that grows one sentence at a time", () => {
  let state = reduce(initialState(), welcome());
  state = reduce(state, { type: "preparing", ready: 1, total: 4 });
  assert.equal(state.phase, "preparing");
  assert.deepEqual(state.preparing, { ready: 1, total: 4 });
  state = reduce(state, { type: "narration.plan", sentences: [{ index: 0, text: "One." }] });
  assert.equal(state.phase, "narrating");
  state = reduce(state, { type: "narration.sentence", sentence: { index: 1, text: "Two." }, total: 3 });
  assert.equal(state.plan.sentences.length, 2);
  assert.equal(state.plan.total, 3, "more to come");
  assert.equal(reduce(state, { type: "narration.sentence", sentence: { index: 1, text: "Two." }, total: 3 }), state, "a repeat is not added");
  assert.equal(reduce(state, { type: "narration.sentence", sentence: { index: 3, text: "Four." }, total: 4 }), state, "nor a gap");
  state = reduce(state, { type: "narration.sentence", sentence: { index: 2, text: "Three." }, total: 3 });
  assert.equal(state.plan.total, undefined, "the whole story is here");
  state = reduce(state, { type: "progress", sentence: 2, at: 5000 });
  assert.equal(state.sentence, 2);
  assert.equal(state.sentenceAt, 5000);
});

test("a narration notice is kept on the plan, and only with a plan", () => {
  const notice = { type: "narration.notice", code: "narration_voice_fallback", message: "…" };
  const before = reduce(initialState(), welcome());
  assert.equal(reduce(before, notice), before);
  const withPlan = reduce(reduce(before, { type: "narration.plan", sentences: [] }), notice);
  assert.deepEqual(withPlan.plan.notice, { code: "narration_voice_fallback", message: "…" });
});

test("a failed narration says why as codes and is never paused", () => {
  const state = reduce(reduce(reduce(initialState(), welcome()), { type: "paused" }), { type: "narration.error", reason: "voice_failed" });
  assert.equal(state.phase, "error");
  assert.equal(state.paused, false);
  assert.deepEqual(state.error, { reason: "voice_failed", params: {} });
});

test("a question opens with nobody's answer, and only its own acknowledgement counts", () => {
  let state = reduce(initialState(), welcome({ players: [ana] }));
  state = reduce(state, { type: "scoreboard", entries: [{ ...ana, answered: true }] });
  state = reduce(state, { type: "question", index: 0, count: 5, options: ["a", "b"] });
  assert.equal(state.phase, "question");
  assert.equal(state.questionCount, 5);
  assert.equal(state.yourAnswer, null);
  assert.equal(state.players[0].answered, false);
  assert.equal(reduce(state, { type: "answer.ack", question: 1, option: 1 }), state, "another question's answer");
  assert.equal(reduce(state, { type: "answer.ack", question: 0, option: 1 }).yourAnswer, 1);
});

test("a pause, then a resume that moves the deadline", () => {
  let state = reduce(reduce(initialState(), welcome()), { type: "question", index: 0, deadline: 1000, opensAt: 100 });
  state = reduce(state, { type: "paused" });
  assert.equal(state.paused, true);
  state = reduce(state, { type: "resumed", deadline: 4000 });
  assert.equal(state.paused, false);
  assert.equal(state.question.deadline, 4000);
  assert.equal(state.question.opensAt, 100, "an opening not sent stays");
  assert.equal(reduce(state, { type: "resumed" }).question, state.question, "no deadline, nothing moved");
});

test("a reveal on a screen shows the top; on a phone, the child's own standing", () => {
  const base = reduce(reduce(initialState(), welcome({ players: [ana, ben] })), { type: "question", index: 0 });
  const top = [{ id: "p2", nickname: "Ben", connected: true, score: 100, rank: 1 }];
  const screen = reduce(base, { type: "reveal", question: 0, correctOption: 1, top });
  assert.equal(screen.phase, "reveal");
  assert.deepEqual(screen.scoreboard, top);
  assert.deepEqual(screen.players.map((p) => p.id), ["p2"]);
  const standing = { score: 100, rank: 2 };
  const phone = reduce(base, { type: "reveal", question: 0, correctOption: 1, top, you: { option: 1, standing } });
  assert.deepEqual(phone.you, standing);
  assert.deepEqual(phone.players.map((p) => p.id), ["p1", "p2"], "a phone's roster stays");
});

test("the room's settings and language; a room without a language keeps the one known", () => {
  let state = reduce(reduce(initialState(), welcome({ language: "fr" })), { type: "room", locked: true, settings: { competitive: true } });
  assert.equal(state.locked, true);
  assert.deepEqual(state.settings, { competitive: true });
  assert.equal(state.language, "fr");
  state = reduce(state, { type: "room", locked: false, settings: {}, language: "es" });
  assert.equal(state.language, "es");
});

test("finished keeps the last board when the message has none", () => {
  const board = [{ ...ana, score: 50, rank: 1 }];
  let state = reduce(reduce(initialState(), welcome()), { type: "scoreboard", entries: board });
  state = reduce(state, { type: "finished", you: { score: 50 } });
  assert.equal(state.phase, "finished");
  assert.deepEqual(state.scoreboard, board);
  assert.deepEqual(state.you, { score: 50 });
  const fresh = [{ ...ben, score: 70, rank: 1 }];
  assert.deepEqual(reduce(state, { type: "finished", entries: fresh }).players.map((p) => p.id), ["p2"]);
});

test("the store's health: a refusal keeps its reason, and an unknown one is said as unknown", () => {
  const state = reduce(initialState(), { type: "storage", ok: false });
  assert.deepEqual(state.storage, { ok: false, reason: "unknown" });
  assert.deepEqual(reduce(state, { type: "storage", ok: true, reason: "x" }).storage, { ok: true, reason: null });
});

test("a message no page keeps changes nothing, and the store says so", () => {
  const state = reduce(initialState(), welcome());
  for (const type of ["kicked", "names", "narration.complete", "quiz.unlock", "error", "something.new"]) {
    assert.equal(reduce(state, { type }), state, type);
  }
  const store = new RoomStore();
  assert.equal(store.apply(welcome()), true);
  assert.equal(store.apply({ type: "quiz.unlock" }), false);
  assert.equal(store.state.code, "123456");
});

// ---- changes: what a page's one render draws ----

test("after a welcome everything is drawn, a pause included", () => {
  const state = reduce(initialState(), welcome({ phase: "question", paused: true, question: { index: 0 } }));
  const change = changes(null, state);
  assert.equal(change.screen, true);
  assert.equal(change.paused, true);
  assert.equal(change.language, true);
  assert.equal(changes(null, reduce(initialState(), welcome())).paused, null, "not paused: nothing to resume");
});

test("another phase, another question, another reveal or end: the screen anew", () => {
  const lobby = reduce(initialState(), welcome());
  const first = reduce(lobby, { type: "question", index: 0 });
  assert.equal(changes(lobby, first).screen, true);
  const second = reduce(first, { type: "question", index: 1 });
  assert.equal(changes(first, second).screen, true);
  const reveal = reduce(second, { type: "reveal", question: 1, correctOption: 0, top: [] });
  assert.equal(changes(second, reveal).screen, true);
  const end = reduce(reveal, { type: "finished", podium: [] });
  assert.equal(changes(reveal, end).screen, true);
  assert.equal(changes(end, reduce(end, { type: "finished", podium: [{ rank: 1 }] })).screen, true, "a new end");
});

test("within a question: resumed, acknowledged, counted, but the same screen", () => {
  let state = reduce(reduce(initialState(), welcome()), { type: "question", index: 0, deadline: 1000 });
  const paused = reduce(state, { type: "paused" });
  assert.deepEqual([changes(state, paused).screen, changes(state, paused).paused], [false, true]);
  const resumed = reduce(paused, { type: "resumed", deadline: 3000 });
  assert.deepEqual([changes(paused, resumed).screen, changes(paused, resumed).paused], [false, false]);
  const acked = reduce(resumed, { type: "answer.ack", question: 0, option: 2 });
  assert.equal(changes(resumed, acked).answer, true);
  assert.equal(changes(resumed, acked).paused, null);
  const counted = reduce(acked, { type: "scoreboard", entries: [], answers: { answered: 1, total: 2 } });
  assert.deepEqual([changes(acked, counted).screen, changes(acked, counted).answer], [false, false]);
});

test("a story that grows gives its new sentences; a new plan is a new story", () => {
  const plan = { type: "narration.plan", startAt: 100, sentences: [{ index: 0 }] };
  const reading = reduce(reduce(initialState(), welcome()), plan);
  const grown = reduce(reading, { type: "narration.sentence", sentence: { index: 1 }, total: 3 });
  const change = changes(reading, grown);
  assert.equal(change.screen, false);
  assert.deepEqual(change.sentences, [{ index: 1 }]);
  const moved = reduce(grown, { type: "progress", sentence: 1, at: 900 });
  assert.equal(changes(grown, moved).progress, true);
  assert.deepEqual(changes(grown, moved).sentences, []);
  const again = reduce(moved, { ...plan, sentences: [{ index: 0 }] });
  assert.equal(changes(moved, again).screen, true, "read again from the start, by another voice");
  const noticed = reduce(grown, { type: "narration.notice", code: "narration_voice_fallback", message: "" });
  assert.deepEqual([changes(grown, noticed).screen, changes(grown, noticed).sentences], [false, []]);
});

test("preparing moves the bar, not the screen; the lobby's roster and the language are said", () => {
  const lobby = reduce(initialState(), welcome());
  const start = reduce(lobby, { type: "preparing", ready: 0, total: 2 });
  const more = reduce(start, { type: "preparing", ready: 1, total: 2 });
  assert.deepEqual([changes(start, more).screen, changes(start, more).preparing], [false, true]);
  const joined = reduce(lobby, { type: "lobby", players: [ana] });
  assert.deepEqual([changes(lobby, joined).screen, changes(lobby, joined).players], [false, true]);
  const spanish = reduce(lobby, { type: "room", locked: false, settings: {}, language: "es" });
  assert.equal(changes(lobby, spanish).language, true);
  assert.equal(changes(spanish, reduce(spanish, { type: "room", locked: true, settings: {}, language: "es" })).language, false);
});
