/**
 * The `niceeval view` page in a real headless browser (issue 17), on reports rendered from a fake
 * ViewModel: the page contract's routes, overview numbers, matrix filters, Attempt detail,
 * keyboard navigation, compare page and layout at 1280 and 390 pixels, with no console error, no
 * page error and no network request. The example project end to end is
 * tests/e2e/view_browser_test.ts.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { compareDocument, compareRuns } from "../../src/report/compare.ts";
import { renderHtml } from "../../src/report/view/html.ts";
import type { ViewAttempt, ViewModel } from "../../src/report/view/model.ts";
import { fakeViewModel } from "../_fakes/view_model.ts";
import {
  browserAvailable,
  type BrowserSession,
  launchBrowser,
  type ViewPage,
} from "../_helpers/browser.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import {
  attributes,
  type CompareShown,
  expectComparePage,
  expectMatrixEvals,
  fitsViewport,
  inPage,
  matrixEvals,
  overviewRows,
  texts,
  toolNamesOf,
  typeFilter,
} from "../_helpers/view_page.ts";

const available = await browserAvailable();
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** Writes `html` as `<dir>/<name>.html` and returns its `file:` URL. */
async function writePage(dir: string, name: string, html: string): Promise<string> {
  const path = join(dir, `${name}.html`);
  await Deno.writeTextFile(path, html);
  return pathToFileURL(path).href;
}

function render(model: ViewModel): string {
  return renderHtml(JSON.stringify(model), model.title);
}

/** Evals of `model` that have a slot with `verdict` ("none": a slot without an Attempt). */
function evalsWithVerdict(model: ViewModel, verdict: string): string[] {
  const ids = new Set<string>();
  for (const slot of model.slots) {
    if ((slot.verdict ?? "none") === verdict) ids.add(slot.evalId);
  }
  return model.evals.map((e) => e.id).filter((id) => ids.has(id));
}

/** The Attempt with the most tool calls, then the most assertions. */
function richestAttempt(model: ViewModel): ViewAttempt {
  const weight = (a: ViewAttempt) => toolNamesOf(a.turns).length * 1000 + a.assertions.length;
  const sorted = [...model.attempts].sort((x, y) => weight(y) - weight(x));
  assert.ok(sorted[0] !== undefined, "the fake model has Attempts");
  return sorted[0];
}

/** The fake model with a comparison of two made-up Runs, if the fake has none. */
function withComparison(model: ViewModel): ViewModel {
  if (model.compare !== null) return model;
  const side = (runId: string, verdicts: Record<string, string | null>) => ({
    runId,
    experimentId: runId,
    startedAt: "2026-01-01T00:00:00.000Z",
    slots: Object.entries(verdicts).map(([evalId, verdict]) => ({
      evalId,
      ordinal: 0,
      kind: "pass" as const,
      verdict,
      score: null,
    })),
  });
  const a = side("before", { "cmp/fixed": "failed", "cmp/broke": "passed", "cmp/gone": "passed" });
  const b = side("after", { "cmp/fixed": "passed", "cmp/broke": "failed", "cmp/new": "passed" });
  return { ...model, compare: compareDocument(compareRuns(a, b)) };
}

async function openReport(
  browser: BrowserSession,
  url: string,
  viewport: { width: number; height: number },
  page: string,
): Promise<ViewPage> {
  const view = await browser.open(url, viewport);
  await view.waitReady(page);
  return view;
}

