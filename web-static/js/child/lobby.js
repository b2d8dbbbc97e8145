// The lobby, like a quiz game's title screen: your own name, today's story, how many questions.

import { $, announce } from "../dom.js";
import { session, show } from "./store.js";

export function showLobby(room) {
  $("#lobby-name").textContent = session.nickname ?? "";
  $("#lobby-story").textContent = room.title;
  $("#lobby-questions").textContent = `${room.questionCount} ${room.questionCount === 1 ? "question" : "questions"}`;
  $("#lobby-room").textContent = room.code;
  show("lobby");
  announce(`Hi ${session.nickname}! Today’s story is ${room.title}, with ${room.questionCount} questions. Waiting for your teacher to start.`);
}
