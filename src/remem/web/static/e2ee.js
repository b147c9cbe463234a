// End-to-end encrypted DM memory, the page's side (docs/e2ee.md), with WebCrypto only.
//
// The same wire format as remem.e2ee (Python), checked on the same test vectors:
//   slot key = HKDF-SHA256(DM key, salt = UTF-8 of the thread id,
//              info = "remem/dm-memory/v1", 32 bytes)
//   AES-256-GCM, a fresh random 12-byte nonce per write
//   associated data = canonical JSON of {"agent", "thread", "version"} (sorted keys,
//              no spaces, UTF-8)
//   blob = base64url without padding of nonce || ciphertext || tag
//   version written = version read + 1; plaintext = the JSON list of facts, re-clamped
//   by every reader to 24 facts of 280 characters (code points).
//
// The page is given the slot key only (never the DM key) in the URL fragment, which a
// browser never sends to a server; slotKeyFromFragment() reads it and removes it from
// the address bar. The highest slot version seen is kept in localStorage; a lower one
// (a replay) is refused. No key, fact or plaintext is ever sent to the server.

export const INFO = "remem/dm-memory/v1";
export const MAX_FACTS = 24;
export const MAX_FACT_CHARS = 280;
export const WRITE_ATTEMPTS = 5;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const ASCII_SPACE = /^[ \t\n\r\f\v]*$/;
const encoder = new TextEncoder();

/** A slot refused by this reader; `reason`: unauthentic, replayed, not_a_slot, conflict. */
export class SlotError extends Error {
  constructor(message, reason) {
    super(message);
    this.name = "SlotError";
    this.reason = reason;
  }
}

export function b64urlEncode(bytes) {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function b64urlDecode(text) {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) {
    throw new SlotError("not base64url text", "unauthentic");
  }
  const b64 = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(raw, (ch) => ch.charCodeAt(0));
}

/** The 32-byte slot key of DM thread `thread` under the DM key (bytes). */
export async function deriveSlotKey(dmKey, thread) {
  const base = await crypto.subtle.importKey("raw", dmKey, "HKDF", false, ["deriveBits"]);
  const params = {
    name: "HKDF",
    hash: "SHA-256",
    salt: encoder.encode(thread),
    info: encoder.encode(INFO),
  };
  return new Uint8Array(await crypto.subtle.deriveBits(params, base, 256));
}

/** The canonical JSON of {"agent", "thread", "version"} as UTF-8 bytes. */
export function associatedData(agent, thread, version) {
  if (!Number.isInteger(version) || version < 1) {
    throw new SlotError(`a slot version is a whole number from 1, not ${version}`, "unauthentic");
  }
  // Keys written in sorted order; JSON.stringify adds no spaces and leaves non-ASCII be.
  return encoder.encode(JSON.stringify({ agent, thread, version }));
}

/** The facts a reader keeps: strings not blank (ASCII whitespace only), the first 24,
 * each cut to 280 code points. A plaintext that is no list is refused. */
export function clamp(items) {
  if (!Array.isArray(items)) {
    throw new SlotError("the DM memory slot does not hold a list of facts", "not_a_slot");
  }
  const facts = items.filter((item) => typeof item === "string" && !ASCII_SPACE.test(item));
  return facts.slice(0, MAX_FACTS).map((fact) => Array.from(fact).slice(0, MAX_FACT_CHARS).join(""));
}

async function aesKey(slotKey, usage) {
  return crypto.subtle.importKey("raw", slotKey, "AES-GCM", false, [usage]);
}

/** The blob of `facts` written as `version` of `thread`'s slot. `nonce` is for test
 * vectors only: every real write takes a fresh random one. */
export async function seal(slotKey, { agent, thread, version, facts, nonce }) {
  const iv = nonce || crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  const params = { name: "AES-GCM", iv, additionalData: associatedData(agent, thread, version) };
  const plaintext = encoder.encode(JSON.stringify(facts));
  const sealed = new Uint8Array(await crypto.subtle.encrypt(params, await aesKey(slotKey, "encrypt"), plaintext));
  const out = new Uint8Array(iv.length + sealed.length);
  out.set(iv);
  out.set(sealed, iv.length);
  return b64urlEncode(out);
}

/** The facts of a blob read as `version` of `thread`'s slot: authenticated, re-clamped. */
export async function openBlob(slotKey, blob, { agent, thread, version }) {
  const ad = associatedData(agent, thread, version);
  let items;
  try {
    const raw = b64urlDecode(blob);
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new Error("too short");
    const params = { name: "AES-GCM", iv: raw.slice(0, NONCE_BYTES), additionalData: ad };
    const key = await aesKey(slotKey, "decrypt");
    const plain = await crypto.subtle.decrypt(params, key, raw.slice(NONCE_BYTES));
    items = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(plain));
  } catch (error) {
    throw new SlotError(
      `the DM memory slot of ${thread} (version ${version}) does not authenticate: it was ` +
        "altered, moved from another thread or version, or written under another key",
      "unauthentic",
    );
  }
  return clamp(items);
}

