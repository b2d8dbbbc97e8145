// What a screen (dashboard or teacher) knows about the room, kept current from the messages it gets.

export class ScreenState {
  constructor() {
    this.phase = "lobby";
    this.paused = false;
    this.locked = false;
    this.settings = {};
    this.players = [];
    this.scoreboard = [];
    this.answers = null;
    this.question = null;
    this.questionCount = 0;
    this.error = null;
    this.role = null;
  }

  /** Applies a message; returns true when it changed something a screen shows. */
  apply(message) {
    switch (message.type) {
      case "welcome": {
        const room = message.room;
        this.role = message.role;
        Object.assign(this, {
          code: room.code, title: room.title, phase: room.phase, paused: room.paused, locked: room.locked,
          settings: room.settings, questionCount: room.questionCount, players: room.players ?? [],
          scoreboard: room.scoreboard ?? [], question: room.question ?? null, error: room.error ?? null,
        });
        return true;
      }
      case "lobby": this.players = message.players; return true;
      case "scoreboard":
        this.scoreboard = message.entries;
        this.answers = message.answers ?? null;
        this.players = message.entries.map((entry) => ({ id: entry.id, nickname: entry.nickname, connected: entry.connected }));
        return true;
      case "preparing": this.phase = "preparing"; this.error = null; return true;
      case "narration.plan": this.phase = "narrating"; this.paused = false; return true;
      case "narration.error": this.phase = "error"; this.error = message.message; return true;
      case "question": this.phase = "question"; this.question = message; this.paused = false; this.answers = null; return true;
      case "reveal": this.phase = "reveal"; this.scoreboard = message.top; return true;
      case "paused": this.paused = true; return true;
      case "resumed": this.paused = false; return true;
      case "room": this.locked = message.locked; this.settings = message.settings; return true;
      case "finished": this.phase = "finished"; this.scoreboard = message.entries ?? this.scoreboard; return true;
      default: return false;
    }
  }
}
