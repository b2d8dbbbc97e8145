// Every word a page shows comes from one message catalog per language (web-static/i18n/LANG.json). A
// catalog maps a key to a text with {placeholders}, or to plural forms chosen by the browser's
// Intl.PluralRules ({"one": …, "other": …}; Arabic has zero, one, two, few, many, other). Numbers go
// through Intl.NumberFormat (seconds too, as a unit), lists through Intl.ListFormat, ordinals through
// Intl.PluralRules with type "ordinal": no plural or ordinal rules are made by hand here. (No page words a
// time relative to now; one that does should use Intl.RelativeTimeFormat the same way.)
//
// A page's language is the room's (the teacher's choice, or the story's voice) unless the child picked
// their own on this phone (kept in this browser only; the projector never hears of it). Markup names its
// words with data-i18n="key" (the text), data-i18n-aria-label, data-i18n-title, data-i18n-placeholder and
// data-i18n-alt; `translatePage()` fills them in.

/** The languages with a catalog, each named in itself (the language picker shows these names). */
export const LANGUAGES = Object.freeze({
  en: { name: "English", dir: "ltr", intl: "en-GB" },
  es: { name: "Español", dir: "ltr" },
  fr: { name: "Français", dir: "ltr" },
  de: { name: "Deutsch", dir: "ltr" },
  pt: { name: "Português", dir: "ltr", intl: "pt-PT" },
  ar: { name: "العربية", dir: "rtl" },
});
export const FALLBACK = "en";
const CHOICE_KEY = "storycircle.language";
const ATTRIBUTES = ["aria-label", "title", "placeholder", "alt"];

const catalogs = new Map();
let language = FALLBACK;
let catalog = {};
let fallback = {};
const listeners = new Set();
let formats = null;
/** Counts calls of setLanguage: only the latest may apply its catalog (an older one may load last). */
let requests = 0;

/** The catalog language for a language tag or voice name ("es-419" → "es", "pt-br" → "pt", "sw" → null). */
export function catalogLanguage(tag) {
  if (!tag) return null;
  const primary = String(tag).toLowerCase().split(/[-_+/]/)[0];
  return Object.hasOwn(LANGUAGES, primary) ? primary : null;
}

/** The language this browser asks for, if there is a catalog for it. */
export function browserLanguage() {
  for (const tag of navigator.languages ?? [navigator.language]) {
    const found = catalogLanguage(tag);
    if (found) return found;
  }
  return null;
}

/** The child's own choice on this browser, or null to follow the room. */
export function ownChoice() {
  try { return catalogLanguage(localStorage.getItem(CHOICE_KEY)); } catch { return null; }
}

export function saveOwnChoice(lang) {
  try {
    if (lang) localStorage.setItem(CHOICE_KEY, lang);
    else localStorage.removeItem(CHOICE_KEY);
  } catch { /* private mode */ }
}

async function load(lang) {
  if (!catalogs.has(lang)) {
    catalogs.set(lang, fetch(`/i18n/${lang}.json`).then((response) => {
      if (!response.ok) throw new Error(`catalog ${lang}: HTTP ${response.status}`);
      return response.json();
    }));
  }
  try {
    return await catalogs.get(lang);
  } catch (error) {
    catalogs.delete(lang);
    throw error;
  }
}

/** The language the page speaks now. */
export function currentLanguage() {
  return language;
}

/**
 * Speaks `wanted` (a tag or voice name; English when there is no catalog for it): loads its catalog,
 * sets `lang` and `dir` on <html>, fills in the markup's words and tells every listener to redraw.
 * When another call comes while this one's catalog loads, the later call wins: this one then changes
 * nothing, and answers the language the page speaks at that moment.
 */
export async function setLanguage(wanted) {
  const ticket = ++requests;
  const lang = catalogLanguage(wanted) ?? FALLBACK;
  const [loadedFallback, loaded] = await Promise.all([
    Object.keys(fallback).length === 0 ? load(FALLBACK) : Promise.resolve(fallback),
    load(lang),
  ]);
  if (Object.keys(fallback).length === 0) fallback = loadedFallback;
  if (ticket !== requests) return language;
  const changed = lang !== language || loaded !== catalog;
  language = lang;
  catalog = loaded;
  // The catalogs are written in British English and European Portuguese: Intl formats as they do.
  const locale = LANGUAGES[lang].intl ?? lang;
  formats = {
    plural: new Intl.PluralRules(locale),
    ordinal: new Intl.PluralRules(locale, { type: "ordinal" }),
    number: new Intl.NumberFormat(locale),
    list: new Intl.ListFormat(locale, { style: "long", type: "conjunction" }),
    seconds: new Intl.NumberFormat(locale, { style: "unit", unit: "second", unitDisplay: "short" }),
  };
  document.documentElement.lang = lang;
  document.documentElement.dir = LANGUAGES[lang].dir;
  translatePage();
  if (changed) for (const listener of listeners) listener(lang);
  return lang;
}

