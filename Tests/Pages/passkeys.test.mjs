// The passkey ceremonies' glue (web-static/js/passkeys.js): base64url both ways, the server's JSON options
// turned into what navigator.credentials wants, the credentials turned back into JSON, and both ceremonies
// over a fetch and an authenticator of the test's own.

import { test } from "node:test";
import assert from "node:assert/strict";
import { Refused } from "../../web-static/js/api.js";
import {
  assertionJSON, creationOptions, fromBase64url, registerPasskey, registrationJSON, requestOptions, signInWithPasskey, toBase64url,
} from "../../web-static/js/passkeys.js";

const bytes = (...values) => new Uint8Array(values).buffer;

/** A fetch answering each path from `answers` (status 200 unless given), recording every call. */
function fakeFetch(answers) {
  const calls = [];
  const fetch = async (path, init) => {
    calls.push({ path, init, body: init.body === undefined ? undefined : JSON.parse(init.body) });
    const { status = 200, body } = answers[path];
    return { ok: status >= 200 && status < 300, status, json: async () => body };
  };
  return { fetch, calls };
}

test("base64url round-trips every byte, without padding or + and /", () => {
  const all = new Uint8Array(256).map((_, index) => index);
  const text = toBase64url(all);
  assert.ok(!/[+/=]/.test(text));
  assert.deepEqual(new Uint8Array(fromBase64url(text)), all);
  assert.equal(toBase64url(bytes(0xfb, 0xff)), "-_8");
  assert.deepEqual(new Uint8Array(fromBase64url("-_8")), new Uint8Array([0xfb, 0xff]));
  assert.deepEqual(new Uint8Array(fromBase64url("-_8=")), new Uint8Array([0xfb, 0xff]));
  assert.equal(toBase64url(new Uint8Array([1, 2, 3]).subarray(1)), toBase64url(bytes(2, 3)));
});

test("the server's options become ArrayBuffers where WebAuthn wants them, the rest untouched", () => {
  const created = creationOptions({
    challenge: "AQID", rp: { id: "school.example", name: "StoryCircle" }, user: { id: "YWNj", name: "ana", displayName: "Ana" },
    pubKeyCredParams: [{ type: "public-key", alg: -7 }], excludeCredentials: [{ type: "public-key", id: "BAU" }],
  });
  assert.deepEqual(new Uint8Array(created.challenge), new Uint8Array([1, 2, 3]));
  assert.deepEqual(new Uint8Array(created.user.id), new Uint8Array([0x61, 0x63, 0x63]));
  assert.equal(created.user.displayName, "Ana");
  assert.deepEqual(new Uint8Array(created.excludeCredentials[0].id), new Uint8Array([4, 5]));
  assert.equal(created.rp.id, "school.example");
  const requested = requestOptions({ challenge: "AQID", rpId: "school.example", userVerification: "required" });
  assert.deepEqual(requested.allowCredentials, []);
  assert.equal(requested.userVerification, "required");
});

const registration = {
  id: "BAU", rawId: bytes(4, 5), type: "public-key",
  response: { clientDataJSON: bytes(1), attestationObject: bytes(2), getTransports: () => ["internal"] },
};
const assertion = {
  id: "BAU", rawId: bytes(4, 5), type: "public-key",
  response: { clientDataJSON: bytes(1), authenticatorData: bytes(2), signature: bytes(3), userHandle: bytes(0x61) },
};

test("credentials become the JSON the server reads", () => {
  assert.deepEqual(registrationJSON(registration), {
    id: "BAU", rawId: "BAU", type: "public-key", response: { clientDataJSON: "AQ", attestationObject: "Ag", transports: ["internal"] },
  });
  assert.deepEqual(assertionJSON(assertion).response, { clientDataJSON: "AQ", authenticatorData: "Ag", signature: "Aw", userHandle: "YQ" });
  assert.equal(assertionJSON({ ...assertion, response: { ...assertion.response, userHandle: null } }).response.userHandle, null);
});

