// A room's results for the teacher: `/results.html#room=CODE&token=TEACHER-TOKEN`. One row per child, one
// column per question (the answer given, and whether it was right), the total and the rank. Each question
// says how many of the children there got it right and how many did not answer (docs/protocol.md,
// "Results"), and its most chosen wrong answer.

import { $, el, clear } from "./dom.js";
import { takeToken, teacherSlot } from "./page-keys.js";
import { t, number, setLanguage, browserLanguage } from "./i18n.js";
import { ApiClient, saveFile } from "./api.js";

// The token leaves the address at once; a reload in this tab finds it in the tab's session (page-keys.js).
const { params, token } = takeToken((fragment) => teacherSlot(fragment.get("room")));
const code = params.get("room");
const api = new ApiClient(token);
// The teacher page's link says the room's language.
await setLanguage(params.get("lang") ?? browserLanguage());

async function load() {
  if (!code || !token) {
    $("#results-summary").textContent = t("results.link_missing");
    return;
  }
  let results;
  try {
    results = await api.call("GET", `/api/rooms/${encodeURIComponent(code)}/results`);
  } catch {
    $("#results-summary").textContent = t("results.load_failed");
    return;
  }
  document.title = t("page.results_of", { title: results.title });
  $("#results-title").textContent = t("results.heading", { title: results.title, code: results.code });
  $("#results-title").dir = "auto";
  const concluded = results.questions.filter((q) => q.concluded && !q.skipped).length;
  $("#results-summary").textContent = t("results.summary", {
    children: t("results.children", { count: results.players.length }),
    scored: t("results.scored", { scored: concluded, count: results.questions.length }),
    state: results.phase === "finished" ? t("results.finished") : t("results.still_going"),
  });
  const table = clear($("#results-table"));
  table.append(el("caption", { class: "visually-hidden", text: t("results.caption") }));
  table.append(el("thead", {}, el("tr", {},
    el("th", { scope: "col", text: t("results.rank") }), el("th", { scope: "col", text: t("results.name") }),
    el("th", { scope: "col", text: t("results.points") }), el("th", { scope: "col", text: t("results.right") }),
    ...results.questions.map((q) => el("th", { scope: "col", dir: "auto", "data-question": q.index },
      t("results.question", { number: q.index + 1, text: q.text }), el("br"),
      el("span", { class: "muted", text: q.skipped ? t("results.skipped") : t("results.answer", { answer: q.options[q.correctOption] }) }),
      ...questionFacts(q))))));
  const body = el("tbody");
  for (const player of results.players) {
    body.append(el("tr", {},
      el("td", { class: "num", text: number(player.rank) }), el("th", { scope: "row", dir: "auto", text: player.nickname }),
      el("td", { class: "num", text: number(player.score) }), el("td", { class: "num", text: `${number(player.correct)}/${number(concluded)}` }),
      ...player.answers.map((a) => a.answer === null || a.answer === undefined
        ? el("td", a.unanswered ? { class: "unanswered", text: t("results.did_not_answer") } : { text: t("results.no_answer") })
        : el("td", { dir: "auto" }, `${a.correct ? "✓" : "✗"} ${a.answer}${a.points ? ` (${t("reveal.plus_points", { count: a.points })})` : ""}`))));
  }
  table.append(body);
  $("#results-box").hidden = false;
  const csv = el("button", { type: "button", onclick: download }, el("span", { "aria-hidden": "true", text: "⬇" }), t("results.download"));
  clear($("#results-actions")).append(csv);
  $("#results-actions").hidden = false;
}

/** "2 of 4 right · 1 did not answer" over the children there when it was asked; its most chosen wrong answer. */
function questionFacts(q) {
  if (q.present === undefined) return [];  // a server from before the counts
  if (!q.present) return [el("span", { class: "question-facts", text: t("results.not_asked") })];
  const counts = [t("results.right_of_present", { right: q.right, count: q.present })];
  if (q.unanswered) counts.push(t("results.unanswered", { count: q.unanswered }));
  const facts = [el("span", { class: "question-facts", "data-facts": "counts", text: counts.join(" · ") })];
  if (q.mostChosenWrong) {
    facts.push(el("span", { class: "question-facts", "data-facts": "wrong", dir: "auto",
      text: t("results.most_wrong", { answer: q.mostChosenWrong.text, count: q.mostChosenWrong.count }) }));
  }
  return facts;
}

async function download() {
  try {
    saveFile(await api.file(`/api/rooms/${encodeURIComponent(code)}/results?format=csv`, `storycircle-${code}.csv`));
  } catch {
    $("#results-summary").textContent = t("results.download_failed");
  }
}

load();
