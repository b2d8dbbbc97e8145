// The `type` of every WebSocket message (docs/protocol.md), named once for every page.
// <generated from Sources/StoryCircleCore/Protocol/ServerMessage.swift and ClientMessage.swift by GeneratedTablesTests: edit the Swift, then `STORYCIRCLE_WRITE_GENERATED=1 swift test --filter GeneratedTables`>

/** What the server sends. */
export const SERVER = Object.freeze({
  WELCOME: "welcome",
  ERROR: "error",
  PONG: "pong",
  LOBBY: "lobby",
  PREPARING: "preparing",
  NARRATION_PLAN: "narration.plan",
  NARRATION_SENTENCE: "narration.sentence",
  NARRATION_NOTICE: "narration.notice",
  PROGRESS: "progress",
  NARRATION_COMPLETE: "narration.complete",
  NARRATION_ERROR: "narration.error",
  QUIZ_UNLOCK: "quiz.unlock",
  QUESTION: "question",
  ANSWER_ACK: "answer.ack",
  REVEAL: "reveal",
  SCOREBOARD: "scoreboard",
  PAUSED: "paused",
  RESUMED: "resumed",
  ROOM: "room",
  FINISHED: "finished",
  KICKED: "kicked",
  STORAGE: "storage",
  NAMES: "names",
  CLASS_ROSTER: "class.roster",
});

/** What a page sends. */
export const CLIENT = Object.freeze({
  JOIN: "join",
  REJOIN: "rejoin",
  WATCH: "watch",
  CONTROL: "control",
  NAMES: "names",
  ANSWER: "answer",
  PING: "ping",
  COMMAND: "command",
  NOT_ME: "notMe",
});
// </generated>