/** Called with the new language after every change (screens redraw their words). */
export function onLanguageChange(listener) {
  listeners.add(listener);
}

function entry(key) {
  if (Object.hasOwn(catalog, key)) return catalog[key];
  if (Object.hasOwn(fallback, key)) {
    console.warn("i18n: no text for key in this catalog", { key, language });
    return fallback[key];
  }
  console.error("i18n: unknown key", { key });
  return key;
}

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!Object.hasOwn(params, name)) return whole;
    const value = params[name];
    return typeof value === "number" ? number(value) : String(value);
  });
}

/**
 * The words for `key` with `params` filled in. A plural entry picks its form by `params.count` through
 * Intl.PluralRules (falling back to "other"); numbers are formatted for the language.
 */
export function t(key, params = {}) {
  return fill(pick(key, Number(params.count ?? 0)), params);
}

/** The text of `key`, its plural form picked for `count` when it has forms. */
function pick(key, count) {
  const text = entry(key);
  if (typeof text !== "object" || text === null) return String(text);
  const form = formats ? formats.plural.select(count) : "other";
  return String(text[form] ?? text.other);
}

/** A list of texts (`names.list`: the names a child can be given). */
export function words(key) {
  const found = entry(key);
  return Array.isArray(found) ? found : [String(found)];
}

/**
 * The words for `key` as nodes, with each parameter that is a Node put in its place (a nickname in its
 * own <bdi>, a link, a number in its own element): for sentences that hold elements.
 */
export function tParts(key, params = {}) {
  const texts = {};
  const nodes = {};
  for (const [name, value] of Object.entries(params)) {
    if (value instanceof Node) nodes[name] = value;
    else texts[name] = value;
  }
  // A count given as an element (`<span data-count="3">`) still picks the plural form.
  const count = params.count instanceof Node ? Number(params.count.dataset.count ?? 0) : Number(params.count ?? 0);
  const sentence = fill(pick(key, count), texts);
  const parts = [];
  let cursor = 0;
  for (const match of sentence.matchAll(/\{(\w+)\}/g)) {
    if (!Object.hasOwn(nodes, match[1])) continue;
    if (match.index > cursor) parts.push(document.createTextNode(sentence.slice(cursor, match.index)));
    parts.push(nodes[match[1]]);
    cursor = match.index + match[0].length;
  }
  if (cursor < sentence.length) parts.push(document.createTextNode(sentence.slice(cursor)));
  return parts;
}

/**
 * Text someone wrote (a nickname, a title, an option) inside one of our sentences, isolated so its own
 * direction cannot reorder ours: the plain-text form of dir="auto" (U+2068 … U+2069).
 */
export function isolate(text) {
  return `\u2068${text ?? ""}\u2069`;
}

/** A number as the language writes it. */
export function number(n) {
  return formats ? formats.number.format(n) : String(n);
}

/** "1st", "2.º", "1er", "1.", "الأول"…: the catalog's "number.ordinal" forms, picked by Intl's ordinal rules. */
export function ordinal(n) {
  const forms = entry("number.ordinal");
  const form = formats ? formats.ordinal.select(n) : "other";
  return fill(String(forms[form] ?? forms.other), { n });
}

/** "Ana, Ben and Cat" in the page's language. */
export function list(items) {
  return formats ? formats.list.format(items.map(String)) : items.join(", ");
}

/** "5 s", "5 Sek.", "٥ ث": seconds, short, as the language writes them. */
export function seconds(n) {
  return formats ? formats.seconds.format(n) : `${n} s`;
}

/** Fills in the words of every element under `root` that names a key. */
export function translatePage(root = document) {
  for (const node of root.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const attribute of ATTRIBUTES) {
    for (const node of root.querySelectorAll(`[data-i18n-${attribute}]`)) {
      node.setAttribute(attribute, t(node.getAttribute(`data-i18n-${attribute}`)));
    }
  }
}

/**
 * A picker of the page's language for a child: "the class's language" or one named in itself. The
 * choice stays in this browser; `onPick(lang or null)` is told.
 */
export function languagePicker(select, onPick, followKey = "language.follow_room") {
  select.replaceChildren();
  const follow = document.createElement("option");
  follow.value = "";
  follow.dataset.i18n = followKey;
  select.append(follow);
  for (const [code, { name, dir }] of Object.entries(LANGUAGES)) {
    const option = document.createElement("option");
    option.value = code;
    option.lang = code;
    option.dir = dir;
    option.textContent = name;
    select.append(option);
  }
  select.value = ownChoice() ?? "";
  translatePage(select);
  select.addEventListener("change", () => {
    const picked = catalogLanguage(select.value);
    saveOwnChoice(picked);
    onPick(picked);
  });
}
