// A room's results for the teacher: `/results.html#room=CODE&token=TEACHER-TOKEN`. One row per child, one
// column per question (the answer given, and whether it was right), the total and the rank.

import { $, el, clear } from "./dom.js";
import { fragmentParameters } from "./connection.js";

const params = fragmentParameters();
const code = params.get("room");
const token = params.get("token");

async function load() {
  if (!code || !token) {
    $("#results-summary").textContent = "This page needs the results link from the teacher page.";
    return;
  }
  let results;
  try {
    const response = await fetch(`/api/rooms/${encodeURIComponent(code)}/results`, { headers: { Authorization: `Bearer ${token}` } });
    if (!response.ok) throw new Error(String(response.status));
    results = await response.json();
  } catch {
    $("#results-summary").textContent = "The results could not be loaded. Check the link, or try again in a moment.";
    return;
  }
  document.title = `StoryCircle · Results · ${results.title}`;
  $("#results-title").textContent = `${results.title} · room ${results.code}`;
  const concluded = results.questions.filter((q) => q.concluded && !q.skipped).length;
  $("#results-summary").textContent = `${results.players.length} ${results.players.length === 1 ? "child" : "children"} · ${concluded} of ${results.questions.length} questions scored · ${results.phase === "finished" ? "finished" : `now: ${results.phase}`}`;
  const table = clear($("#results-table"));
  table.append(el("caption", { class: "visually-hidden", text: "Each child’s answers" }));
  table.append(el("thead", {}, el("tr", {},
    el("th", { scope: "col", text: "Rank" }), el("th", { scope: "col", text: "Name" }), el("th", { scope: "col", text: "Points" }),
    el("th", { scope: "col", text: "Right" }),
    ...results.questions.map((q) => el("th", { scope: "col" }, `Q${q.index + 1}. ${q.text}`, el("br"),
      el("span", { class: "muted", text: q.skipped ? "(skipped)" : `Answer: ${q.options[q.correctOption]}` }))))));
  const body = el("tbody");
  for (const player of results.players) {
    body.append(el("tr", {},
      el("td", { text: String(player.rank) }), el("th", { scope: "row", text: player.nickname }),
      el("td", { text: String(player.score) }), el("td", { text: `${player.correct}/${concluded}` }),
      ...player.answers.map((a) => el("td", {
        text: a.answer === null || a.answer === undefined ? "–" : `${a.correct ? "✓" : "✗"} ${a.answer}${a.points ? ` (+${a.points})` : ""}`,
      }))));
  }
  table.append(body);
  $("#results-box").hidden = false;
  const csv = el("button", { type: "button", onclick: download }, el("span", { "aria-hidden": "true", text: "⬇" }), "Download results (CSV)");
  clear($("#results-actions")).append(csv);
  $("#results-actions").hidden = false;
}

async function download() {
  const response = await fetch(`/api/rooms/${encodeURIComponent(code)}/results?format=csv`, { headers: { Authorization: `Bearer ${token}` } });
  const url = URL.createObjectURL(await response.blob());
  const link = el("a", { href: url, download: `storycircle-${code}.csv`, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
}

load();
