// medlink's web page: paste text or mentions, see the linked spans, click one for its candidates and its KB record.
// Plain JavaScript, no build step; every value from the server is put in the page as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { mode: "text", payload: null, items: [], nilDefault: null, infoLoaded: false, nilMoved: false, busy: false };
const EXTENSIONS = { jsonl: "jsonl", pubtator: "pubtator.txt", bioc: "bioc.xml" };

function headers() {
  const out = { "Content-Type": "application/json" };
  const key = $("api-key").value || sessionStorage.getItem("medlink-key");
  if (key) out.Authorization = "Bearer " + key;
  return out;
}

async function call(method, path, body) {
  const response = await fetch(path, { method, headers: headers(), body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401) {
    $("key-row").hidden = false;
    throw new Error("this service needs an API key: enter it above, then Link again");
  }
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail; } catch (ignored) { /* not JSON */ }
    throw new Error(`${response.status}: ${detail}`);
  }
  return response;
}

function status(message, isError) {
  $("status").textContent = message;
  $("status").className = isError ? "error" : "quiet";
}

function setSlider(value) {
  $("nil").value = value;
  $("nil-value").textContent = Number(value).toFixed(2);
}

// The slider's value is sent only once it means something: the index's own threshold (from /info) or one the user chose;
// before that (an API key not yet given, so /info refused) the server decides with the index's own.
function threshold() {
  if ($("nil").disabled || !(state.infoLoaded || state.nilMoved)) return {};
  return { nil_threshold: Number($("nil").value) };
}

async function loadInfo() {
  try {
    const info = await (await call("GET", "/info")).json();
    state.nilDefault = info.nil_threshold;
    state.infoLoaded = true;
    $("index-info").textContent = `index ${info.index.split("/").filter(Boolean).pop()} · ${info.kb.concepts.toLocaleString()} concepts · medlink ${info.medlink_version}`
      + (info.calibrated ? "" : " · no probabilities, so no NIL threshold");
    if (info.nil_threshold === null) {
      $("nil").disabled = true;
      $("nil-reset").disabled = true;
    } else {
      if (!state.nilMoved) setSlider(info.nil_threshold);
    }
  } catch (error) {
    $("index-info").textContent = error.message;
  }
}

function request(extra) {
  const text = $("input").value;
  if (state.mode === "text") return ["/annotate", { text, explain: true, ...threshold(), ...extra }];
  const mentions = text.split("\n").map((line) => line.trim()).filter(Boolean);
  return ["/link", { mentions, explain: true, ...threshold(), ...extra }];
}

async function run() {
  const [path, body] = request({});
  if (state.mode === "mentions" && body.mentions.length === 0) return status("no mentions: write one per line", true);
  const key = $("api-key").value;
  if (key) sessionStorage.setItem("medlink-key", key);
  if (!state.infoLoaded) await loadInfo(); // refused before the key was given: the index's threshold, then the request
  status("linking…");
  const started = performance.now();
  try {
    state.payload = await (await call("POST", path, body)).json();
    state.shown = state.mode;
    render();
    status(`${summary()} · ${Math.round(performance.now() - started)} ms`);
  } catch (error) {
    status(error.message, true);
  }
}

function summary() {
  const items = state.items;
  const nil = items.filter(isNil).length;
  return `${items.length} ${state.shown === "text" ? "span(s)" : "mention(s)"}, ${items.length - nil} linked, ${nil} NIL`;
}

function isNil(item) {
  if (item.ids !== undefined) return item.ids.length === 0; // a span: linked when it has ids
  return item.nil === true || Boolean(item.error) || item.candidates.length === 0;
}

function classes(item) {
  const infons = item.infons || {};
  const out = ["span", "status-" + (infons.assertion || "present")];
  if (infons.historical === "true") out.push("historical");
  if (isNil(item)) out.push("nil");
  return out.join(" ");
}

function render() {
  const out = $("result");
  out.replaceChildren();
  state.items = [];
  $("panel").hidden = true;
  if (state.shown === "text") state.payload.forEach((document) => renderDocument(out, document));
  else state.payload.forEach((result) => renderMention(out, result));
  for (const button of document.querySelectorAll("#downloads button")) {
    button.disabled = state.shown !== "text" && button.dataset.format !== "jsonl";
  }
}

function renderDocument(out, doc) {
  const chars = Array.from(doc.text !== undefined ? doc.text : fromPassages(doc.passages)); // offsets count code points
  const spans = [...doc.annotations].sort((a, b) => a.start - b.start || b.end - a.end);
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue; // an alternative over text already shown
    out.append(chars.slice(at, span.start).join(""), mark(span, chars.slice(span.start, span.end).join("")));
    at = span.end;
  }
  out.append(chars.slice(at).join(""), "\n");
}

