/**
 * The Attempt page: everything `show @locator` shows. One part of the page script of `niceeval
 * view`; _client.ts joins the parts in order into one function scope.
 */
export const ATTEMPT: string = String.raw`
  function usageText(u) {
    if (!u || typeof u !== "object") return null;
    var parts = [fmtTokens(num(u.inputTokens)) + " in / " + fmtTokens(num(u.outputTokens)) + " out"];
    if (num(u.cacheReadTokens)) parts.push(fmtTokens(u.cacheReadTokens) + " cache read");
    if (num(u.cacheCreationTokens)) parts.push(fmtTokens(u.cacheCreationTokens) + " cache write");
    if (num(u.reasoningTokens)) parts.push(fmtTokens(u.reasoningTokens) + " reasoning");
    if (num(u.requests)) parts.push(plural(u.requests, "request"));
    return parts.join(" · ");
  }

  function pageAttempt(main, locator) {
    main.appendChild(h("p", { "class": "back" }, h("a", { href: "#/matrix" }, "← Back to the matrix")));
    var a = attemptByLocator(locator);
    if (!a) {
      main.appendChild(h("h1", null, "Attempt not found"));
      main.appendChild(h("p", { id: "attempt-missing", "class": "notice" }, "no Attempt " + locator + " in this report"));
      return;
    }
    main.appendChild(h("h1", { "class": "attempt-title" }, ["Attempt ", h("code", null, str(a.locator)), " ",
      badge(str(a.verdict), undefined, { id: "attempt-verdict", "data-verdict": str(a.verdict) })]));
    main.appendChild(kv([
      ["Experiment", str(a.experimentId)],
      ["Agent", str(a.agent) || "—"],
      ["Model", str(a.model) || "—"],
      ["Eval", str(a.evalId) + " #" + (a.ordinal || 0)],
      ["Run", a.originRunId && a.originRunId !== a.runId
        ? [h("code", null, str(a.runId)), " (executed in ", h("code", null, str(a.originRunId)), ")"]
        : h("code", null, str(a.runId))],
      ["Started", timeEl(a.startedAt)],
      ["Duration", fmtDuration(a.durationMs)],
      ["Usage", usageText(a.usage) || (num(a.tokens) !== null ? fmtTokens(a.tokens) + " tokens" : "—")],
      ["Cost", fmtCost(a.costUSD)],
      ["Outcome", str(a.outcome)],
      ["Score", num(a.score) === null ? null : fmtScore(a.score)]
    ]));
    var siblings = siblingsOf(a);
    if (siblings.length > 1) {
      main.appendChild(h("p", { "class": "siblings" }, ["Attempts of this eval: "].concat(siblings.map(function (s) {
        var v = s.verdict || "none";
        var text = "#" + (s.ordinal || 0) + " " + verdictWord(v);
        var x = attemptOf(s);
        return x && x !== a ? h("a", { href: attemptHref(x.locator), "class": "mini v-" + verdictClass(v) }, text)
          : h("span", { "class": "mini v-" + verdictClass(v) + (x === a ? " self" : "") }, text);
      }))));
    }
    if (a.error) main.appendChild(errorSection(obj(a.error)));
    main.appendChild(assertionsSection(list(a.assertions)));
    main.appendChild(turnsSection(list(a.turns)));
    main.appendChild(logsSection(list(a.logs)));
    main.appendChild(phasesSection(list(a.phases)));
    main.appendChild(section("diagnostics", "Diagnostics", diagList(list(a.diagnostics), "No diagnostics.")));
    main.appendChild(runDiagnostics(a));
  }

  function siblingsOf(a) {
    var out = [];
    for (var i = 0; i < model.slots.length; i++) {
      var s = model.slots[i];
      if (s.experimentId === a.experimentId && s.evalId === a.evalId) out.push(s);
    }
    return out.sort(function (x, y) { return (x.ordinal || 0) - (y.ordinal || 0); });
  }

  function errorSection(e) {
    return section("error", "Error", h("div", { "class": "error-box" }, [
      h("p", null, [h("code", null, str(e.code)), " in ", h("code", null, str(e.phase)), ": ", str(e.message)]),
      e.location ? h("p", null, ["at ", h("code", null, str(e.location))]) : null,
      e.stack ? pre(str(e.stack), "stack") : null
    ]));
  }

  function assertionsSection(entries) {
    if (!entries.length) return section("assertions", "Assertions", empty("No assertions."));
    var failed = entries.filter(function (x) { return obj(x).status === "failed"; }).length;
    var ul = h("ul", { "class": "assertions" });
    entries.forEach(function (raw) {
      var x = obj(raw);
      var status = str(x.status) || "unknown";
      var v = status === "passed" ? "passed" : status === "failed" ? "failed" : status === "errored" ? "errored" : "skipped";
      var group = list(x.group).map(str).filter(Boolean);
      var head = h("div", { "class": "a-head" }, [
        badge(v, status),
        " ",
        group.length ? h("span", { "class": "group" }, group.join(" › ") + " › ") : null,
        h("span", { "class": "label" }, str(x.label || x.criterion) || "(unnamed)"),
        x.matcher ? [" ", h("code", { "class": "matcher" }, str(x.matcher))] : null,
        x.gate === false ? [" ", h("span", { "class": "tag" }, "non-gating")] : null,
        x.optional ? [" ", h("span", { "class": "tag" }, "optional")] : null,
        x.source ? h("code", { "class": "source" }, str(x.source)) : null
      ]);
      var details = [];
      if (x.label && x.criterion && x.label !== x.criterion) details.push(["Criterion", str(x.criterion)]);
      if (x.expected !== null && x.expected !== undefined) details.push(["Expected", pre(toJson(x.expected))]);
      if (x.received !== null && x.received !== undefined) details.push(["Received", pre(toJson(x.received))]);
      if (num(x.measurement) !== null) {
        var th = num(x.gateThreshold) !== null ? x.gateThreshold : num(x.atLeast);
        details.push(["Measurement", fmtScore(x.measurement) + (th !== null ? " (threshold " + fmtScore(th) + ")" : "")]);
      }
      var sc = obj(x.score);
      if (num(sc.points) !== null) details.push(["Points", (num(sc.earned) === null ? "—" : fmtScore(sc.earned)) + " of " + fmtScore(sc.points)]);
      if (x.reason) details.push(["Reason", str(x.reason)]);
      if (x.error) details.push(["Error", pre(str(x.error))]);
      ul.appendChild(h("li", { "data-assertion": true, "data-status": status, "class": "assertion st-" + v },
        [head, details.length ? kv(details) : null]));
    });
    return section("assertions", "Assertions (" + entries.length + (failed ? ", " + failed + " failed" : "") + ")", ul);
  }

  function turnsSection(turns) {
    if (!turns.length) return section("turns", "Turns", empty("No turns."));
    return section("turns", "Turns (" + turns.length + ")", turns.map(function (t, i) { return turnView(obj(t), i); }));
  }

  function turnView(t, i) {
    var events = list(t.events).map(obj);
    var finished = new Map();
    var started = new Set();
    events.forEach(function (e) {
      if (e.type === "operation.finished") finished.set(e.operationId, e);
      if (e.type === "operation.started") started.add(e.operationId);
    });
    var status = str(t.status) || "unknown";
    var took = msBetween(t.startedAt, t.endedAt);
    var meta = [];
    if (took !== null) meta.push(fmtDuration(took));
    if (t.usage) meta.push(usageText(t.usage));
    var title = "Turn " + ((num(t.index) !== null ? t.index : i) + 1) + (num(t.session) ? " · session " + t.session : "");
    var body = h("ol", { "class": "events" });
    events.forEach(function (e) {
      var item = eventView(e, finished, started);
      if (item) body.appendChild(h("li", null, item));
    });
    return h("article", { "class": "turn", "data-turn": i, "data-status": status }, [
      h("h3", null, [title, " ", badge(status === "completed" ? "passed" : status === "failed" ? "failed" : "skipped", status)]),
      meta.length ? h("p", { "class": "meta" }, meta.join(" · ")) : null,
      h("div", { "class": "input" }, [h("span", { "class": "role" }, "input"), h("div", { "class": "text" }, str(t.input))]),
      events.length ? body : empty("No events.")
    ]);
  }

  function eventView(e, finished, started) {
    if (e.type === "message") {
      return h("div", { "class": "msg role-" + (e.role === "user" ? "user" : "assistant") },
        [h("span", { "class": "role" }, str(e.role) || "message"), h("div", { "class": "text" }, str(e.text))]);
    }
    if (e.type === "thinking") {
      return h("details", { "class": "thinking" }, [h("summary", null, "thinking"), h("div", { "class": "text" }, str(e.text))]);
    }
    if (e.type === "operation.started") return toolView(obj(e.operation), finished.get(e.operationId) || null);
    if (e.type === "operation.finished") {
      return started.has(e.operationId) ? null : toolView({ name: "(unknown tool " + str(e.operationId) + ")" }, e);
    }
    if (e.type === "error") return h("div", { "class": "event-error" }, [h("span", { "class": "role" }, "error"), h("div", { "class": "text" }, str(e.message))]);
    return h("details", { "class": "other" }, [h("summary", null, str(e.type) || "event"), pre(toJson(e))]);
  }

  function toolView(op, fin) {
    var name = str(op.name) || "tool";
    var status = fin ? str(fin.status) || "finished" : "pending";
    var v = status === "completed" ? "passed" : status === "pending" ? "skipped" : "failed";
    var out = fin ? (fin.output !== undefined ? fin.output : fin.result !== undefined ? fin.result : fin.error) : undefined;
    return h("div", { "data-tool-call": true, "data-tool": name, "class": "tool" }, [
      h("div", { "class": "tool-head" }, [h("span", { "class": "role" }, "tool"), " ", h("code", null, name), " ", badge(v, status)]),
      op.input !== undefined ? h("details", { "class": "io", open: true }, [h("summary", null, "Input"), pre(toJson(op.input))]) : null,
      out !== undefined ? h("details", { "class": "io", open: true }, [h("summary", null, "Result"), pre(toJson(out))]) : null
    ]);
  }

  function logsSection(logs) {
    if (!logs.length) return section("logs", "Logs", empty("No logs."));
    return section("logs", "Logs (" + logs.length + ")", h("ol", { "class": "logs" }, logs.map(function (l) {
      var entry = obj(l);
      var text = typeof entry.text === "string" ? entry.text : toJson(l);
      return h("li", null, [entry.at ? timeEl(str(entry.at)) : null, pre(text)]);
    })));
  }

  function phasesSection(phases) {
    if (!phases.length) return section("phases", "Phases", empty("No phase timings."));
    var rows = phases.map(function (p) {
      p = obj(p);
      return h("tr", null, [
        h("th", { scope: "row" }, str(p.phase) || "—"),
        h("td", null, timeEl(str(p.startedAt))),
        h("td", { "class": "num" }, fmtDuration(msBetween(p.startedAt, p.endedAt)))
      ]);
    });
    return section("phases", "Phases", scroll(h("table", { "class": "data" }, [
      headRow(["Phase", "Started", { text: "Duration", num: true }]), h("tbody", null, rows)])));
  }

  function diagList(diags, none) {
    if (!diags.length) return empty(none);
    return h("ul", { "class": "diags" }, diags.map(function (d) {
      d = obj(d);
      var level = str(d.level) || "info";
      return h("li", { "data-level": level }, [
        badge(level === "error" ? "errored" : level === "warning" ? "failed" : "skipped", level), " ",
        h("code", null, str(d.code)), " ", str(d.message),
        d.evalId ? [" ", h("span", { "class": "tag" }, str(d.evalId))] : null,
        d.data && typeof d.data === "object" && Object.keys(d.data).length
          ? h("details", null, [h("summary", null, "data"), pre(toJson(d.data))]) : null
      ]);
    }));
  }

  function runDiagnostics(a) {
    var run = runById(a.runId) || runById(a.originRunId);
    var title = "Run diagnostics";
    if (!run) return section("run-diagnostics", title, empty("The Run of this Attempt is not in this report."));
    var all = list(run.diagnostics);
    var mine = all.filter(function (d) { var e = obj(d).evalId; return !e || e === a.evalId; });
    var rest = all.length - mine.length;
    return section("run-diagnostics", title + " (run " + short(run.runId) + ")", [
      diagList(mine, "No diagnostics for this eval in its Run."),
      rest ? h("details", null, [h("summary", null, plural(rest, "diagnostic") + " of other evals"),
        diagList(all.filter(function (d) { return mine.indexOf(d) < 0; }), "")]) : null
    ]);
  }
`;
