/**
 * The matrix page: filters, sorting and paging over a lazily built index. One part of the page
 * script of `niceeval view`; _client.ts joins the parts in order into one function scope.
 */
export const MATRIX: string = String.raw`
  var mx = null;
  var mxState = { text: "", tag: "", verdict: "", sortCol: null, sortDir: 1, shown: PAGE_SIZE, scrollY: 0 };

  function matrixIndex() {
    if (mx) return mx;
    var exps = model.experiments;
    var expIdx = new Map();
    exps.forEach(function (e, i) { expIdx.set(e.id, i); });
    var rows = [];
    var byEval = new Map();
    var addRow = function (ev) {
      var r = { ev: ev, id: str(ev.id), key: str(ev.id).toLowerCase(), tags: list(ev.tags), i: rows.length, cells: new Array(exps.length), verdicts: {} };
      rows.push(r);
      byEval.set(r.id, r);
      return r;
    };
    model.evals.forEach(addRow);
    model.slots.forEach(function (slot) {
      var r = byEval.get(slot.evalId) || addRow({ id: slot.evalId, kind: "pass", tags: [], description: null });
      var j = expIdx.get(slot.experimentId);
      if (j === undefined) return;
      (r.cells[j] || (r.cells[j] = [])).push(slot);
      r.verdicts[slot.verdict || "none"] = true;
    });
    var tags = {};
    rows.forEach(function (r) {
      r.tags.forEach(function (t) { tags[t] = true; });
      r.sums = [];
      for (var j = 0; j < exps.length; j++) r.sums.push(summarize(r.cells[j]));
    });
    mx = { rows: rows, tags: Object.keys(tags).sort() };
    return mx;
  }

  function summarize(slots) {
    if (!slots || !slots.length) return { verdict: "absent", rate: -1 };
    slots.sort(function (a, b) { return (a.ordinal || 0) - (b.ordinal || 0); });
    var k = 0, seen = {}, kinds = [];
    slots.forEach(function (s) {
      var v = s.verdict || "none";
      if (PASSING[v]) k++;
      if (!seen[v]) { seen[v] = true; kinds.push(v); }
    });
    return { verdict: kinds.length === 1 ? kinds[0] : "mixed", rate: k / slots.length, k: k, n: slots.length };
  }

  function slotTitle(s, a) {
    var parts = ["#" + (s.ordinal || 0), a ? str(a.verdict) : "no Attempt (" + str(s.state) + (s.reason ? ", " + s.reason : "") + ")"];
    if (a && num(a.score) !== null) parts.push("score " + fmtScore(a.score));
    if (a) parts.push(fmtDuration(a.durationMs));
    return parts.join(" · ");
  }
  var GLYPH = { passed: "✓", failed: "✗", errored: "!", scored: "◆", skipped: "–", interrupted: "‖", none: "·" };

  function matrixCell(expId, slots, sum) {
    var td = h("td", { "data-experiment": expId, "data-verdict": sum.verdict, "class": "cell v-" + verdictClass(sum.verdict) });
    if (sum.verdict === "absent") {
      td.setAttribute("title", "not in this experiment");
      return td;
    }
    if (slots.length === 1) {
      var s = slots[0], a = attemptOf(s);
      var text = a && a.verdict === "scored" && num(a.score) !== null ? "scored " + fmtScore(a.score) : verdictWord(s.verdict || "none");
      if (a) td.appendChild(h("a", { href: attemptHref(a.locator), title: slotTitle(s, a) }, text));
      else td.appendChild(h("span", { title: slotTitle(s, null) }, text));
      return td;
    }
    td.appendChild(h("span", { "class": "tally", title: sum.k + " of " + sum.n + " passed or scored" }, sum.k + "/" + sum.n));
    var links = h("span", { "class": "runs" });
    slots.forEach(function (s) {
      var a = attemptOf(s), v = s.verdict || "none";
      var label = (GLYPH[v] || "?") + (s.ordinal || 0);
      var attrs = { "class": "mini v-" + verdictClass(v), title: slotTitle(s, a), "aria-label": "Attempt #" + (s.ordinal || 0) + ": " + verdictWord(v) };
      if (a) { attrs.href = attemptHref(a.locator); links.appendChild(h("a", attrs, label)); }
      else links.appendChild(h("span", attrs, label));
    });
    td.appendChild(links);
    return td;
  }

  function matrixRow(r) {
    var tr = h("tr", { "data-eval": r.id });
    var head = h("th", { scope: "row", "class": "eval" }, [h("span", { "class": "eid" }, r.id)]);
    if (r.ev.kind === "score") head.appendChild(h("span", { "class": "tag" }, "score"));
    r.tags.forEach(function (t) { head.appendChild(h("span", { "class": "tag" }, t)); });
    head.setAttribute("title", r.ev.description ? r.id + ": " + str(r.ev.description) : r.id);
    tr.appendChild(head);
    var exps = model.experiments;
    for (var j = 0; j < exps.length; j++) tr.appendChild(matrixCell(exps[j].id, r.cells[j], r.sums[j]));
    return tr;
  }

  function matrixRows() {
    var idx = matrixIndex(), st = mxState;
    var text = st.text.toLowerCase();
    var out = idx.rows.filter(function (r) {
      return (!text || r.key.indexOf(text) >= 0) && (!st.tag || r.tags.indexOf(st.tag) >= 0) && (!st.verdict || r.verdicts[st.verdict]);
    });
    if (st.sortCol !== null) {
      var col = st.sortCol, dir = st.sortDir;
      out.sort(function (a, b) {
        if (col === -1) return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * dir || a.i - b.i;
        var x = a.sums[col].rate, y = b.sums[col].rate;
        // An eval the experiment does not have sorts last either way.
        if (x < 0 || y < 0) return (x < 0 ? 1 : 0) - (y < 0 ? 1 : 0) || a.i - b.i;
        return (x - y) * dir || a.i - b.i;
      });
    }
    return out;
  }

  function pageMatrix(main) {
    var idx = matrixIndex(), st = mxState, exps = model.experiments;
    main.appendChild(h("h1", null, "Matrix"));
    var filter = h("input", { id: "matrix-filter", type: "search", "aria-label": "Filter evals", placeholder: "Filter evals…", value: st.text });
    var tag = h("select", { id: "matrix-tag", "aria-label": "Tag" }, [h("option", { value: "" }, "All tags")].concat(
      idx.tags.map(function (t) { return h("option", { value: t }, t); })));
    tag.value = st.tag;
    var verdict = h("select", { id: "matrix-verdict", "aria-label": "Verdict" }, [h("option", { value: "" }, "Any verdict")].concat(
      VERDICT_FILTERS.map(function (v) { return h("option", { value: v }, v === "none" ? "none (no Attempt)" : v); })));
    verdict.value = st.verdict;
    main.appendChild(h("div", { "class": "controls", role: "search" }, [
      h("label", null, [h("span", null, "Eval"), filter]),
      h("label", null, [h("span", null, "Tag"), tag]),
      h("label", null, [h("span", null, "Verdict"), verdict])
    ]));
    var count = h("p", { id: "matrix-count", "class": "meta", "aria-live": "polite" });
    main.appendChild(count);
    var headCells = [sortTh(-1, "Eval")];
    exps.forEach(function (e, j) { headCells.push(sortTh(j, e.id, e)); });
    var thead = h("thead", null, h("tr", null, headCells));
    var tbody = h("tbody");
    main.appendChild(scroll(h("table", { id: "matrix-table", "class": "data matrix" }, [thead, tbody])));
    var more = h("button", { id: "matrix-more", type: "button", "class": "more" }, "Show more");
    main.appendChild(more);
    var rows = [];
    var fill = function (reset) {
      if (reset) { tbody.textContent = ""; rows = matrixRows(); }
      var from = tbody.childElementCount, to = Math.min(rows.length, st.shown);
      var frag = doc.createDocumentFragment();
      for (var i = from; i < to; i++) frag.appendChild(matrixRow(rows[i]));
      tbody.appendChild(frag);
      count.textContent = "showing " + to + " of " + rows.length + " evals";
      more.hidden = to >= rows.length;
      if (!rows.length) tbody.appendChild(h("tr", null, h("td", { colspan: exps.length + 1, "class": "empty" }, "No eval matches.")));
    };
    var refilter = function () { st.shown = PAGE_SIZE; fill(true); };
    filter.addEventListener("input", function () { st.text = filter.value; refilter(); });
    tag.addEventListener("change", function () { st.tag = tag.value; refilter(); });
    verdict.addEventListener("change", function () { st.verdict = verdict.value; refilter(); });
    more.addEventListener("click", function () { st.shown += PAGE_SIZE; fill(false); });
    thead.addEventListener("click", function (ev) {
      var btn = ev.target.closest("button[data-col]");
      if (!btn) return;
      var col = Number(btn.getAttribute("data-col"));
      if (st.sortCol === col) st.sortDir = -st.sortDir; else { st.sortCol = col; st.sortDir = 1; }
      markSort(thead);
      refilter();
    });
    markSort(thead);
    fill(true);
  }

  function sortTh(col, text, exp) {
    var btn = h("button", { type: "button", "class": "sort", "data-col": col }, [
      h("span", { "class": "name" }, text), h("span", { "class": "arrow", "aria-hidden": "true" }, "↕")
    ]);
    if (exp) btn.setAttribute("title", text + (exp.agent ? " · " + exp.agent : "") + (exp.model ? " · " + exp.model : "") + " · sort by pass rate");
    else btn.setAttribute("title", "Sort by eval id");
    return h("th", { scope: "col", "data-experiment": exp ? exp.id : null, "class": col === -1 ? "eval" : null }, btn);
  }

  function markSort(thead) {
    var ths = thead.querySelectorAll("th");
    for (var i = 0; i < ths.length; i++) {
      var btn = ths[i].querySelector("button");
      var col = Number(btn.getAttribute("data-col"));
      var arrow = btn.querySelector(".arrow");
      if (mxState.sortCol === col) {
        ths[i].setAttribute("aria-sort", mxState.sortDir === 1 ? "ascending" : "descending");
        arrow.textContent = mxState.sortDir === 1 ? "↑" : "↓";
      } else {
        ths[i].removeAttribute("aria-sort");
        arrow.textContent = "↕";
      }
    }
  }
`;
