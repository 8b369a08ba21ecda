/**
 * Shared helpers: DOM building, formatting, the model and its lazy indexes. One part of the page
 * script of `niceeval view`; _client.ts joins the parts in order into one function scope.
 */
export const CORE: string = String.raw`
  var doc = document;
  var SVG_NS = svgNamespace();
  var PASSING = { passed: true, scored: true };
  var VERDICT_FILTERS = ["passed", "failed", "errored", "scored", "skipped", "interrupted", "none"];
  var STATES = ["fixed", "regressed", "still-failing", "still-passing", "new", "gone"];
  var STATE_RANK = { regressed: 0, fixed: 1, "still-failing": 2, "new": 3, gone: 4, "still-passing": 5 };
  var PAGE_SIZE = 500;
  var model = null;
  var loadError = null;

  // The data block holds the model's JSON, gzip-compressed and base64-encoded (see html.ts);
  // the browser inflates it locally, without any request.
  function readData() {
    var block = doc.getElementById("niceeval-data");
    var text = block ? block.textContent || "" : "";
    if (!block || block.getAttribute("data-encoding") !== "gzip+base64") return Promise.resolve(text);
    var binary = atob(text);
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  function svgNamespace() {
    // Constant markup only: the parser tells the namespace, so the page names no URI.
    var holder = doc.createElement("div");
    holder.innerHTML = "<svg></svg>";
    return holder.firstChild.namespaceURI;
  }

  function list(v) { return Array.isArray(v) ? v : []; }
  function obj(v) { return v !== null && typeof v === "object" && !Array.isArray(v) ? v : {}; }
  function num(v) { return typeof v === "number" && isFinite(v) ? v : null; }
  function str(v) { return typeof v === "string" ? v : v === null || v === undefined ? "" : String(v); }

  function normalize(m) {
    if (m === null || typeof m !== "object") throw new Error("the report holds no data");
    return {
      title: str(m.title),
      generatedAt: str(m.generatedAt),
      scope: str(m.scope),
      experiments: list(m.experiments),
      evals: list(m.evals),
      slots: list(m.slots),
      attempts: list(m.attempts),
      runs: list(m.runs),
      compare: m.compare && typeof m.compare === "object" ? m.compare : null,
      problems: list(m.problems)
    };
  }

  function setAttrs(el, attrs) {
    if (!attrs) return;
    var keys = Object.keys(attrs);
    for (var i = 0; i < keys.length; i++) {
      var v = attrs[keys[i]];
      if (v === null || v === undefined || v === false) continue;
      el.setAttribute(keys[i], v === true ? "" : String(v));
    }
  }
  function add(el, kids) {
    if (kids === null || kids === undefined || kids === false) return;
    if (Array.isArray(kids)) {
      for (var i = 0; i < kids.length; i++) add(el, kids[i]);
    } else if (typeof kids === "object") {
      el.appendChild(kids);
    } else {
      el.appendChild(doc.createTextNode(String(kids)));
    }
  }
  function h(tag, attrs, kids) {
    var el = doc.createElement(tag);
    setAttrs(el, attrs);
    add(el, kids);
    return el;
  }
  function svg(tag, attrs, kids) {
    var el = doc.createElementNS(SVG_NS, tag);
    setAttrs(el, attrs);
    add(el, kids);
    return el;
  }

  function pad2(n) { return n < 10 ? "0" + n : String(n); }
  function trimZeros(t) { return t.indexOf(".") >= 0 ? t.replace(/\.?0+$/, "") : t; }
  function fmtDuration(ms) {
    ms = num(ms);
    if (ms === null) return "—";
    ms = Math.max(0, ms);
    if (ms < 1000) return Math.round(ms) + "ms";
    var s = ms / 1000;
    if (s < 10) return (Math.floor(s * 10) / 10).toFixed(1) + "s";
    if (s < 60) return Math.floor(s) + "s";
    if (s < 3600) return Math.floor(s / 60) + "m " + pad2(Math.floor(s % 60)) + "s";
    return Math.floor(s / 3600) + "h " + pad2(Math.floor((s % 3600) / 60)) + "m";
  }
  function fmtCost(usd) {
    usd = num(usd);
    if (usd === null) return "—";
    if (usd === 0) return "$0";
    if (usd < 0.0001) return "<$0.0001";
    if (usd < 1) return "$" + usd.toFixed(4);
    if (usd < 100) return "$" + usd.toFixed(2);
    return "$" + Math.round(usd);
  }
  function fmtTokens(n) {
    n = num(n);
    if (n === null) return "—";
    if (n < 1000) return String(Math.round(n));
    if (n < 1000000) return trimZeros((n / 1000).toFixed(1)) + "k";
    return trimZeros((n / 1000000).toFixed(2)) + "M";
  }
  function fmtPct(x) {
    x = num(x);
    return x === null ? "—" : Math.round(x * 100) + "%";
  }
  function fmtScore(x) {
    x = num(x);
    return x === null ? "—" : trimZeros((Math.round(x * 100) / 100).toFixed(2));
  }
  function fmtTime(iso) {
    var m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:?\d\d)?$/.exec(str(iso));
    if (!m) return str(iso) || "—";
    return m[1] + " " + m[2] + (m[3] === "Z" ? " UTC" : m[3] ? " " + m[3] : "");
  }
  function timeEl(iso, brief) {
    if (!iso) return "—";
    var text = fmtTime(iso);
    // Brief: to the minute, for dense tables; the title keeps the exact time.
    if (brief && /^\d{4}-\d\d-\d\d \d\d:\d\d/.test(text)) text = text.slice(0, 16);
    return h("time", { datetime: iso, title: iso }, text);
  }
  function msBetween(a, b) {
    var x = Date.parse(str(a));
    var y = Date.parse(str(b));
    return isFinite(x) && isFinite(y) ? y - x : null;
  }
  function toJson(v) {
    if (typeof v === "string") return v;
    try {
      var t = JSON.stringify(v, null, 2);
      return t === undefined ? String(v) : t;
    } catch (e) {
      return String(v);
    }
  }
  function plural(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
  function short(id) { id = str(id); return id.length > 12 ? id.slice(0, 8) : id; }
  function clip(text, max) { text = str(text); return text.length > max ? text.slice(0, max - 1) + "…" : text; }

  function verdictClass(v) {
    return /^(passed|failed|errored|scored|skipped|interrupted|none|mixed|absent)$/.test(v) ? v : "other";
  }
  function verdictWord(v) {
    return v === "none" ? "not run" : v === "absent" ? "" : str(v) || "unknown";
  }
  function badge(verdict, text, attrs) {
    var a = attrs || {};
    a["class"] = "badge v-" + verdictClass(verdict) + (a["class"] ? " " + a["class"] : "");
    return h("span", a, text === undefined ? verdictWord(verdict) : text);
  }
  function section(id, title, kids) {
    return h("section", { id: id, "aria-labelledby": id + "-h" }, [h("h2", { id: id + "-h" }, title), kids]);
  }
  function scroll(table) { return h("div", { "class": "scroll" }, table); }
  function headRow(cols) {
    return h("thead", null, h("tr", null, cols.map(function (c) {
      return h("th", { scope: "col", "class": c.num ? "num" : null }, c.text !== undefined ? c.text : c);
    })));
  }
  function kv(pairs) {
    var dl = h("dl", { "class": "kv" });
    for (var i = 0; i < pairs.length; i++) {
      if (pairs[i][1] === null || pairs[i][1] === undefined || pairs[i][1] === "") continue;
      dl.appendChild(h("div", null, [h("dt", null, pairs[i][0]), h("dd", null, pairs[i][1])]));
    }
    return dl;
  }
  function pre(text, cls) { return h("pre", { "class": cls || null }, text); }
  function empty(text) { return h("p", { "class": "empty" }, text); }

  var locatorIndex = null;
  function attemptByLocator(locator) {
    if (locatorIndex === null) {
      locatorIndex = new Map();
      for (var i = 0; i < model.attempts.length; i++) locatorIndex.set(str(model.attempts[i].locator), model.attempts[i]);
    }
    return locatorIndex.get(locator) || null;
  }
  var runIndex = null;
  function runById(runId) {
    if (runIndex === null) {
      runIndex = new Map();
      for (var i = 0; i < model.runs.length; i++) runIndex.set(model.runs[i].runId, model.runs[i]);
    }
    return runIndex.get(runId) || null;
  }
  function attemptOf(slot) {
    var i = num(slot.attempt);
    return i === null ? null : model.attempts[i] || null;
  }
  function attemptHref(locator) { return "#/attempt/" + encodeURIComponent(str(locator)); }
`;
