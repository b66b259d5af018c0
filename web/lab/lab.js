// The format lab: loads parley's WebAssembly (lab/wasm) and the tokenizer vocabularies
// from this server, then runs everything in the page. Nothing typed here is sent anywhere.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const status = $("lab-status");
  const encodings = ["o200k_base", "cl100k_base"];
  let lab = null;
  let analysis = null;

  function say(text, ok) {
    status.textContent = text;
    status.classList.toggle("on", !!ok);
  }

  function call(fn, ...args) {
    const out = JSON.parse(lab[fn](...args));
    if (out && out.error) throw new Error(out.error);
    return out;
  }

  async function fetchBytes(url) {
    const r = await fetch(url);
    if (!r.ok) throw new Error(url + ": HTTP " + r.status);
    return new Uint8Array(await r.arrayBuffer());
  }

  async function start() {
    const t0 = performance.now();
    const go = new Go();
    const ready = new Promise((resolve) => { window.parleyLabReady = resolve; });
    const wasm = fetch("/lab/lab.wasm");
    const vocabs = encodings.map((e) => fetchBytes("/lab/vocab/" + e));
    let inst;
    try {
      inst = await WebAssembly.instantiateStreaming(wasm, go.importObject);
    } catch (e) {
      // A server or proxy that does not say application/wasm: compile from the bytes.
      const r = await fetch("/lab/lab.wasm");
      inst = await WebAssembly.instantiate(await r.arrayBuffer(), go.importObject);
    }
    const tWasm = performance.now();
    go.run(inst.instance);
    await ready;
    lab = window.parleyLab;
    const bytes = await Promise.all(vocabs);
    const tVocab = performance.now();
    encodings.forEach((e, i) => call("supply", e, bytes[i]));
    const ms = Math.round(performance.now() - t0);
    document.body.dataset.labTimings = "wasm fetched and compiled " + Math.round(tWasm - t0) +
      " ms, vocabularies fetched by " + Math.round(tVocab - t0) + " ms, loaded in " + Math.round(performance.now() - tVocab) + " ms";
    document.body.dataset.labLoadMs = String(ms);
    document.body.dataset.labReady = "1";
    say("Ready (loaded in " + ms + " ms). Everything runs in this page.", true);
    $("lab-analyze").disabled = false;
    lintNow();
  }

  // --- Trace → a2c -------------------------------------------------------------------

  const fileName = { value: "" };

  function fmt(n) { return Number(n).toLocaleString("en-US"); }
  function pct(x) { return (100 * x).toFixed(1) + "%"; }

  function analyze() {
    const err = $("lab-error");
    err.hidden = true;
    const text = $("lab-trace").value;
    say("Analyzing…");
    // Let the status paint before the (synchronous) work.
    setTimeout(() => {
      const t0 = performance.now();
      try {
        analysis = call("analyze", text, $("lab-adapter").value, fileName.value);
      } catch (e) {
        analysis = null;
        $("lab-result").hidden = true;
        err.textContent = e.message;
        err.hidden = false;
        say("Ready.", true);
        document.body.dataset.labAnalyzed = String(Date.now());
        return;
      }
      window.parleyLabAnalysis = analysis;
      showAnalysis();
      say("Analyzed in " + Math.round(performance.now() - t0) + " ms.", true);
      document.body.dataset.labAnalyzed = String(Date.now());
    }, 20);
  }

  function row(tbody, label, key, cell) {
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.scope = "row";
    th.textContent = label;
    tr.appendChild(th);
    analysis.figures.forEach((f) => {
      const td = document.createElement("td");
      const c = cell(f);
      td.textContent = c.text;
      if (c.value !== undefined) {
        td.dataset.figure = key;
        td.dataset.encoding = f.encoding;
        td.dataset.value = String(c.value);
      }
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  }

  function showAnalysis() {
    const a = analysis;
    const f0 = a.figures[0];
    $("lab-summary").textContent = "Read as " + a.adapter + (a.detected ? " (detected)" : "") + ": " +
      f0.sessions + (f0.sessions === 1 ? " session, " : " sessions, ") + f0.handoffs + " records." +
      (f0.dictionary_folds ? " Dictionary learned by " + f0.dictionary_folds + "-fold cross-validation, as the CLI does by default." : "");
    const tbody = $("lab-figures").querySelector("tbody");
    tbody.replaceChildren();
    const num = (k) => (f) => ({ text: fmt(f[k]), value: f[k] });
    row(tbody, "raw canonical JSON", "raw_tokens", num("raw_tokens"));
    row(tbody, "a2c payload", "payload_tokens", num("payload_tokens"));
    row(tbody, "decode instructions", "instruction_tokens", num("instruction_tokens"));
    row(tbody, "dictionary", "dictionary_tokens", num("dictionary_tokens"));
    row(tbody, "full cost", "full_cost_tokens", (f) => ({ text: fmt(f.full_cost_tokens) + " (saving " + pct(f.saving) + ")", value: f.full_cost_tokens }));
    for (const b of ["minified_json", "pretty_json", "toon"]) {
      row(tbody, b.replace("_", " "), "baseline:" + b, (f) => {
        const r = f.baselines[b];
        if (!r || r.error) return { text: "skipped: " + (r ? r.error : "none") };
        return { text: fmt(r.tokens) + " (a2c saves " + pct(r.saving) + ")", value: r.tokens };
      });
    }
    row(tbody, "median break-even", "median_break_even", (f) => ({
      text: f.median_break_even === null ? "never" : f.median_break_even + " handoffs",
      value: f.median_break_even === null ? "never" : f.median_break_even,
    }));
    row(tbody, "round trip", "lossless", (f) => ({
      text: f.lossless ? "byte-exact on every record" : "LOSSY: " + f.lossy_records + " records differ",
      value: f.lossless ? "true" : "false",
    }));
    const sel = $("lab-session");
    sel.replaceChildren(...a.sessions.map((s, i) => {
      const o = document.createElement("option");
      o.value = String(i);
      o.textContent = s.id + " (" + s.records + " records)";
      return o;
    }));
    $("lab-result").hidden = false;
    showSession();
  }

  function showSession() {
    if (!analysis) return;
    const s = analysis.sessions[Number($("lab-session").value) || 0];
    const enc = $("lab-encoding").value;
    const e = s.a2c[enc];
    $("lab-canonical").textContent = s.canonical;
    $("lab-payload").textContent = e.payload;
    $("lab-instructions").textContent = e.instructions;
    $("lab-minified").textContent = s.minified_json;
    $("lab-toon").textContent = s.toon_error ? "skipped: " + s.toon_error : s.toon;
    const counts = { canonical: e.canonical_tokens, payload: e.payload_tokens, instructions: e.instruction_tokens, minified: e.minified_json_tokens, toon: e.toon_tokens };
    for (const [k, v] of Object.entries(counts)) {
      document.querySelector('[data-count="' + k + '"]').textContent = "· " + fmt(v) + " " + enc + " tokens";
    }
    const rt = $("lab-roundtrip");
    rt.textContent = e.lossless ? "round trip: " + s.records + "/" + s.records + " records byte for byte" :
      "round trip FAILED: " + e.bad_records + " records differ" + (e.error ? " (" + e.error + ")" : "");
    rt.classList.toggle("bad", !e.lossless);
  }

  // --- Message → lint ------------------------------------------------------------------

  let lintTimer = 0;
  function lintSoon() {
    clearTimeout(lintTimer);
    lintTimer = setTimeout(lintNow, 200);
  }

  function lintNow() {
    if (!lab) return;
    const text = $("lab-message").value;
    const list = $("lab-diagnostics");
    if (text.trim() === "") {
      list.replaceChildren();
      $("lab-lint-format").textContent = "";
      list.dataset.linted = text;
      return;
    }
    let res;
    try {
      res = call("lint", text);
    } catch (e) {
      list.replaceChildren(Object.assign(document.createElement("li"), { textContent: e.message }));
      return;
    }
    $("lab-lint-format").textContent = "Read as " + res.format + ": " +
      (res.diagnostics.length === 0 ? "no findings." : res.diagnostics.length + (res.diagnostics.length === 1 ? " finding." : " findings."));
    list.replaceChildren(...res.diagnostics.map((d) => {
      const li = document.createElement("li");
      li.className = "diag " + d.severity;
      li.dataset.code = d.code;
      const where = document.createElement("span");
      where.className = "where";
      where.textContent = d.line + ":" + d.col;
      const sev = document.createElement("strong");
      sev.textContent = d.severity;
      const msg = document.createElement("span");
      msg.textContent = " " + d.message + " ";
      const code = document.createElement("code");
      code.textContent = d.code;
      li.append(where, " ", sev, msg, code);
      if (d.fix) {
        const fix = document.createElement("div");
        fix.className = "fix";
        fix.textContent = "fix: " + d.fix;
        li.appendChild(fix);
      }
      return li;
    }));
    list.dataset.linted = text;
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("lab-analyze").addEventListener("click", analyze);
    $("lab-session").addEventListener("change", showSession);
    $("lab-encoding").addEventListener("change", showSession);
    $("lab-message").addEventListener("input", lintSoon);
    $("lab-trace").addEventListener("input", () => { fileName.value = ""; });
    $("lab-file").addEventListener("change", async (ev) => {
      const f = ev.target.files[0];
      if (!f) return;
      $("lab-trace").value = await f.text();
      fileName.value = f.name;
      analyze();
    });
    start().catch((e) => {
      say("The lab did not load: " + e.message + ". Reload the page; if it persists, the server's build lacks the lab.");
      status.classList.add("error");
    });
  });
})();
