// What a page knows about its room, for every page (a child's, the projector, the teacher's): one pure
// `reduce(state, message)` from the server's messages, and a small store around it. A `welcome` may come
// at any time (a reconnect, or the server rebuilding the room from its store): it replaces everything.
//
// The commands a teacher may send come from the server too: a teacher's `welcome` and `room` carry the
// list allowed now (`commands`), and the server sends teachers a `room` whenever that list changes, the
// room moving on by itself included (the story ready, a deadline passed). No page has rules of its own.

export function initialState() {
  return {
    role: null,
    player: null,
    code: null,
    title: null,
    phase: "lobby",
    paused: false,
    locked: false,
    settings: {},
    /** The language the room's screens speak (the teacher's choice, or the story's voice's). */
    language: null,
    questionCount: 0,
    players: [],
    scoreboard: [],
    answers: null,
    preparing: null,
    plan: null,
    sentence: null,
    sentenceAt: null,
    question: null,
    yourAnswer: null,
    reveal: null,
    finished: null,
    error: null,
    /** A child's own standing: score, rank, streak, results, the place ahead. */
    you: null,
    storage: { ok: true, reason: null },
    commands: [],
    /** A class room, for its teacher: the class and every child of it, here or missing (else null). */
    classRoom: null,
  };
}

/** The state after `message`; the same object when the message changes nothing a page keeps. */
export function reduce(state, message) {
  const next = apply(state, message);
  // Only a message that carries the list sets it; any other keeps it, until the server's next list.
  if (Array.isArray(message.commands)) return { ...next, commands: message.commands };
  return next;
}

function apply(state, message) {
  switch (message.type) {
    case "welcome": return welcome(message);
    case "class.roster":
      return state.classRoom ? { ...state, classRoom: { ...state.classRoom, members: message.members ?? [] } } : state;
    case "lobby": return { ...state, players: mergePlayers(message.players, state.scoreboard) };
    case "scoreboard":
      return {
        ...state, scoreboard: message.entries, players: mergePlayers(message.entries, message.entries),
        answers: state.phase === "question" ? message.answers ?? null : null,
      };
    case "preparing":
      return { ...state, phase: "preparing", preparing: { ready: message.ready, total: message.total }, error: null, answers: null };
    case "narration.plan":
      return { ...state, phase: "narrating", paused: false, plan: message, sentence: null, sentenceAt: null };
    case "narration.sentence": {
      // A growing plan: the sentence follows the ones before it (a repeat or a gap is not added).
      if (!state.plan || message.sentence.index !== state.plan.sentences.length) return state;
      const sentences = [...state.plan.sentences, message.sentence];
      const total = sentences.length < message.total ? message.total : undefined;
      return { ...state, plan: { ...state.plan, sentences, total } };
    }
    case "narration.notice":
      // To teachers: how the story is read changed after its plan came (the questions' voice).
      return state.plan ? { ...state, plan: { ...state.plan, notice: { code: message.code, message: message.message } } } : state;
    case "progress": return { ...state, sentence: message.sentence, sentenceAt: message.at };
    case "narration.error": return { ...state, phase: "error", error: problem(message.reason, message.params), paused: false };
    case "question":
      return {
        ...state, phase: "question", question: message, yourAnswer: null, reveal: null, paused: false, answers: null,
        questionCount: message.count ?? state.questionCount,
        players: state.players.map((p) => ({ ...p, answered: false })),
      };
    case "answer.ack":
      return state.question && state.question.index === message.question ? { ...state, yourAnswer: message.option } : state;
    case "reveal": {
      const screen = !message.you;
      return {
        ...state, phase: "reveal", reveal: message, answers: null, paused: false,
        you: message.you?.standing ?? state.you,
        scoreboard: screen ? message.top : state.scoreboard,
        players: screen ? mergePlayers(message.top, message.top) : state.players,
      };
    }
    case "paused": return { ...state, paused: true };
    case "resumed": {
      // A question's deadline (and its opening, if it had not opened) moved by the length of the pause.
      const question = state.question && message.deadline
        ? { ...state.question, deadline: message.deadline, opensAt: message.opensAt ?? state.question.opensAt }
        : state.question;
      return { ...state, paused: false, question };
    }
    case "room": return { ...state, locked: message.locked, settings: message.settings, language: message.language ?? state.language };
    case "finished": {
      const scoreboard = message.entries ?? state.scoreboard;
      return {
        ...state, phase: "finished", finished: message, answers: null, paused: false, you: message.you ?? state.you,
        scoreboard, players: message.entries ? mergePlayers(scoreboard, scoreboard) : state.players,
      };
    }
    case "storage": return { ...state, storage: { ok: Boolean(message.ok), reason: message.ok ? null : message.reason ?? "unknown" } };
    default: return state;
  }
}