function fromPassages(passages) {
  let text = "";
  for (const passage of passages) text = text.padEnd(passage.offset, " ") + passage.text;
  return text;
}

function renderMention(out, result) {
  const row = document.createElement("div");
  row.className = "mention-row";
  const best = document.createElement("span");
  best.className = "best";
  const first = result.candidates[0];
  best.textContent = isNil(result) ? (result.error ? `not linked: ${result.error}` : "NIL") : `${first.id} ${first.name || ""}`;
  row.append(mark(result, result.mention), best);
  out.append(row);
}

function mark(item, label) {
  const element = document.createElement("mark");
  element.className = classes(item);
  element.textContent = label;
  element.tabIndex = 0;
  element.dataset.item = String(state.items.push(item) - 1);
  element.title = item.why || "";
  element.addEventListener("click", () => select(element));
  element.addEventListener("keydown", (event) => { if (event.key === "Enter") select(element); });
  return element;
}

function select(element) {
  document.querySelectorAll("mark.selected").forEach((other) => other.classList.remove("selected"));
  element.classList.add("selected");
  const item = state.items[Number(element.dataset.item)];
  $("panel").hidden = false;
  $("panel-title").textContent = item.text !== undefined ? item.text : item.mention;
  $("panel-why").textContent = item.why || (item.error ? `not linked: ${item.error}` : "");
  const rows = (item.candidates || []).map((candidate, rank) => candidateRow(candidate, rank));
  $("candidates").tBodies[0].replaceChildren(...rows);
  $("panel-lines").replaceChildren(...(item.explanation || []).slice(1).map((line) => listItem(line.trim())));
  $("record").replaceChildren();
  if (rows.length) rows[0].click();
}

function candidateRow(candidate, rank) {
  const row = document.createElement("tr");
  const probability = candidate.probability === undefined ? "–" : candidate.probability.toFixed(3);
  for (const value of [String(rank + 1), `${candidate.id} ${candidate.name || ""}`, probability, candidate.matched || ""]) {
    const cell = document.createElement("td");
    cell.textContent = value;
    row.append(cell);
  }
  row.addEventListener("click", () => {
    row.parentElement.querySelectorAll("tr").forEach((other) => other.classList.remove("chosen"));
    row.classList.add("chosen");
    showRecord(candidate.id);
  });
  return row;
}

function listItem(text) {
  const item = document.createElement("li");
  item.textContent = text;
  return item;
}

async function showRecord(id) {
  const box = $("record");
  box.replaceChildren(listItem("loading the KB record…"));
  try {
    const concept = await (await call("GET", "/concepts/" + encodeURIComponent(id))).json();
    const facts = document.createElement("dl");
    const named = (list) => list.map((entry) => `${entry.id} ${entry.name || ""}`).join("; ");
    for (const [term, value] of [
      ["Concept", `${concept.id} ${concept.name}`],
      ["Definition", concept.definition || ""],
      ["Synonyms", concept.synonyms.slice(0, 12).map((s) => s.text).join("; ")],
      ["Types", concept.types.join("; ")],
      ["Parents", named(concept.parents)],
      ["Relations", concept.relations.map((r) => `${r.relation} ${r.id} ${r.name || ""}`).join("; ")],
      ["Cross-references", concept.xrefs.join(" ")],
      ["Alt ids", concept.alt_ids.join(" ")],
    ]) {
      if (!value) continue;
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = value;
      facts.append(dt, dd);
    }
    box.replaceChildren(facts);
  } catch (error) {
    box.replaceChildren(listItem(error.message));
  }
}

async function download(format) {
  if (state.shown !== "text") { // mentions: the link results as they are, one JSON object a line
    return save(state.payload.map((result) => JSON.stringify(result)).join("\n") + "\n", "medlink.link.jsonl");
  }
  const [path, body] = request({ output_format: format, explain: false });
  try {
    save(await (await call("POST", path, body)).text(), "medlink." + EXTENSIONS[format]);
  } catch (error) {
    status(error.message, true);
  }
}

function save(content, name) {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([content], { type: "text/plain" }));
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
}

document.querySelectorAll("input[name=mode]").forEach((radio) => radio.addEventListener("change", () => { state.mode = radio.value; }));
$("run").addEventListener("click", run);
$("nil").addEventListener("input", () => { state.nilMoved = true; setSlider($("nil").value); });
$("nil").addEventListener("change", () => { if (state.payload) run(); });
$("nil-reset").addEventListener("click", () => { if (state.nilDefault !== null) { setSlider(state.nilDefault); if (state.payload) run(); } });
document.querySelectorAll("#downloads button").forEach((button) => button.addEventListener("click", () => download(button.dataset.format)));
loadInfo();