/** The slot key the link's fragment carries (`#...slot_key=<base64url>`), removed from
 * the address bar at once; null when there is none. */
export function slotKeyFromFragment(win = window) {
  const params = new URLSearchParams(win.location.hash.replace(/^#/, ""));
  const text = params.get("slot_key");
  if (!text) return null;
  params.delete("slot_key");
  const rest = params.toString();
  const url = win.location.pathname + win.location.search + (rest ? "#" + rest : "");
  win.history.replaceState(null, "", url);
  const key = b64urlDecode(text);
  if (key.length !== 32) throw new SlotError("the link's slot key is not 32 bytes", "unauthentic");
  return key;
}

/** A request function for a remem service's slot route: `fetch` with `headers` (the
 * page's session or a host's credentials) under `base` (e.g. "" for the page's own
 * origin). It sends only the blob and the version, never a key or a fact. */
export function slotRoute(base, agent, headers = {}) {
  const url = `${base}/v1/agents/${encodeURIComponent(agent)}/dm-slot`;
  return async (method, body, ifVersion) => {
    const init = { method, headers: { ...headers }, credentials: "same-origin", cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    if (ifVersion !== undefined) init.headers["If-Match"] = `"${ifVersion}"`;
    const response = await fetch(url, init);
    const text = await response.text();
    return { status: response.status, data: text ? JSON.parse(text) : null };
  };
}

/** Whether two facts say the same, spacing and case aside (as the bot's side judges). */
export function sameFact(a, b) {
  const norm = (s) => s.split(/\s+/).filter(Boolean).join(" ").toLowerCase();
  return norm(a) === norm(b);
}

/** One DM's encrypted memory as the page holds it: the facts and the version they were
 * read at (what the page shows), written whole at that version; on 409 it reloads and
 * re-applies the change. `request(method, body, ifVersion)` → {status, data}. */
export class DmSlotClient {
  constructor({ agent, thread, slotKey, request, storage = window.localStorage }) {
    Object.assign(this, { agent, thread, slotKey, request, storage });
    this.version = 0;
    this.facts = [];
  }

  get seenKey() {
    return `remem.dm-slot.highest:${this.agent}:${this.thread}`;
  }

  get highestSeen() {
    return Number.parseInt(this.storage.getItem(this.seenKey) || "0", 10);
  }

  _saw(version) {
    if (version > this.highestSeen) this.storage.setItem(this.seenKey, String(version));
  }

  /** Read the slot: authenticate, refuse a version below the highest seen, re-clamp. */
  async load() {
    const { status, data } = await this.request("GET");
    if (status !== 200) throw new SlotError(`reading the slot failed (${status}): ${data && data.message}`, "http");
    await this._accept(data);
    return this.facts;
  }

  async _accept(slot) {
    if (slot.version < this.highestSeen) {
      throw new SlotError(
        `the server returned version ${slot.version} of the slot, older than version ` +
          `${this.highestSeen} already seen here: a replay`,
        "replayed",
      );
    }
    const opts = { agent: this.agent, thread: this.thread, version: slot.version };
    this.facts = slot.blob === null ? [] : await openBlob(this.slotKey, slot.blob, opts);
    this.version = slot.version;
    this._saw(slot.version);
  }

  /** Apply `change` (facts → new facts, or null for no write) to the facts shown and
   * write them at the version they were read at; after a 409, reload and re-apply. */
  async update(change) {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const next = change([...this.facts]);
      if (next === null) return this.facts;
      const facts = clamp(next);
      const version = this.version + 1;
      const blob = await seal(this.slotKey, { agent: this.agent, thread: this.thread, version, facts });
      const { status, data } = await this.request("PUT", { blob }, this.version);
      if (status === 409 && data && data.current) {
        await this._accept(data.current);
        continue;
      }
      if (status !== 200) throw new SlotError(`writing the slot failed (${status}): ${data && data.message}`, "http");
      this.facts = facts;
      this.version = data.version;
      this._saw(data.version);
      return this.facts;
    }
    throw new SlotError("the slot kept changing; try again", "conflict");
  }

  remember(fact) {
    return this.update((facts) => {
      if (facts.some((f) => sameFact(f, fact))) return null;
      if (facts.length >= MAX_FACTS) throw new SlotError(`the slot holds ${MAX_FACTS} facts; forget one first`, "slot_full");
      return [...facts, fact];
    });
  }

  forget(fact) {
    return this.update((facts) => {
      const kept = facts.filter((f) => !sameFact(f, fact));
      return kept.length === facts.length ? null : kept;
    });
  }
}