/** Why the narration failed, as codes for the page to word (teachers are sent the reason; others not). */
function problem(reason, params) {
  return { reason: reason ?? null, params: params ?? {} };
}

/** The room as the snapshot in a `welcome` has it, and nothing from before. */
function welcome(message) {
  const room = message.room;
  return {
    ...initialState(),
    role: message.role,
    player: message.player ?? null,
    code: room.code,
    title: room.title,
    phase: room.phase,
    paused: room.paused,
    locked: room.locked,
    settings: room.settings ?? {},
    language: room.language ?? null,
    questionCount: room.questionCount,
    preparing: room.preparing ?? null,
    plan: room.plan ?? null,
    sentence: room.sentence ?? null,
    sentenceAt: room.sentenceAt ?? null,
    question: room.question ?? null,
    yourAnswer: room.yourAnswer ?? null,
    reveal: room.reveal ?? null,
    finished: room.finished ?? null,
    error: room.phase === "error" ? problem(room.errorReason, room.errorParams) : null,
    you: room.you ?? null,
    scoreboard: room.scoreboard ?? [],
    players: mergePlayers(room.players ?? [], room.scoreboard ?? []),
    commands: room.commands ?? [],
    classRoom: room.class && Array.isArray(room.class.members) ? room.class : null,
  };
}

/** The roster: everyone present, with score, streak, results and answered-yet where the board has them. */
function mergePlayers(players, entries) {
  const byId = new Map(entries.map((entry) => [entry.id, entry]));
  return players.map((player) => {
    const entry = byId.get(player.id) ?? {};
    return {
      id: player.id, nickname: player.nickname, connected: player.connected,
      score: entry.score ?? 0, rank: entry.rank ?? null, streak: entry.streak ?? 0,
      answered: entry.answered ?? null, results: entry.results ?? [],
    };
  });
}

/**
 * What a page's one render must do to go from showing `previous` to showing `next` (both states of
 * `reduce`; `previous` null when the page shows nothing of the room yet, as after a welcome):
 * - `screen`: the phase's screen is drawn anew: from nothing, another phase, another question, a new
 *   story (not one that grew), another reveal or end;
 * - else the parts that moved within it: `preparing`, the `sentences` that came, the narration's `progress`,
 *   `answer` (the child's acknowledged option), `players`;
 * - and, whatever the screen: `paused` (true, false, or null when unchanged) and `language`.
 */
export function changes(previous, next) {
  const from = previous ?? initialState();
  const fresh = previous === null;
  const screen = fresh || from.phase !== next.phase || !sameScreen(from, next);
  const grown = !screen && next.plan !== from.plan && next.plan && from.plan && next.plan.sentences !== from.plan.sentences;
  return {
    screen,
    preparing: !screen && next.preparing !== from.preparing,
    sentences: grown ? next.plan.sentences.slice(from.plan.sentences.length) : [],
    progress: !screen && (next.sentence !== from.sentence || next.sentenceAt !== from.sentenceAt),
    answer: !screen && next.yourAnswer !== from.yourAnswer && next.yourAnswer !== null,
    players: fresh || next.players !== from.players,
    paused: fresh ? (next.paused ? true : null) : next.paused !== from.paused ? next.paused : null,
    language: fresh || next.language !== from.language,
  };
}

/** Whether two states in the same phase show the same screen (the same question, story, reveal or end). */
function sameScreen(from, next) {
  switch (next.phase) {
    case "narrating": return sameStory(from.plan, next.plan);
    case "question": return from.question?.index === next.question?.index;
    case "reveal": return from.reveal === next.reveal;
    case "finished": return from.finished === next.finished;
    default: return true;
  }
}

/** Whether `next` is `plan` or `plan` grown by more sentences (a new plan, even of the same story, is not). */
function sameStory(plan, next) {
  if (plan === next) return true;
  if (!plan || !next || plan.startAt !== next.startAt || next.sentences.length < plan.sentences.length) return false;
  return plan.sentences.every((sentence, index) => next.sentences[index] === sentence);
}

/** The state of one page, kept by `reduce`. */
export class RoomStore {
  constructor() {
    this.state = initialState();
  }

  /** Applies a message; returns true when it changed the state. */
  apply(message) {
    const next = reduce(this.state, message);
    const changed = next !== this.state;
    this.state = next;
    return changed;
  }
}
