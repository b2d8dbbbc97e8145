// Passkeys (WebAuthn) for a teacher's own sign-in (docs/protocol.md, "Passkeys"). The server sends its
// options as JSON, binary fields in base64url; the browser's `navigator.credentials` wants ArrayBuffers and
// answers with them: this module converts both ways and runs the two ceremonies against the API. The page
// words every refusal (`Refused`, with the server's code) and the browser's own (`NotAllowedError`: the
// person cancelled or waited too long). Nothing here touches the page at import, so node's test runner loads
// it as it is (Tests/Pages/passkeys.test.mjs).

import { send } from "./session.js";

/** Whether this browser can use passkeys at all (a secure page in a browser that knows WebAuthn). */
export function passkeysSupported() {
  return typeof globalThis.PublicKeyCredential === "function" && globalThis.isSecureContext !== false;
}

/** base64url without padding, as WebAuthn's JSON writes bytes. */
export function toBase64url(buffer) {
  const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes of a base64url text (padded or not), as an ArrayBuffer. */
export function fromBase64url(text) {
  const standard = text.replace(/-/g, "+").replace(/_/g, "/");
  const binary = atob(standard + "=".repeat((4 - (standard.length % 4)) % 4));
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes.buffer;
}

/** `navigator.credentials.create()`'s options from the server's JSON (`POST /api/passkeys/options`). */
export function creationOptions(json) {
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    user: { ...json.user, id: fromBase64url(json.user.id) },
    excludeCredentials: (json.excludeCredentials ?? []).map((credential) => ({ ...credential, id: fromBase64url(credential.id) })),
  };
}

/** `navigator.credentials.get()`'s options from the server's JSON (`POST /api/session/passkey/options`). */
export function requestOptions(json) {
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    allowCredentials: (json.allowCredentials ?? []).map((credential) => ({ ...credential, id: fromBase64url(credential.id) })),
  };
}

/** A new credential as the server reads it. */
export function registrationJSON(credential) {
  const response = credential.response;
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      attestationObject: toBase64url(response.attestationObject),
      transports: typeof response.getTransports === "function" ? response.getTransports() : [],
    },
  };
}

/** A signed assertion as the server reads it. */
export function assertionJSON(credential) {
  const response = credential.response;
  return {
    id: credential.id,
    rawId: toBase64url(credential.rawId),
    type: credential.type,
    response: {
      clientDataJSON: toBase64url(response.clientDataJSON),
      authenticatorData: toBase64url(response.authenticatorData),
      signature: toBase64url(response.signature),
      userHandle: response.userHandle ? toBase64url(response.userHandle) : null,
    },
  };
}

const browserCredentials = () => globalThis.navigator.credentials;

/**
 * Registers a new passkey, called `name`, for the signed-in account: the stored passkey's JSON. A session
 * signed in more than five minutes ago sends the account's `password` too (else the server refuses with
 * `recent_sign_in_needed`, before the browser is asked for anything).
 */
export async function registerPasskey(name, csrf, { fetch, credentials = browserCredentials(), password } = {}) {
  const options = await send("POST", "/api/passkeys/options", { body: password ? { password } : {}, csrf, fetch });
  const credential = await credentials.create({ publicKey: creationOptions(options.publicKey) });
  const answer = await send("POST", "/api/passkeys", { body: { name, credential: registrationJSON(credential) }, csrf, fetch });
  return answer.passkey;
}

/** Signs in with a passkey (any of this site's the authenticator holds): `{account, csrf}` as a password sign-in. */
export async function signInWithPasskey({ fetch, credentials = browserCredentials() } = {}) {
  const options = await send("POST", "/api/session/passkey/options", { body: {}, fetch });
  const credential = await credentials.get({ publicKey: requestOptions(options.publicKey) });
  const answer = await send("POST", "/api/session/passkey", { body: { credential: assertionJSON(credential) }, fetch });
  return { account: answer.account, csrf: answer.csrf };
}

/** The signed-in account's passkeys. */
export async function listPasskeys({ fetch } = {}) {
  return (await send("GET", "/api/passkeys", { fetch })).passkeys;
}

/** Removes one of the signed-in account's passkeys. */
export async function deletePasskey(id, csrf, { fetch } = {}) {
  await send("DELETE", `/api/passkeys/${encodeURIComponent(id)}`, { csrf, fetch });
}
