/**
 * Inline SVG charts, each with a caption and a table fallback. One part of the page script of
 * `niceeval view`; _client.ts joins the parts in order into one function scope.
 */
export const CHARTS: string = String.raw`
  var CHART_W = 720;

  // Charts are drawn at the width they get, so their text stays readable on a phone.
  function measureCharts() {
    var w = doc.getElementById("page").clientWidth || 760;
    CHART_W = Math.max(300, Math.min(880, w - 60));
  }

  function figure(id, title, caption, chart, fallback) {
    return h("figure", { id: id, "class": "chart" }, [
      h("h2", null, title),
      chart,
      h("figcaption", null, caption),
      h("details", { "class": "fallback" }, [h("summary", null, "Data table"), fallback])
    ]);
  }
  function chartSvg(w, hgt, label, kids) {
    return svg("svg", {
      viewBox: "0 0 " + w + " " + hgt, width: w, height: hgt, role: "img", "aria-label": label,
      preserveAspectRatio: "xMinYMin meet"
    }, kids);
  }
  function simpleTable(cols, rows) {
    return scroll(h("table", { "class": "data" }, [
      headRow(cols),
      h("tbody", null, rows.map(function (r) {
        return h("tr", null, r.map(function (c, i) {
          return i === 0 ? h("th", { scope: "row" }, c) : h("td", { "class": cols[i].num ? "num" : null }, c);
        }));
      }))
    ]));
  }

  // Horizontal bars: items {label, value (>= 0 or null), text, title}, scaled to max.
  function hBars(items, max, label, cls) {
    var labelW = Math.min(190, Math.round(CHART_W * 0.3)), valueW = 64, rowH = 26, barH = 16;
    var hgt = Math.max(1, items.length) * rowH + 6;
    var barMax = CHART_W - labelW - valueW;
    var g = [];
    items.forEach(function (it, i) {
      var y = 4 + i * rowH;
      var w = it.value === null || max <= 0 ? 0 : Math.max(it.value > 0 ? 2 : 0, (it.value / max) * barMax);
      g.push(svg("g", { "class": "bar " + (cls || "") }, [
        svg("rect", { x: labelW, y: y + (rowH - barH) / 2, width: w.toFixed(1), height: barH, rx: 3 },
          svg("title", null, it.title)),
        svg("text", { x: labelW - 8, y: y + rowH / 2, "text-anchor": "end", "dominant-baseline": "middle", "class": "lbl" },
          clip(it.label, Math.floor(labelW / 7))),
        svg("text", { x: labelW + w + 6, y: y + rowH / 2, "dominant-baseline": "middle", "class": "val" }, it.text)
      ]));
    });
    return chartSvg(CHART_W, hgt, label, g);
  }

  function passRateFigure(id) {
    var exps = model.experiments;
    var items = exps.map(function (e) {
      var c = obj(e.counts);
      return {
        label: e.id, value: num(e.passRate), text: fmtPct(e.passRate),
        title: e.id + ": " + (num(e.passRate) === null ? "no pass evals" : fmtPct(e.passRate) + " passed (" + (c.passed || 0) + " of " + (e.passSlots || 0) + " pass slots)")
      };
    });
    var caption = "Pass rate per experiment: passed slots of pass evals, out of all such slots.";
    return figure(id, "Pass rate", caption, hBars(items, 1, "Pass rate per experiment", "pass"),
      simpleTable(["Experiment", { text: "Pass rate", num: true }, { text: "Pass slots", num: true }],
        exps.map(function (e) { return [e.id, fmtPct(e.passRate), String(e.passSlots || 0)]; })));
  }

  function niceStep(raw) {
    if (!(raw > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(raw)));
    var f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * p;
  }

  function durationFigure() {
    var ds = [];
    for (var i = 0; i < model.attempts.length; i++) {
      var d = num(model.attempts[i].durationMs);
      if (d !== null) ds.push(Math.max(0, d));
    }
    var max = ds.reduce(function (m, d) { return d > m ? d : m; }, 0);
    var binCount = Math.min(24, Math.max(1, Math.ceil(Math.sqrt(ds.length))));
    var step = niceStep(max / binCount || 1);
    binCount = Math.max(1, Math.floor(max / step) + 1);
    var bins = [];
    for (var b = 0; b < binCount; b++) bins.push(0);
    ds.forEach(function (d) { bins[Math.min(binCount - 1, Math.floor(d / step))]++; });
    var top = Math.max(1, Math.max.apply(null, bins));
    var left = 44, bottom = 28, hgt = 240, plotH = hgt - bottom - 10, plotW = CHART_W - left - 10;
    var bw = plotW / binCount;
    var kids = [
      svg("line", { x1: left, y1: 10 + plotH, x2: CHART_W - 10, y2: 10 + plotH, "class": "axis" }),
      svg("text", { x: left - 6, y: 14, "text-anchor": "end", "class": "tick" }, String(top)),
      svg("text", { x: left - 6, y: 10 + plotH, "text-anchor": "end", "class": "tick" }, "0")
    ];
    var labelEvery = Math.max(1, Math.ceil(binCount / Math.max(2, Math.floor(plotW / 70))));
    bins.forEach(function (n, i) {
      var bh = (n / top) * plotH;
      var range = fmtDuration(i * step) + "–" + fmtDuration((i + 1) * step);
      kids.push(svg("rect", {
        x: (left + i * bw + 1).toFixed(1), y: (10 + plotH - bh).toFixed(1), width: Math.max(1, bw - 2).toFixed(1),
        height: bh.toFixed(1), "class": "hist"
      }, svg("title", null, range + ": " + plural(n, "Attempt"))));
      if (i % labelEvery === 0) {
        kids.push(svg("text", { x: (left + i * bw).toFixed(1), y: hgt - 8, "class": "tick" }, fmtDuration(i * step)));
      }
    });
    var rows = bins.map(function (n, i) { return [fmtDuration(i * step) + "–" + fmtDuration((i + 1) * step), String(n)]; });
    return figure("chart-duration", "Durations",
      "Attempt durations: " + plural(ds.length, "Attempt") + " in bins of " + fmtDuration(step) + ".",
      ds.length ? chartSvg(CHART_W, hgt, "Histogram of Attempt durations", kids) : empty("No Attempts."),
      simpleTable(["Duration", { text: "Attempts", num: true }], rows));
  }

  function tokensFigure() {
    var exps = model.experiments;
    var full = CHART_W;
    if (CHART_W >= 640) CHART_W = Math.floor((CHART_W - 16) / 2);
    var maxT = 0, maxC = 0;
    exps.forEach(function (e) { maxT = Math.max(maxT, num(e.tokens) || 0); maxC = Math.max(maxC, num(e.costUSD) || 0); });
    var tokens = hBars(exps.map(function (e) {
      return { label: e.id, value: num(e.tokens), text: fmtTokens(e.tokens), title: e.id + ": " + fmtTokens(e.tokens) + " tokens" };
    }), maxT, "Tokens per experiment", "tok");
    var cost = hBars(exps.map(function (e) {
      return { label: e.id, value: num(e.costUSD), text: fmtCost(e.costUSD), title: e.id + ": " + fmtCost(e.costUSD) + " estimated" };
    }), maxC, "Estimated cost per experiment", "cost");
    CHART_W = full;
    var pair = h("div", { "class": "pair" }, [
      h("div", null, [h("h3", null, "Tokens (input + output)"), tokens]),
      h("div", null, [h("h3", null, "Estimated cost"), cost])
    ]);
    return figure("chart-tokens", "Tokens and cost", "Tokens and estimated cost per experiment, over the Attempts that report them.", pair,
      simpleTable(["Experiment", { text: "Tokens", num: true }, { text: "Cost", num: true }],
        exps.map(function (e) { return [e.id, fmtTokens(e.tokens), fmtCost(e.costUSD)]; })));
  }

  function historySeries() {
    var byExp = new Map();
    model.experiments.forEach(function (e) { byExp.set(e.id, []); });
    for (var i = model.runs.length - 1; i >= 0; i--) {
      var r = model.runs[i];
      if (!byExp.has(r.experimentId)) byExp.set(r.experimentId, []);
      byExp.get(r.experimentId).push(r);
    }
    var out = [];
    byExp.forEach(function (runs, id) { if (runs.length) out.push({ id: id, runs: runs }); });
    return out;
  }

  function historyFigure(id) {
    var series = historySeries();
    var left = 44, right = 16, top = 10, bottom = 28, hgt = 240;
    var plotW = CHART_W - left - right, plotH = hgt - top - bottom;
    var times = [];
    series.forEach(function (s) { s.runs.forEach(function (r) { times.push(Date.parse(str(r.startedAt))); }); });
    var finite = times.filter(isFinite);
    var t0 = finite.length ? Math.min.apply(null, finite) : 0;
    var t1 = finite.length ? Math.max.apply(null, finite) : 0;
    var xOf = function (r, i, n) {
      var t = Date.parse(str(r.startedAt));
      if (t1 > t0 && isFinite(t)) return left + ((t - t0) / (t1 - t0)) * plotW;
      return left + (n > 1 ? (i / (n - 1)) * plotW : plotW / 2);
    };
    var yOf = function (p) { return top + (1 - p) * plotH; };
    var kids = [];
    [0, 0.25, 0.5, 0.75, 1].forEach(function (p) {
      kids.push(svg("line", { x1: left, y1: yOf(p), x2: CHART_W - right, y2: yOf(p), "class": p === 0 ? "axis" : "grid" }));
      kids.push(svg("text", { x: left - 6, y: yOf(p), "text-anchor": "end", "dominant-baseline": "middle", "class": "tick" }, fmtPct(p)));
    });
    if (finite.length) {
      kids.push(svg("text", { x: left, y: hgt - 8, "class": "tick" }, fmtTime(new Date(t0).toISOString()).slice(0, 10)));
      kids.push(svg("text", { x: CHART_W - right, y: hgt - 8, "text-anchor": "end", "class": "tick" }, fmtTime(new Date(t1).toISOString()).slice(0, 10)));
    }
    var rows = [];
    series.forEach(function (s, k) {
      var cls = "series s" + (k % 8);
      var pts = [];
      var g = svg("g", { "class": cls });
      s.runs.forEach(function (r, i) {
        var p = num(r.passRate);
        rows.push([s.id, short(r.runId), fmtTime(r.startedAt), fmtPct(p)]);
        if (p === null) return;
        var x = xOf(r, i, s.runs.length), y = yOf(p);
        pts.push(x.toFixed(1) + "," + y.toFixed(1));
        g.appendChild(svg("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 4 },
          svg("title", null, s.id + " · run " + short(r.runId) + " · " + fmtTime(r.startedAt) + " · " + fmtPct(p))));
      });
      if (pts.length > 1) g.insertBefore(svg("polyline", { points: pts.join(" ") }), g.firstChild);
      kids.push(g);
    });
    var legend = h("ul", { "class": "legend" }, series.map(function (s, k) {
      return h("li", null, [h("span", { "class": "swatch s" + (k % 8), "aria-hidden": "true" }), s.id]);
    }));
    var chart = series.length
      ? h("div", null, [chartSvg(CHART_W, hgt, "Pass rate over the Runs of each experiment", kids), legend])
      : empty("No published Runs.");
    return figure(id, "Pass rate history", "Pass rate over the Runs of each experiment, oldest to newest.", chart,
      simpleTable(["Experiment", "Run", "Started", { text: "Pass rate", num: true }], rows));
  }
`;
