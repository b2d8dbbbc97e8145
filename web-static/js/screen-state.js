// What a screen (dashboard or teacher) knows about the room, kept current from the messages it gets.
// A `welcome` may come at any time (a reconnect, or the server rebuilding the room from its store): it
// replaces everything.

export class ScreenState {
  constructor() {
    this.reset();
  }

  reset() {
    this.phase = "lobby";
    this.paused = false;
    this.locked = false;
    this.settings = {};
    this.players = [];
    this.scoreboard = [];
    this.answers = null;
    this.question = null;
    this.reveal = null;
    this.finished = null;
    this.questionCount = 0;
    this.error = null;
    this.role = null;
    this.storage = { ok: true, message: "" };
  }

  /** Applies a message; returns true when it changed something a screen shows. */
  apply(message) {
    switch (message.type) {
      case "welcome": {
        const room = message.room;
        this.reset();
        this.role = message.role;
        Object.assign(this, {
          code: room.code, title: room.title, phase: room.phase, paused: room.paused, locked: room.locked,
          settings: room.settings ?? {}, questionCount: room.questionCount, question: room.question ?? null,
          reveal: room.reveal ?? null, finished: room.finished ?? null, error: room.error ?? null,
          scoreboard: room.scoreboard ?? [],
        });
        this.players = mergePlayers(room.players ?? [], room.scoreboard ?? []);
        return true;
      }
      case "lobby": this.players = mergePlayers(message.players, this.scoreboard); return true;
      case "scoreboard":
        this.scoreboard = message.entries;
        this.answers = this.phase === "question" ? message.answers ?? null : null;
        this.players = mergePlayers(message.entries, message.entries);
        return true;
      case "preparing": this.phase = "preparing"; this.error = null; this.answers = null; return true;
      case "narration.plan": this.phase = "narrating"; this.paused = false; return true;
      case "narration.error": this.phase = "error"; this.error = message.message; return true;
      case "question":
        Object.assign(this, { phase: "question", question: message, reveal: null, paused: false, answers: null });
        this.players = this.players.map((p) => ({ ...p, answered: false }));
        return true;
      case "reveal":
        Object.assign(this, { phase: "reveal", reveal: message, answers: null, scoreboard: message.top });
        this.players = mergePlayers(message.top, message.top);
        return true;
      case "paused": this.paused = true; return true;
      case "resumed": this.paused = false; return true;
      case "room": this.locked = message.locked; this.settings = message.settings; return true;
      case "finished":
        Object.assign(this, { phase: "finished", finished: message, answers: null, paused: false });
        this.scoreboard = message.entries ?? this.scoreboard;
        this.players = mergePlayers(this.scoreboard, this.scoreboard);
        return true;
      case "storage": this.storage = { ok: Boolean(message.ok), message: message.message ?? "" }; return true;
      default: return false;
    }
  }
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
