/**
 * Navigation and the hash router. One part of the page script of `niceeval view`; _client.ts joins
 * the parts in order into one function scope.
 */
export const ROUTER: string = String.raw`
  var NAV = [["overview", "Overview"], ["matrix", "Matrix"], ["runs", "Runs"], ["charts", "Charts"], ["compare", "Compare"]];
  var PAGE_FNS = { overview: pageOverview, matrix: pageMatrix, attempt: pageAttempt, runs: pageRuns, charts: pageCharts, compare: pageCompare };
  var lastPage = null;

  function route() {
    var hash = location.hash || "";
    if (hash.indexOf("#/attempt/") === 0) {
      var raw = hash.slice(10);
      try { raw = decodeURIComponent(raw); } catch (e) { /* keep it as written */ }
      return { page: "attempt", arg: raw };
    }
    var name = hash.slice(2);
    if (name === "matrix" || name === "runs" || name === "charts") return { page: name };
    if (name === "compare" && model.compare) return { page: "compare" };
    return { page: "overview" };
  }

  function buildNav() {
    var nav = doc.querySelector("nav[aria-label='Report']");
    var ul = h("ul");
    NAV.forEach(function (n) {
      if (n[0] === "compare" && !model.compare) return;
      ul.appendChild(h("li", null, h("a", { href: "#/" + n[0], "data-nav": n[0] }, n[1])));
    });
    nav.appendChild(ul);
  }

  function render(byUser) {
    var r = route();
    var main = doc.getElementById("page");
    if (lastPage === "matrix") mxState.scrollY = window.scrollY;
    doc.body.removeAttribute("data-ready");
    main.textContent = "";
    main.setAttribute("data-page", r.page);
    measureCharts();
    PAGE_FNS[r.page](main, r.arg);
    var links = doc.querySelectorAll("nav[aria-label='Report'] a[data-nav]");
    for (var i = 0; i < links.length; i++) {
      if (links[i].getAttribute("data-nav") === r.page) links[i].setAttribute("aria-current", "page");
      else links[i].removeAttribute("aria-current");
    }
    var heading = main.querySelector("h1");
    doc.title = (heading ? heading.textContent + " · " : "") + (model.title || "niceeval") + " · niceeval view";
    if (byUser) {
      window.scrollTo(0, r.page === "matrix" ? mxState.scrollY : 0);
      main.focus({ preventScroll: true });
    }
    lastPage = r.page;
    doc.body.setAttribute("data-ready", r.page);
  }

  function start() {
    var main = doc.getElementById("page");
    if (!model) {
      main.textContent = "";
      main.appendChild(h("p", { "class": "notice" }, "This report's data could not be read: " + (loadError && loadError.message || "unknown error")));
      doc.body.setAttribute("data-ready", "error");
      return;
    }
    buildNav();
    window.addEventListener("hashchange", function () { render(true); });
    var resizeTimer = 0;
    window.addEventListener("resize", function () {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(function () {
        // Charts are drawn at the width they get: redraw the pages that hold some when it changed.
        var drawn = CHART_W;
        measureCharts();
        if (Math.abs(CHART_W - drawn) > 40 && /^(overview|runs|charts)$/.test(lastPage)) render(false);
      }, 200);
    });
    render(false);
  }
  readData().then(function (text) {
    try {
      model = normalize(JSON.parse(text || "null"));
    } catch (e) {
      loadError = e;
    }
  }, function (e) {
    loadError = e;
  }).then(start);
`;
