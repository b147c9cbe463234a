// The member scratchpad (remem serve's /pad). Plain script, no build step, no third party.
// Every text from the server is set with textContent, never parsed as HTML.
"use strict";

(function () {
  const VISIBLE = new Set(["active", "pending", "unverified", "disabled", "expired"]);
  const SCOPE_LABEL = { user: "about you", channel: "in our direct messages" };
  let session = null;
  let notes = new Map();
  let editing = null; // the id of the note whose edit form is open
  let reloadTimer = null;

  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "text") node.textContent = value;
      else if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) if (child) node.appendChild(child);
    return node;
  }

  function say(text) { $("alert").textContent = ""; $("status").textContent = text; }
  function fail(text) { $("status").textContent = ""; $("alert").textContent = text; }

  async function api(method, path, body, headers) {
    const init = { method, headers: { ...(headers || {}) }, credentials: "same-origin" };
    if (method !== "GET") init.headers["Remem-Pad"] = "1";
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    return { status: response.status, data };
  }

  function agentPath(rest) {
    return "/v1/agents/" + encodeURIComponent(session.agent) + rest;
  }

  function noteJson(note) { return note && typeof note === "object" ? note : null; }

  // -- signing in ------------------------------------------------------------------------

  async function start() {
    const fragment = new URLSearchParams(location.hash.slice(1));
    const token = fragment.get("token");
    // The key of the encrypted DM slot, if the bot's link carries one: kept in this
    // page's memory only, never stored nor sent.
    const slotKeyText = fragment.get("slot_key");
    if (location.hash) {
      // The token is a credential: out of the address bar and history before anything else.
      history.replaceState(null, "", location.pathname + location.search);
    }
    let answer;
    if (token) {
      answer = await api("POST", "/pad/session", { token });
      // Signed in as another member already: the server left the link unused; the
      // person decides whether it replaces the session (else a crafted link could sign
      // them in as someone else, and what they type would land in that memory).
      if (answer.status === 409 && answer.data && answer.data.link && answer.data.signed_in) {
        if (await askSwitch(answer.data.signed_in, answer.data.link)) {
          answer = await api("POST", "/pad/session", { token, replace: true });
        } else {
          answer = await api("GET", "/pad/session");
        }
      }
    } else {
      answer = await api("GET", "/pad/session");
    }
    if (answer.status !== 200 && answer.status !== 201) {
      $("signed-out").hidden = false;
      $("app").hidden = true;
      return;
    }
    session = answer.data;
    $("who").textContent =
      "Signed in as " + session.member + " with " + session.agent +
      " until " + new Date(session.expires_at).toLocaleTimeString() + ".";
    $("app").hidden = false;
    bind();
    await listen(); // subscribed before the first load, so no change falls in between
    await reload();
    await loadChoices();
    if (slotKeyText) await openSlot(slotKeyText);
  }

  // Asks whether the link's member replaces the one signed in; resolves true or false.
  function askSwitch(current, link) {
    $("who").textContent = "Signed in as " + current.member + " with " + current.agent + ".";
    $("switch-question").textContent =
      "You are signed in as " + current.member + " with " + current.agent +
      ". This link signs in " + link.member + " with " + link.agent +
      " instead. Only switch if this is your link.";
    $("switch-yes").textContent = "Sign in as " + link.member;
    $("switch-no").textContent = "Stay signed in as " + current.member;
    $("switch").hidden = false;
    $("switch-no").focus();
    return new Promise((resolve) => {
      const answer = (yes) => () => { $("switch").hidden = true; resolve(yes); };
      $("switch-yes").addEventListener("click", answer(true), { once: true });
      $("switch-no").addEventListener("click", answer(false), { once: true });
    });
  }

  // -- the end-to-end encrypted DM slot (e2ee.js does the cryptography) -------------------

  let slot = null;

  async function openSlot(text) {
    let e2ee;
    try {
      e2ee = await import("/pad/static/e2ee.js");
    } catch (e) {
      return fail("Your encrypted notes cannot be shown: this browser could not load the code that decrypts them.");
    }
    let key;
    try { key = e2ee.b64urlDecode(text); } catch (e) { key = null; }
    if (!key || key.length !== 32) {
      return fail("The link's key for your encrypted notes is damaged: ask the bot for a new link.");
    }
    slot = new e2ee.DmSlotClient({
      agent: session.agent, thread: session.channel, slotKey: key,
      request: e2ee.slotRoute("", session.agent, { "Remem-Pad": "1" }),
    });
    $("slot").hidden = false;
    $("empty").textContent = "No note about you is stored in the clear.";
    $("slot-form").addEventListener("submit", addToSlot);
    await slotRun(() => slot.load());
  }

  async function slotRun(change, done) {
    try {
      await change();
    } catch (e) {
      fail("Your encrypted notes: " + (e && e.message ? e.message : "that did not work"));
      return false;
    }
    renderSlot();
    if (done) say(done);
    return true;
  }

  function renderSlot() {
    const list = $("slot-facts");
    list.replaceChildren();
    slot.facts.forEach((fact, i) => {
      const textId = "slot-fact-" + i;
      const item = el("li", { class: "note", "data-fact": String(i) },
                      el("p", { class: "note-text", id: textId, text: fact }));
      const forget = el("button", { type: "button", "aria-describedby": textId, text: "Forget" });
      forget.addEventListener("click", async () => {
        if (await slotRun(() => slot.forget(fact), 'Forgotten (encrypted): "' + fact + '".')) {
          const next = list.querySelector("button") || $("slot-text");
          next.focus();
        }
      });
      item.appendChild(el("div", { class: "note-actions" }, forget));
      list.appendChild(item);
    });
    $("slot-empty").hidden = slot.facts.length > 0;
  }

  async function addToSlot(event) {
    event.preventDefault();
    const text = $("slot-text").value.trim();
    if (!text) return;
    if (await slotRun(() => slot.remember(text), 'Added (encrypted): "' + text + '".')) {
      $("slot-text").value = "";
    }
  }

  // -- loading and rendering -------------------------------------------------------------

  async function fetchNotes() {
    const about = [["user", session.member], ["channel", session.channel]];
    const out = [];
    for (const [scope, id] of about) {
      const query = "?scope=" + scope + "&scope_id=" + encodeURIComponent(id) + "&status=all";
      const answer = await api("GET", agentPath("/notes" + query));
      if (answer.status !== 200) throw answer;
      out.push(...answer.data);
    }
    return out.filter((n) => VISIBLE.has(n.status));
  }

  async function reload() {
    try {
      const list = await fetchNotes();
      notes = new Map(list.map((n) => [n.id, n]));
      render();
    } catch (answer) {
      handleError(answer);
    }
  }

  // Only the notes that changed are rebuilt, so focus, an open edit and the reading
  // position survive the reloads live updates cause.
  function render() {
    const list = $("notes");
    const keep = editing && notes.has(editing) ? editing : null;
    const active = document.activeElement;
    const focusedNote = active && active.closest ? active.closest("[data-note]") : null;
    const focused = focusedNote ? { id: focusedNote.dataset.note, action: active.dataset.action,
                                    area: active.tagName === "TEXTAREA" } : null;
    // An open edit keeps what the member typed and the version they started from, so a
    // change arriving meanwhile makes their save a 409 instead of a silent overwrite.
    const open = keep ? list.querySelector("form.edit") : null;
    const area = open ? open.querySelector("textarea") : null;
    const typed = area ? { value: area.value, version: open.dataset.version,
                           start: area.selectionStart, end: area.selectionEnd } : null;
    const old = new Map([...list.children].map((li) => [li.dataset.note, li]));
    const wanted = [];
    for (const note of notes.values()) {
      let li = old.get(note.id);
      const stale = !li || li.dataset.version !== String(note.version) ||
        (note.id === keep) !== !!li.querySelector("form.edit");
      if (stale) li = noteItem(note, note.id === keep);
      wanted.push(li);
    }
    const kept = new Set(wanted);
    for (const li of [...list.children]) if (!kept.has(li)) li.remove();
    let cursor = list.firstElementChild;
    for (const li of wanted) {
      if (li === cursor) cursor = cursor.nextElementSibling;
      else list.insertBefore(li, cursor);
    }
    const form = keep ? list.querySelector("form.edit") : null;
    if (typed && form && form !== open) {
      const box = form.querySelector("textarea");
      box.value = typed.value;
      form.dataset.version = typed.version;
      box.setSelectionRange(typed.start, typed.end);
    }
    if (focused && !list.contains(document.activeElement) && notes.has(focused.id)) {
      if (focused.area && form) form.querySelector("textarea").focus();
      else if (focused.action) focusNote(focused.id, focused.action);
    }
    $("empty").hidden = notes.size > 0;
  }

  function when(note) {
    const at = note.said_at || note.created_at;
    try { return new Date(at).toLocaleString(); } catch (e) { return at; }
  }

  function noteItem(note, withEditor) {
    const textId = "text-" + note.id;
    const item = el("li", { class: "note" + (note.status === "disabled" ? " disabled" : ""),
                            id: "note-" + note.id, "data-note": note.id,
                            "data-version": String(note.version) });
    item.appendChild(el("p", { class: "note-text", id: textId, text: note.text }));
    const meta = el("ul", { class: "note-meta", "aria-label": "Details" });
    const where = note.source && note.source.channel_id ? note.source.channel_id : "unknown";
    for (const [label, value, cls] of [
      ["Kind", note.kind, ""], ["Basis", note.basis, ""],
      ["Status", note.status, " status-" + note.status],
      ["Scope", SCOPE_LABEL[note.scope] || note.scope, ""],
      ["Learned in", where, ""], ["When", when(note), ""],
    ]) {
      meta.appendChild(el("li", { class: "tag" + cls, text: label + ": " + value }));
    }
    item.appendChild(meta);
    const actions = el("div", { class: "note-actions" });
    const button = (label, action) => {
      const b = el("button", { type: "button", "data-action": action, "aria-describedby": textId,
                                text: label });
      b.addEventListener("click", () => act(action, note.id));
      actions.appendChild(b);
    };
    if (note.status === "pending" || note.status === "unverified") {
      button("Accept", "approve");
      button("Reject", "reject");
    }
    button("Edit", "edit");
    if (note.status === "disabled") button("Enable", "enable");
    else if (note.status === "active") button("Disable", "disable");
    button("Forget", "forget");
    item.appendChild(actions);
    if (withEditor) item.appendChild(editor(note));
    return item;
  }

  function editor(note, conflict) {
    const form = el("form", { class: "edit", "data-version": String(note.version) });
    const id = "edit-" + note.id;
    if (conflict) form.appendChild(conflict);
    form.appendChild(el("label", { for: id, text: "Correct this note" }));
    const area = el("textarea", { id, rows: "2", maxlength: "500", required: "" });
    area.value = note.text;
    form.appendChild(area);
    form.appendChild(el("button", { type: "submit", text: "Save" }));
    const cancel = el("button", { type: "button", text: "Cancel" });
    cancel.addEventListener("click", () => { editing = null; render(); focusNote(note.id, "edit"); });
    form.appendChild(cancel);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      save(note.id, area.value, Number(form.dataset.version));
    });
    return form;
  }

  function focusNote(id, action) {
    const b = document.querySelector('[data-note="' + CSS.escape(id) + '"] [data-action="' +
                                     action + '"]');
    if (b) b.focus();
  }

  // -- actions ---------------------------------------------------------------------------

  async function act(action, id) {
    const note = notes.get(id);
    if (!note) return;
    if (action === "edit") {
      editing = id;
      render();
      $("edit-" + id).focus();
      return;
    }
    const ifMatch = { "If-Match": '"' + note.version + '"' };
    const path = {
      forget: ["DELETE", "/notes/" + id, ifMatch],
      disable: ["POST", "/notes/" + id + "/disable", ifMatch],
      enable: ["POST", "/notes/" + id + "/enable", ifMatch],
      approve: ["POST", "/pending/" + id + "/approve", {}],
      reject: ["POST", "/pending/" + id + "/reject", {}],
    }[action];
    const answer = await api(path[0], agentPath(path[1]), undefined, path[2]);
    if (answer.status === 409) return conflicted(id, note.text, answer.data);
    if (answer.status !== 200) return handleError(answer);
    const done = { forget: "Forgotten", disable: "Disabled", enable: "Enabled",
                   approve: "Accepted", reject: "Rejected" }[action];
    say(done + ': "' + note.text + '".');
    const ids = [...notes.keys()];
    await reload();
    if (notes.has(id)) focusNote(id, action === "disable" ? "enable" :
                                     action === "enable" ? "disable" : "edit");
    else focusAfterRemoval(ids, id);
  }

  function focusAfterRemoval(ids, id) {
    const at = ids.indexOf(id);
    const next = ids.slice(at + 1).concat(ids.slice(0, at).reverse()).find((n) => notes.has(n));
    if (next) focusNote(next, "edit");
    else $("notes-heading").focus();
  }

  async function save(id, text, version) {
    const before = notes.get(id);
    const answer = await api("POST", agentPath("/notes/" + id + "/correct"), { text },
                             { "If-Match": '"' + version + '"' });
    if (answer.status === 409) return conflicted(id, text, answer.data, true);
    if (answer.status !== 200) return handleError(answer);
    editing = null;
    say('Corrected: "' + answer.data.text + '" (was "' + (before ? before.text : "") + '").');
    await reload();
    focusNote(id, "edit");
  }

  // Someone else (the bot, another tab) changed the note first: show what it says now.
  async function conflicted(id, mine, data, wasEdit) {
    let current = data && noteJson(data.current);
    if (!current) {
      const answer = await api("GET", agentPath("/notes/" + id));
      current = answer.status === 200 ? answer.data : null;
    }
    await reload();
    if (!current || !notes.has(id)) {
      editing = null;
      render();
      fail("This note changed before your change arrived: it is no longer there. Nothing was saved.");
      $("notes-heading").focus();
      return;
    }
    const now = "This note changed before your change arrived. It now says: \u201c" +
      current.text + "\u201d (status " + current.status + "). ";
    if (!wasEdit) {
      fail(now + "Nothing was changed: try again if you still want to.");
      focusNote(id, "edit");
      return;
    }
    // The member's words stay in the editor, now at the current version: saving again
    // replaces the new text knowingly; cancelling keeps it.
    $("alert").textContent = "";
    editing = id;
    render();
    const box = el("p", { class: "conflict", role: "alert",
                          text: now + "Your version below was not saved: save it to replace " +
                                "the new text, or cancel to keep it." });
    const item = $("note-" + id);
    const form = editor(notes.get(id), box);
    item.replaceChild(form, item.querySelector("form.edit"));
    $("edit-" + id).value = mine;
    $("edit-" + id).focus();
  }

  async function add(event) {
    event.preventDefault();
    const text = $("add-text").value.trim();
    if (!text) return;
    const body = { text, scope: "user", kind: $("add-kind").value };
    const answer = await api("POST", agentPath("/notes"), body);
    if (answer.status !== 201) return handleError(answer);
    $("add-text").value = "";
    say('Added: "' + answer.data.text + '"' +
        (answer.data.status === "pending" ? " (awaiting review)." : "."));
    await reload();
  }

  async function eraseAll() {
    const answer = await api("POST", agentPath("/command"),
                             { text: "forget everything about me" });
    $("erase-confirm").hidden = true;
    if (answer.status !== 200 || !answer.data) return handleError(answer);
    await reload();
    let also = "";
    if (slot && slot.facts.length) {  // everything includes the encrypted notes
      const count = slot.facts.length;
      if (await slotRun(() => slot.update((facts) => (facts.length ? [] : null)))) {
        also = " Your " + count + " encrypted notes are forgotten too.";
      }
    }
    say(answer.data.text + " " + (answer.data.notices || []).join(" ") + also);
    $("erase-start").focus();
  }

  async function lastUsed() {
    const answer = await api("POST", agentPath("/command"),
                             { text: "which memories did you use for that answer" });
    const box = $("used");
    box.replaceChildren();
    if (answer.status !== 200 || !answer.data) return handleError(answer);
    const used = answer.data.notes || [];
    if (!used.length) {
      box.appendChild(el("p", { text: answer.data.text }));
      return;
    }
    box.appendChild(el("p", { text: "For its last reply to you the agent used:" }));
    const list = el("ul");
    for (const n of used) list.appendChild(el("li", { text: n.text }));
    box.appendChild(list);
  }

  // -- choices ---------------------------------------------------------------------------

  async function loadChoices() {
    const answer = await api("GET", agentPath("/policy"));
    if (answer.status !== 200) return;
    const values = answer.data.values || {};
    const mine = (key, fallback) => (values[key] ? values[key].value !== false : fallback);
    const cross = values.cross_channel_user_recall;
    $("pref-inferred").checked = mine("my_inferred", true);
    $("pref-cross").checked = mine("my_cross_channel",
                                   !!cross && cross.value !== "opt_in" && cross.value !== false);
  }

  async function choose(key, box) {
    const answer = await api("PATCH", agentPath("/preferences"), { [key]: box.checked });
    if (answer.status !== 200) {
      box.checked = !box.checked;
      return handleError(answer);
    }
    say("Saved: " + box.labels[0].textContent + (box.checked ? ": on." : ": off."));
  }

  // -- live updates ----------------------------------------------------------------------

  function listen() {
    if (!window.EventSource) return Promise.resolve();
    const source = new EventSource(agentPath("/events"));
    const changed = () => {
      clearTimeout(reloadTimer);
      reloadTimer = setTimeout(() => {
        loadChoices();
        reload();
      }, 150);
    };
    source.addEventListener("note.changed", changed);
    source.addEventListener("agent.changed", changed);
    return new Promise((resolve) => {
      source.addEventListener("open", resolve, { once: true });
      source.addEventListener("error", resolve, { once: true });
      setTimeout(resolve, 3000); // the page works without live updates too
    });
  }

  function handleError(answer) {
    if (answer && answer.status === 401) {
      $("app").hidden = true;
      $("signed-out").hidden = false;
      fail("Your session has ended. Ask the bot for a new link with /memory.");
      return;
    }
    const message = answer && answer.data && answer.data.message;
    fail(message ? "That did not work: " + message : "That did not work. Try again.");
  }

  function bind() {
    $("add-form").addEventListener("submit", add);
    $("pref-inferred").addEventListener("change", (e) => choose("inferred", e.target));
    $("pref-cross").addEventListener("change", (e) => choose("cross_channel", e.target));
    $("used-button").addEventListener("click", lastUsed);
    $("erase-start").addEventListener("click", () => {
      $("erase-confirm").hidden = false;
      $("erase-no").focus();
    });
    $("erase-no").addEventListener("click", () => {
      $("erase-confirm").hidden = true;
      $("erase-start").focus();
    });
    $("erase-yes").addEventListener("click", eraseAll);
    $("sign-out").addEventListener("click", async () => {
      await api("DELETE", "/pad/session");
      $("app").hidden = true;
      $("signed-out").hidden = false;
      say("Signed out.");
    });
  }

  document.addEventListener("DOMContentLoaded", start);
})();
