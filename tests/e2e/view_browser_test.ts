/**
 * `niceeval view` end to end in a real headless browser (issue 17): the keyless example runs every
 * experiment, `view --out` writes the report, and the page agrees with `show --json`, filters its
 * matrix, shows the weather eval's assertion and tool call, answers the keyboard and requests
 * nothing from the network; `view --compare` renders the compare page. Screenshots at 1280 and 390
 * pixels go to `$NICEEVAL_ARTIFACTS/view` (or a temp dir); their paths are printed.
 */
import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { browserAvailable, launchBrowser } from "../_helpers/browser.ts";
import { REPO, tempProject } from "../_helpers/cli.ts";
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
  typeFilter,
} from "../_helpers/view_page.ts";

const EXAMPLE = join(REPO, "examples", "keyless");
const available = await browserAvailable();
const WIDE = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

/** One row of `show --json`. */
interface ShowRow {
  readonly experimentId: string;
  readonly evalId: string;
  readonly attempt: { readonly verdict: string; readonly locator: string } | null;
}

/** Per experiment, in first-seen order: the counts the overview must show. */
function expectedOverview(rows: readonly ShowRow[]): Map<string, Record<string, number>> {
  const out = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const counts = out.get(row.experimentId) ?? { passed: 0, failed: 0, errored: 0, slots: 0 };
    counts.slots!++;
    const verdict = row.attempt?.verdict;
    if (verdict === "passed" || verdict === "failed" || verdict === "errored") counts[verdict]!++;
    out.set(row.experimentId, counts);
  }
  return out;
}

/** The evals of `rows` in first-seen order. */
function evalIds(rows: readonly ShowRow[]): string[] {
  return [...new Set(rows.map((row) => row.evalId))];
}

Deno.test({
  name: "niceeval view (issue 17): the keyless example's report in a browser exits 0",
  ignore: !available,
  fn: async (t) => {
    await using p = await tempProject(EXAMPLE);
    const exp = await p.run(["exp"], { env: { CI: "1" } });
    // checks/fail fails on purpose, so `exp` over every experiment exits 1.
    assert.equal(exp.code, 1, exp.stderr);
    const show = await p.run(["show", "--json"]);
    assert.equal(show.code, 0, show.stderr);
    const rows = (JSON.parse(show.stdout) as { rows: ShowRow[] }).rows;
    await Deno.mkdir(join(p.dir, "out"));
    const out = join(p.dir, "out", "report.html");
    const view = await p.run(["view", "--out", out]);
    assert.equal(view.code, 0, view.stderr);
    // The written path, as given or absolute.
    assert.equal(resolve(p.dir, view.stdout.trim()), out);
    const url = pathToFileURL(out).href;

    await using browser = await launchBrowser();

    await t.step("the overview shows show --json's counts, with no error or request", async () => {
      const page = await browser.open(url, WIDE);
      await page.waitReady("overview");
      const expected = expectedOverview(rows);
      const shown = await overviewRows(page.page);
      assert.deepEqual(shown.map((r) => r.experiment), [...expected.keys()]);
      for (const row of shown) {
        const { passed, failed, errored, slots } = row;
        assert.deepEqual({ passed, failed, errored, slots }, expected.get(row.experiment));
      }
      await page.screenshot("example-overview-1280");
      page.assertClean();
      await page.page.close();
    });

    await t.step("the matrix filter and verdict select narrow the rows", async () => {
      const page = await browser.open(`${url}#/matrix`, WIDE);
      await page.waitReady("matrix");
      const all = evalIds(rows);
      assert.deepEqual((await matrixEvals(page.page)).sort(), [...all].sort());
      await typeFilter(page.page, "MATH");
      const math = all.filter((id) => id.startsWith("math/"));
      assert.ok(math.length > 0 && math.length < all.length);
      await expectMatrixEvals(page.page, math);
      await typeFilter(page.page, "");
      await expectMatrixEvals(page.page, all);
      await page.page.select("#matrix-verdict", "failed");
      const failed = evalIds(rows.filter((row) => row.attempt?.verdict === "failed"));
      assert.deepEqual(failed, ["deliberate-fail/broken"]);
      await expectMatrixEvals(page.page, failed);
      await page.page.select("#matrix-verdict", "");
      await expectMatrixEvals(page.page, all);
      await page.screenshot("example-matrix-1280");
      page.assertClean();
      await page.page.close();
    });

    const weather = rows.find((row) => row.evalId.startsWith("tool/") && row.attempt !== null);
    assert.ok(weather?.attempt, "the example has the weather tool eval's Attempt");
    const weatherHash = `#/attempt/${encodeURIComponent(weather.attempt.locator)}`;

    await t.step("the weather Attempt shows its toolMatch assertion and tool call", async () => {
      const page = await browser.open(`${url}#/matrix`, WIDE);
      await page.waitReady("matrix");
      const links = await attributes(
        page.page,
        `#matrix-table tr[data-eval="${weather.evalId}"] a[href]`,
        "href",
      );
      assert.deepEqual(links, [weatherHash]);
      await page.navigate(weatherHash, "attempt");
      const assertions = await texts(page.page, "#assertions [data-assertion]");
      assert.ok(
        assertions.some((text) =>
          text.includes('get_weather { input: jsonMatch({"city":"Brooklyn"})')
        ),
        assertions.join("\n"),
      );
      const calls = await texts(page.page, '#turns [data-tool-call][data-tool="get_weather"]');
      assert.equal(calls.length, 1);
      assert.match(calls[0]!, /Brooklyn/);
      await page.screenshot("example-attempt-1280");
      page.assertClean();
      await page.page.close();
    });

    await t.step("keyboard: Enter on the first nav link navigates", async () => {
      const page = await browser.open(`${url}#/matrix`, WIDE);
      await page.waitReady("matrix");
      const first = 'nav[aria-label="Report"] a';
      const href = (await attributes(page.page, first, "href"))[0] ?? "";
      await inPage(page.page, `document.body.removeAttribute("data-ready")`);
      await page.page.focus(first);
      await page.page.keyboard.press("Enter");
      await page.waitReady("overview");
      assert.equal(await inPage(page.page, "location.hash"), href);
      page.assertClean();
      await page.page.close();
    });

    await t.step("at 390 px overview, matrix and the Attempt fit the width", async () => {
      const routes: [string, string][] = [
        ["#/overview", "overview"],
        ["#/matrix", "matrix"],
        [weatherHash, "attempt"],
      ];
      for (const [hash, name] of routes) {
        const page = await browser.open(`${url}${hash}`, PHONE);
        await page.waitReady(name);
        const { scrollWidth, width } = await fitsViewport(page.page);
        assert.ok(scrollWidth <= width, `${name}: page is ${scrollWidth}px wide at ${width}px`);
        await page.screenshot(`example-${name}-390`);
        page.assertClean();
        await page.page.close();
      }
    });

    await t.step("view --compare renders show --compare's counts and states", async () => {
      const sides = ["local", "checks/fail"];
      const expected = await p.run(["show", "--compare", ...sides, "--json"]);
      assert.equal(expected.code, 0, expected.stderr);
      const doc = JSON.parse(expected.stdout) as CompareShown;
      const compareOut = join(p.dir, "out", "compare.html");
      const r = await p.run(["view", "--compare", ...sides, "--out", compareOut]);
      assert.equal(r.code, 0, r.stderr);
      const page = await browser.open(`${pathToFileURL(compareOut).href}#/compare`, WIDE);
      await page.waitReady("compare");
      await expectComparePage(page.page, doc);
      await page.screenshot("example-compare-1280");
      page.assertClean();
      await page.page.close();
    });
  },
});
