/**
 * Overview, Runs, Charts and Compare pages. One part of the page script of `niceeval view`;
 * _client.ts joins the parts in order into one function scope.
 */
export const PAGES: string = String.raw`
  function pageOverview(main) {
    var m = model;
    main.appendChild(h("h1", null, "Overview"));
    main.appendChild(h("p", { "class": "meta", id: "report-meta" }, [
      "Generated ", h("time", { datetime: m.generatedAt }, m.generatedAt || "—"),
      " · scope ", h("code", null, m.scope || "—"), " (",
      m.scope === "runs" ? "the selected Runs" : "the project's current results", ") · ",
      plural(m.experiments.length, "experiment"), " · ", plural(m.evals.length, "eval"), " · ",
      plural(m.attempts.length, "Attempt")
    ]));
    if (m.problems.length) {
      main.appendChild(section("problems-section", "Problems", h("ul", { id: "problems", "class": "problems" },
        m.problems.map(function (p) { return h("li", null, [h("code", null, str(p.code)), " ", str(p.message)]); }))));
    }
    var cols = ["Experiment", "Agent", "Model", { text: "Pass rate", num: true }, { text: "Score", num: true },
      { text: "Passed", num: true }, { text: "Failed", num: true }, { text: "Errored", num: true },
      { text: "Slots", num: true }, { text: "p50", num: true }, { text: "p95", num: true },
      { text: "Tokens", num: true }, { text: "Cost", num: true }];
    var body = h("tbody");
    m.experiments.forEach(function (e) {
      var c = obj(e.counts);
      var cell = function (col, text, extra) {
        var a = { "data-col": col, "class": extra === "text" ? null : "num" };
        return h("td", a, text);
      };
      var pr = num(e.passRate);
      var rate = h("td", { "data-col": "passRate", "data-value": pr === null ? "" : pr, "class": "num rate" }, fmtPct(pr));
      if (pr !== null) rate.style.setProperty("--p", (pr * 100).toFixed(1) + "%");
      body.appendChild(h("tr", { "data-experiment": e.id }, [
        h("td", { "data-col": "experiment" }, h("a", { href: "#/matrix", "class": "exp" }, str(e.id))),
        cell("agent", str(e.agent) || "—", "text"),
        cell("model", str(e.model) || "—", "text"),
        rate,
        cell("score", fmtScore(e.meanScore)),
        cell("passed", String(c.passed || 0)),
        cell("failed", String(c.failed || 0)),
        cell("errored", String(c.errored || 0)),
        cell("slots", String(e.slots || 0)),
        cell("durationP50", fmtDuration(e.durationP50Ms)),
        cell("durationP95", fmtDuration(e.durationP95Ms)),
        cell("tokens", fmtTokens(e.tokens)),
        cell("cost", fmtCost(e.costUSD))
      ]));
    });
    main.appendChild(section("experiments", "Experiments", m.experiments.length
      ? scroll(h("table", { id: "overview-table", "class": "data" }, [headRow(cols), body]))
      : empty("This report has no experiments.")));
    main.appendChild(passRateFigure("chart-pass-rate"));
  }

  function countsText(c) {
    c = obj(c);
    var parts = [];
    [["passed", "passed"], ["failed", "failed"], ["errored", "errored"], ["scored", "scored"], ["skipped", "skipped"],
      ["interrupted", "interrupted"], ["notRun", "not run"]].forEach(function (p) {
      if (c[p[0]]) parts.push(c[p[0]] + " " + p[1]);
    });
    return parts.join(" · ") || "—";
  }

  function pageRuns(main) {
    main.appendChild(h("h1", null, "Runs"));
    main.appendChild(h("p", { "class": "meta" }, plural(model.runs.length, "published Run") + ", newest first."));
    var current = new Set();
    model.experiments.forEach(function (e) { list(e.runIds).forEach(function (id) { current.add(id); }); });
    var body = h("tbody");
    model.runs.forEach(function (r) {
      var diags = list(r.diagnostics).length;
      body.appendChild(h("tr", { "data-run": r.runId }, [
        h("td", null, timeEl(r.startedAt, true)),
        h("td", null, [h("code", { title: r.runId }, short(r.runId)),
          current.has(r.runId) ? [" ", h("span", { "class": "tag" }, "current")] : null]),
        h("td", null, str(r.experimentId)),
        h("td", null, str(r.agent) || "—"),
        h("td", null, str(r.model) || "—"),
        h("td", null, r.completion ? badge(r.completion === "completed" ? "passed" : r.completion === "interrupted" ? "interrupted" : "errored", str(r.completion)) : "in progress"),
        h("td", { "class": "num" }, String(r.slots || 0)),
        h("td", { "class": "num", "data-value": num(r.passRate) === null ? "" : r.passRate }, fmtPct(r.passRate)),
        h("td", { "class": "wrap" }, countsText(r.counts)),
        h("td", { "class": "num" }, diags ? String(diags) : "—")
      ]));
    });
    main.appendChild(section("runs", "All Runs", model.runs.length
      ? scroll(h("table", { id: "runs-table", "class": "data" }, [
        headRow(["Started", "Run", "Experiment", "Agent", "Model", "Completion", { text: "Slots", num: true },
          { text: "Pass rate", num: true }, "Counts", { text: "Diagnostics", num: true }]), body]))
      : empty("No published Runs.")));
    main.appendChild(historyFigure("runs-history"));
  }

  function pageCharts(main) {
    main.appendChild(h("h1", null, "Charts"));
    main.appendChild(durationFigure());
    main.appendChild(tokensFigure());
    main.appendChild(historyFigure("chart-history"));
  }

  function tallyText(t) {
    if (!t || typeof t !== "object") return "—";
    var head = (t.passed || 0) + "/" + (t.total || 0) + " passed";
    return num(t.meanScore) === null ? head : head + " · score " + fmtScore(t.meanScore);
  }
  function sideView(label, s) {
    s = obj(s);
    return h("div", { "class": "side" }, [
      h("p", { "class": "side-label" }, label),
      h("p", { "class": "side-exp" }, str(s.experimentId) || "—"),
      h("p", null, ["run ", h("code", null, str(s.runId)), " · ", timeEl(str(s.startedAt))])
    ]);
  }

  function pageCompare(main) {
    var c = model.compare;
    var counts = obj(c.counts);
    main.appendChild(h("h1", null, "Compare"));
    main.appendChild(h("div", { "class": "sides" }, [sideView("Before (A)", c.a), sideView("After (B)", c.b)]));
    main.appendChild(h("ul", { id: "compare-counts", "class": "counts" }, STATES.map(function (s) {
      return h("li", { "class": "st-" + s }, [h("span", { "data-state": s }, String(counts[s] || 0)), " " + s.replace("-", " ")]);
    })));
    var evals = list(c.evals).map(function (e, i) { return { e: obj(e), i: i }; });
    evals.sort(function (x, y) { return ((STATE_RANK[x.e.state] || 0) - (STATE_RANK[y.e.state] || 0)) || x.i - y.i; });
    var body = h("tbody");
    var more = h("button", { id: "compare-more", type: "button", "class": "more" }, "Show more");
    var shown = 0;
    var fill = function () {
      var to = Math.min(evals.length, shown + PAGE_SIZE);
      var frag = doc.createDocumentFragment();
      for (; shown < to; shown++) frag.appendChild(compareRow(evals[shown].e));
      body.appendChild(frag);
      more.hidden = shown >= evals.length;
    };
    more.addEventListener("click", fill);
    fill();
    main.appendChild(section("compare-evals", "Evals", evals.length
      ? [scroll(h("table", { id: "compare-table", "class": "data" }, [headRow(["Eval", "State", "Before (A)", "After (B)"]), body])), more]
      : empty("No evals to compare.")));
  }

  function compareRow(e) {
    return h("tr", { "data-eval": str(e.evalId), "data-state": str(e.state) }, [
      h("th", { scope: "row" }, str(e.evalId)),
      h("td", null, h("span", { "class": "state st-" + str(e.state) }, str(e.state).replace("-", " "))),
      h("td", null, tallyText(e.a)),
      h("td", null, tallyText(e.b))
    ]);
  }
`;
