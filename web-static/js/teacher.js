// The teacher's page: `/teacher#room=CODE&token=TEACHER-TOKEN` (the token leaves the address at once and stays
// in the tab's session, page-keys.js), or `/teacher#room=CODE` in a tab that holds it (the sign-in page's).

import { $, announce } from "./dom.js";
import { RoomConnection } from "./connection.js";
import { takeToken, teacherSlot } from "./page-keys.js";
import { RoomStore } from "./room-store.js";
import { LINK_REFUSALS, errorText } from "./error-codes.js";
import { TeacherControls } from "./controls.js";
import { describePhase, phaseDetail } from "./phase.js";
import { t, tParts, setLanguage, onLanguageChange, browserLanguage } from "./i18n.js";

import { storageBanner } from "./storage-banner.js";
import { schoolAccess } from "./school-key.js";
import { renderAnswerChart } from "./answer-chart.js";

// The token leaves the address before anything can wait (a catalog that does not load must not leave it there).
const { params, token } = takeToken((fragment) => teacherSlot(fragment.get("room")));
// The teacher's page speaks the room's language; until the welcome says which, the browser's.
await setLanguage(browserLanguage());
const code = params.get("room");
const store = new RoomStore();
const connection = new RoomConnection({
  hello: () => ({ type: "control", room: code, token }),
  room: () => code,
  onMessage: handle,
  onStatus: ({ state }) => {
    const banner = $("#connection-message");
    banner.hidden = state === "open" || state === "connecting";
    connectionKey = state === "closed" ? "connection.teacher_link_bad" : "connection.lost_server";
    $("#connection-text").textContent = t(connectionKey);
  },
});
let connectionKey = "connection.lost_server";
/** The room's read-only projector token, given to this page by the server in its welcome. */
let dashboardToken = null;
/** The words of each narration notice code (docs/protocol.md). */
const NOTICES = {
  narration_voice_fallback: "narration.voice_fallback",
  narration_questions_voice_fallback: "narration.questions_voice_fallback",
};
/** What the room-state line says when it is not the room's phase (a refused link), worded again on a change. */
let stateWords = null;
const controls = new TeacherControls($("#controls"), (message) => connection.send(message), { room: code, token, rosterHost: $("#roster-card"), chart: $("#teacher-chart") });
window.storycircle = { events: [], connection };
Object.defineProperty(window.storycircle, "room", { get: () => store.state });

function handle(message) {
  if (message.type === "error") {
    if (LINK_REFUSALS.has(message.code)) {
      stateWords = () => errorText(message, { code });
      $("#room-state").textContent = stateWords();
    } else {
      controls.refused(message);
    }
    return;
  }
  // The projector's own link, from the teacher's welcome only (a welcome after a restart may lack it:
  // the link already known stays).
  if (message.type === "welcome" && message.dashboardToken) dashboardToken = message.dashboardToken;
  if (!store.apply(message)) return;
  if (store.state.language) setLanguage(store.state.language);
  render();
}

function render({ quiet = false } = {}) {
  const room = store.state;
  stateWords = null;
  // Its words are ours from now on: a later translatePage() (a language loaded after this render) must
  // not put the placeholder "Room" back over the title.
  delete $("#room-title").dataset.i18n;
  $("#room-title").textContent = t("teacher.title", { title: room.title ?? t("teacher.room"), code: room.code ?? code });
  $("#room-title").dir = "auto";
  const stateText = describePhase(room);
  if ($("#room-state").textContent !== stateText && !quiet) announce(stateText);
  $("#room-state").textContent = stateText;
  const detail = phaseDetail(room);
  $("#phase-detail").textContent = detail;
  $("#phase-detail").hidden = !detail;
  // Counts only while a question is open: never a stale "2 of 3 answered" on a finished room.
  $("#room-answers").textContent = room.phase === "question" && room.answers
    ? t("teacher.answers", { answered: room.answers.answered, total: room.answers.total, count: room.answers.total }) : "";
  // The link carries the room's language: the child's first screen, before joining, speaks it.
  const join = `${location.origin}/?room=${encodeURIComponent(room.code ?? code)}&lang=${encodeURIComponent(room.language ?? "")}`;
  const link = Object.assign(document.createElement("a"), { id: "join-link", href: join, textContent: join, dir: "ltr" });
  $("#join-at").replaceChildren(...tParts("teacher.join_at", { link }));
  renderLinks(room);
  storageBanner($("#storage-banner"), room.storage);
  // How the story is being read, when the teacher should know (the natural voice failed): worded from
  // the notice's code.
  // The questions' notice stays while the questions are read.
  const questionsNotice = room.plan?.notice?.code === "narration_questions_voice_fallback" && (room.phase === "question" || room.phase === "reveal");
  const notice = room.phase === "narrating" || room.phase === "narrated" || questionsNotice ? room.plan?.notice : null;
  $("#voice-notice").hidden = !notice;
  $("#voice-notice").textContent = notice ? t(NOTICES[notice.code] ?? "narration.notice_unknown") : "";
  if (notice) $("#voice-notice").dataset.code = notice.code;
  // The projector's answer chart, at the reveal, under the next step.
  const reveal = room.phase === "reveal" ? room.reveal : null;
  $("#teacher-chart").hidden = !reveal;
  if (reveal) {
    renderAnswerChart($("#teacher-distribution"), {
      distribution: reveal.distribution, correctOption: reveal.correctOption, texts: room.question?.options ?? null,
    });
  }
  controls.update(room);
}

/**
 * The projector page of this room (its link, with the read-only token, as the server prints it), and the
 * way back to the class and to the story library when this tab holds the school's key (a teacher page
 * opened from the library or the class page; school-key.js). A page opened from the printed teacher link
 * holds no key, and links that would only ask for one are not offered.
 */
function renderLinks(room) {
  const roomCode = room.code ?? code;
  $("#dashboard-item").hidden = !dashboardToken;
  if (dashboardToken) $("#dashboard-link").href = `/dashboard#${new URLSearchParams({ room: roomCode, token: dashboardToken })}`;
  const withKey = schoolAccess();
  const classId = room.classRoom?.id;
  $("#class-item").hidden = !(withKey && classId);
  if (classId) $("#class-link").href = `/classes#${new URLSearchParams({ id: classId })}`;
  $("#library-item").hidden = !withKey;
}

onLanguageChange(() => {
  $("#connection-text").textContent = t(connectionKey);
  if (stateWords) {
    $("#room-state").textContent = stateWords();
    return;
  }
  if (store.state.title !== null) render({ quiet: true });
  controls.reword();
});

if (!code || !token) {
  $("#room-state").textContent = t("connection.teacher_link_missing");
} else {
  $("#connection-retry").addEventListener("click", () => connection.retry());
  connection.start();
}