test("registering asks for options, creates the credential and sends it with its name and the CSRF token", async () => {
  const { fetch, calls } = fakeFetch({
    "/api/passkeys/options": { body: { publicKey: { challenge: "AQID", rp: { id: "x" }, user: { id: "YQ", name: "a", displayName: "A" } } } },
    "/api/passkeys": { status: 201, body: { passkey: { id: "BAU", name: "Laptop" } } },
  });
  let asked = null;
  const credentials = { create: async (options) => { asked = options; return registration; } };
  assert.deepEqual(await registerPasskey("Laptop", "csrf-1", { fetch, credentials }), { id: "BAU", name: "Laptop" });
  assert.deepEqual(new Uint8Array(asked.publicKey.challenge), new Uint8Array([1, 2, 3]));
  assert.deepEqual(calls.map((call) => [call.init.method, call.path, call.init.headers["X-CSRF-Token"]]), [
    ["POST", "/api/passkeys/options", "csrf-1"], ["POST", "/api/passkeys", "csrf-1"],
  ]);
  assert.equal(calls[1].body.name, "Laptop");
  assert.equal(calls[1].body.credential.response.attestationObject, "Ag");
});

test("registering sends the password with the options when it is given, and nothing of it otherwise", async () => {
  const answers = {
    "/api/passkeys/options": { body: { publicKey: { challenge: "AQID", rp: { id: "x" }, user: { id: "YQ", name: "a", displayName: "A" } } } },
    "/api/passkeys": { status: 201, body: { passkey: { id: "BAU", name: "Laptop" } } },
  };
  const credentials = { create: async () => registration };
  const typed = fakeFetch(answers);
  await registerPasskey("Laptop", "csrf-1", { fetch: typed.fetch, credentials, password: "correct horse" });
  assert.deepEqual(typed.calls[0].body, { password: "correct horse" });
  assert.equal(JSON.stringify(typed.calls[1].body).includes("horse"), false);
  const untyped = fakeFetch(answers);
  await registerPasskey("Laptop", "csrf-1", { fetch: untyped.fetch, credentials });
  assert.deepEqual(untyped.calls[0].body, {});

  // Refused for an old sign-in: the browser is asked for nothing, and the page has the server's reason.
  const refusing = fakeFetch({ "/api/passkeys/options": { status: 403, body: { error: { code: "recent_sign_in_needed", reason: "password_needed" } } } });
  let asked = false;
  await assert.rejects(registerPasskey("Laptop", "csrf-1", { fetch: refusing.fetch, credentials: { create: async () => { asked = true; } } }),
    (error) => error instanceof Refused && error.error.reason === "password_needed");
  assert.equal(asked, false);
});

test("signing in sends the assertion and answers the session; a refusal keeps the server's code", async () => {
  const { fetch, calls } = fakeFetch({
    "/api/session/passkey/options": { body: { publicKey: { challenge: "AQID", rpId: "x" } } },
    "/api/session/passkey": { body: { account: { id: "acc_1", login: "ana" }, csrf: "c" } },
  });
  const credentials = { get: async () => assertion };
  assert.deepEqual(await signInWithPasskey({ fetch, credentials }), { account: { id: "acc_1", login: "ana" }, csrf: "c" });
  assert.equal(calls[1].body.credential.response.signature, "Aw");
  assert.equal(calls[1].init.credentials, "same-origin");

  const refusing = fakeFetch({
    "/api/session/passkey/options": { body: { publicKey: { challenge: "AQID" } } },
    "/api/session/passkey": { status: 401, body: { error: { code: "sign_in_failed", message: "for another site" } } },
  });
  await assert.rejects(signInWithPasskey({ fetch: refusing.fetch, credentials }), (error) => error instanceof Refused && error.error.code === "sign_in_failed");
});
