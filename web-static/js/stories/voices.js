// The editor's voice menu: the server's voices (GET /api/stories/voices) named as a teacher names them —
// "English (US) · Joe · natural", "English (UK) · robotic" — grouped by language, the story's language
// first. The voices of the pages' languages come first; the rest (espeak-ng's accents, other and invented
// languages) wait behind "More voices". Languages are named by the browser in the page's language
// (Intl.DisplayNames); a tag it cannot name (espeak-ng's private accents, "en-gb-x-gbcwmd") is named by
// espeak-ng's own description ("English (West Midlands)"), never by its code.

import { el, clear } from "../dom.js";
import { t, LANGUAGES, catalogLanguage } from "../i18n.js";

// A plain language, or a language and a country or region ("en-gb", "es-419"): the voices a teacher expects.
const PLAIN_TAG = /^[a-z]{2,3}(-([a-z]{2}|\d{3}))?$/i;

function displayNames(type, style) {
  try {
    return new Intl.DisplayNames([document.documentElement.lang || "en"], { type, style, languageDisplay: "standard", fallback: "none" });
  } catch {
    return null;
  }
}

/** The browser's name for a language tag ("en-US" → "English (US)"), or null when it has none. */
function tagName(tag) {
  if (!tag || /-x-/i.test(tag)) return null;
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    const name = displayNames("language", "short")?.of(canonical);
    return name && name.toLowerCase() !== canonical.toLowerCase() ? name : null;
  } catch {
    return null;
  }
}

/** The voice as the menu describes it, for a name the server does not list (a story's own, "en"). */
function describeName(name) {
  const natural = name.startsWith("piper:");
  const bare = natural ? name.slice("piper:".length) : name.split("+")[0];
  const parts = bare.split("-");
  return {
    name,
    natural,
    language: catalogLanguage(bare),
    tag: natural ? parts[0].replace(/_/g, "-") : bare,
    speaker: natural && parts.length >= 3 ? parts.slice(1, -1).join(" ") : undefined,
  };
}

/** "English (US) · Joe · natural" / "English (UK) · robotic". */
export function voiceLabel(voice) {
  const language = tagName(voice.tag) ?? voice.description ?? t("library.editor.other_language");
  if (!voice.natural) return t("library.editor.voice_robotic", { language });
  const speaker = (voice.speaker ?? "").replace(/_/g, " ");
  return t("library.editor.voice_natural", { language, speaker: speaker.charAt(0).toUpperCase() + speaker.slice(1) });
}

/** Whether a voice is listed before "More voices": natural ones, and the plain voices of the pages' languages. */
function isMain(voice) {
  return voice.natural || (PLAIN_TAG.test(voice.tag ?? "") && Boolean(catalogLanguage(voice.tag)));
}

/** The best voice for `language` (the server's `best`), else the bare language, which espeak-ng reads. */
export function bestVoice(menu, language) {
  return menu.best?.[language] ?? menu.best?.en ?? language ?? "en";
}

/**
 * Fills `select` with the voices of `menu` ({voices, best}), `current` chosen: one group per language of
 * the pages (the story's `language` first), natural voices first in each; with `more`, every other voice
 * in a last group. The current voice is always listed, even when the server does not have it.
 */
export function renderVoiceMenu(select, menu, current, language, more) {
  clear(select);
  // espeak-ng lists one name twice ("yue", read as Cantonese either way): one entry is enough.
  const voices = (menu.voices ?? []).filter((voice, index, all) => all.findIndex((other) => other.name === voice.name) === index);
  if (!voices.some((voice) => voice.name === current)) voices.unshift(describeName(current));
  const byLabel = (a, b) => Number(b.natural) - Number(a.natural) || a.label.localeCompare(b.label);
  const entries = voices.map((voice) => ({ ...voice, label: voiceLabel(voice), main: voice.name === current || isMain(voice) }));
  const order = [language, ...Object.keys(LANGUAGES).filter((code) => code !== language)];
  const names = displayNames("language", "long");
  for (const code of order) {
    const group = entries.filter((entry) => entry.main && (entry.language ?? catalogLanguage(entry.tag)) === code).sort(byLabel);
    if (!group.length) continue;
    select.append(el("optgroup", { label: names?.of(code) ?? LANGUAGES[code].name },
      group.map((entry) => el("option", { value: entry.name, text: entry.label }))));
  }
  const stray = entries.filter((entry) => entry.main && !order.includes(entry.language ?? catalogLanguage(entry.tag))).sort(byLabel);
  const rest = entries.filter((entry) => !entry.main).sort(byLabel);
  if (more || stray.length) {
    const shown = more ? stray.concat(rest).sort(byLabel) : stray;
    select.append(el("optgroup", { label: t("library.editor.more_voices") }, shown.map((entry) => el("option", { value: entry.name, text: entry.label }))));
  }
  select.value = current;
  return rest.length;
}