Deno.test({
  name: "niceeval view page in a browser (issue 17): routes, overview, matrix, attempt, compare",
  ignore: !available,
  fn: async (t) => {
    await withTempDir(async (dir) => {
      await using browser = await launchBrowser();
      const model = withComparison(
        fakeViewModel({ experiments: 3, evals: 30, attemptsPerEval: 2, hostileText: true }),
      );
      const url = await writePage(dir, "report", render(model));

      await t.step(
        "the helper records network requests, console errors and page errors",
        async () => {
          const bad = await writePage(
            dir,
            "bad",
            `<!doctype html><body><img src="https://example.invalid/x.png">` +
              `<script>console.error("boom"); setTimeout(() => { throw new Error("uncaught"); });` +
              `</script></body>`,
          );
          const view = await browser.open(bad, WIDE);
          await view.page.waitForFunction(`document.readyState === "complete"`);
          await view.page.evaluate(`new Promise((resolve) => setTimeout(resolve))`);
          assert.ok(view.requests.some((r) => r.includes("https://example.invalid/x.png")));
          assert.ok(view.consoleProblems.some((line) => line.includes("boom")));
          assert.ok(view.pageErrors.some((line) => line.includes("uncaught")));
          assert.throws(
            () => view.assertClean(),
            /network request: GET https:\/\/example\.invalid/,
          );
          await view.page.close();
        },
      );

      await t.step("overview: one row per experiment, with the model's counts", async () => {
        const view = await openReport(browser, url, WIDE, "overview");
        const rows = await overviewRows(view.page);
        assert.deepEqual(
          rows,
          model.experiments.map((e) => ({
            experiment: e.id,
            passed: e.counts.passed,
            failed: e.counts.failed,
            errored: e.counts.errored,
            slots: e.slots,
            passRate: e.passRate,
          })),
        );
        assert.equal((await texts(view.page, "#chart-pass-rate figcaption")).length, 1);
        assert.equal(
          await inPage(view.page, `document.querySelector("main#page").dataset.page`),
          "overview",
        );
        const current = await attributes(view.page, 'nav[aria-label="Report"] a', "aria-current");
        assert.equal(current.filter((value) => value === "page").length, 1);
        await view.screenshot("fake-overview-1280");
        view.assertClean();
        await view.page.close();
      });

      await t.step("matrix: the text filter and the verdict select narrow the rows", async () => {
        const view = await openReport(browser, `${url}#/matrix`, WIDE, "matrix");
        const all = model.evals.map((e) => e.id);
        assert.deepEqual((await matrixEvals(view.page)).sort(), all.slice(0, 500).sort());
        // A part of one eval id, typed in upper case: the filter is case-insensitive.
        const target = all.find((id) => all.some((other) => !other.includes(id.slice(-3))));
        assert.ok(target !== undefined, "the fake model has evals a filter can tell apart");
        const needle = target.slice(-3);
        await typeFilter(view.page, needle.toUpperCase());
        const kept = all.filter((id) => id.toLowerCase().includes(needle.toLowerCase()));
        assert.ok(kept.length < all.length);
        await expectMatrixEvals(view.page, kept);
        await typeFilter(view.page, "");
        await expectMatrixEvals(view.page, all);
        for (const verdict of ["failed", "passed"]) {
          await view.page.select("#matrix-verdict", verdict);
          await expectMatrixEvals(view.page, evalsWithVerdict(model, verdict));
        }
        await view.page.select("#matrix-verdict", "");
        await expectMatrixEvals(view.page, all);
        await view.screenshot("fake-matrix-1280");
        view.assertClean();
        await view.page.close();
      });

      await t.step("matrix: every column sorts both ways, and Show more pages", async () => {
        const view = await openReport(browser, `${url}#/matrix`, WIDE, "matrix");
        const ids = model.evals.map((e) => e.id);
        const click = async (col: number) => {
          await view.page.click(`#matrix-table thead button[data-col="${col}"]`);
          return await matrixEvals(view.page);
        };
        const byId = [...ids].sort();
        assert.deepEqual(await click(-1), byId);
        assert.deepEqual(await attributes(view.page, "#matrix-table th[aria-sort]", "aria-sort"), [
          "ascending",
        ]);
        assert.deepEqual(await click(-1), [...byId].reverse());
        // By the first experiment's pass rate: passing slots out of its slots of each eval.
        const first = model.experiments[0]!.id;
        const rate = new Map(ids.map((id) => {
          const slots = model.slots.filter((s) => s.evalId === id && s.experimentId === first);
          const passing = slots.filter((s) => s.verdict === "passed" || s.verdict === "scored");
          return [id, passing.length / slots.length];
        }));
        const ascending = (await click(0)).map((id) => rate.get(id)!);
        assert.deepEqual(ascending, [...ascending].sort((a, b) => a - b));
        assert.ok(ascending[0]! < ascending.at(-1)!, "the fake model's pass rates differ");
        const descending = (await click(0)).map((id) => rate.get(id)!);
        assert.deepEqual(descending, [...descending].sort((a, b) => b - a));
        assert.deepEqual(
          await attributes(view.page, "#matrix-table th[aria-sort]", "data-experiment"),
          [first],
        );
        view.assertClean();
        await view.page.close();

        const big = fakeViewModel({ experiments: 1, evals: 1_100, attemptsPerEval: 1 });
        const bigUrl = await writePage(dir, "big", render(big));
        const paged = await openReport(browser, `${bigUrl}#/matrix`, WIDE, "matrix");
        for (const shown of [500, 1_000, 1_100]) {
          assert.equal((await matrixEvals(paged.page)).length, shown);
          assert.deepEqual(await texts(paged.page, "#matrix-count"), [
            `showing ${shown} of 1100 evals`,
          ]);
          const hidden = await inPage(paged.page, `document.getElementById("matrix-more").hidden`);
          assert.equal(hidden, shown === 1_100);
          if (shown < 1_100) await paged.page.click("#matrix-more");
        }
        paged.assertClean();
        await paged.page.close();
      });

      await t.step("attempt: assertions and tool calls, reached from the matrix", async () => {
        const attempt = richestAttempt(model);
        const view = await openReport(browser, `${url}#/matrix`, WIDE, "matrix");
        const href = `#/attempt/${encodeURIComponent(attempt.locator)}`;
        const links = await attributes(view.page, "#matrix-table a[href]", "href");
        assert.ok(links.includes(href), `the matrix links ${href}`);
        await view.navigate(href, "attempt");
        const assertions = await texts(view.page, "#assertions [data-assertion]");
        assert.equal(assertions.length, attempt.assertions.length);
        const statuses = await attributes(view.page, "#assertions [data-assertion]", "data-status");
        assert.deepEqual(statuses, attempt.assertions.map((a) => String(a.status)));
        const tools = await attributes(view.page, "#turns [data-tool-call]", "data-tool");
        assert.deepEqual(tools, toolNamesOf(attempt.turns));
        await view.screenshot("fake-attempt-1280");
        await view.navigate("#/attempt/no-such-locator", "attempt");
        assert.match(
          (await texts(view.page, "main#page")).join(" "),
          /no Attempt no-such-locator in this report/,
        );
        view.assertClean();
        await view.page.close();
      });

      await t.step("runs and charts pages render the model's Runs and three charts", async () => {
        const view = await openReport(browser, `${url}#/runs`, WIDE, "runs");
        assert.deepEqual(
          await attributes(view.page, "#runs-table tr[data-run]", "data-run"),
          model.runs.map((r) => r.runId),
        );
        await view.navigate("#/charts", "charts");
        for (const id of ["chart-duration", "chart-tokens", "chart-history"]) {
          assert.equal((await texts(view.page, `figure#${id} figcaption`)).length, 1, id);
          assert.equal((await texts(view.page, `figure#${id} details table`)).length, 1, id);
        }
        view.assertClean();
        await view.page.close();
      });

      await t.step("keyboard: Enter on the first nav link navigates", async () => {
        const view = await openReport(browser, `${url}#/matrix`, WIDE, "matrix");
        const first = 'nav[aria-label="Report"] a';
        const href = (await attributes(view.page, first, "href"))[0] ?? "";
        assert.match(href, /^#\/overview$/);
        await inPage(view.page, `document.body.removeAttribute("data-ready")`);
        await view.page.focus(first);
        await view.page.keyboard.press("Enter");
        await view.waitReady("overview");
        assert.equal(await inPage(view.page, "location.hash"), "#/overview");
        view.assertClean();
        await view.page.close();
      });

      await t.step("compare: counts and one row per eval with its state", async () => {
        const compare = model.compare as unknown as CompareShown;
        const view = await openReport(browser, `${url}#/compare`, WIDE, "compare");
        await expectComparePage(view.page, compare);
        await view.screenshot("fake-compare-1280");
        view.assertClean();
        await view.page.close();
      });

      await t.step("at 390 px every page fits the width; tables scroll inside", async () => {
        const attempt = richestAttempt(model);
        const routes: [string, string][] = [
          ["#/overview", "overview"],
          ["#/matrix", "matrix"],
          [`#/attempt/${encodeURIComponent(attempt.locator)}`, "attempt"],
          ["#/runs", "runs"],
          ["#/charts", "charts"],
          ["#/compare", "compare"],
        ];
        for (const [hash, name] of routes) {
          const view = await openReport(browser, `${url}${hash}`, PHONE, name);
          const { scrollWidth, width } = await fitsViewport(view.page);
          assert.ok(scrollWidth <= width, `${name}: page is ${scrollWidth}px wide at ${width}px`);
          if (name === "overview" || name === "matrix" || name === "attempt") {
            await view.screenshot(`fake-${name}-390`);
          }
          view.assertClean();
          await view.page.close();
        }
      });

      await t.step("a model without a comparison has no compare link", async () => {
        const plain = await writePage(dir, "plain", render({ ...model, compare: null }));
        const view = await openReport(browser, plain, WIDE, "overview");
        const hrefs = await attributes(view.page, 'nav[aria-label="Report"] a', "href");
        assert.ok(!hrefs.includes("#/compare"), hrefs.join(" "));
        view.assertClean();
        await view.page.close();
      });
    });
  },
});
