/**
 * Reads and drives the pages of a `niceeval view` report in a browser (issue 17), by the page
 * contract's selectors: the overview table, the matrix and its filters, an Attempt's detail. The
 * tests type-check without the DOM library, so page-side code is written as strings.
 */
import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";

/** How long a wait for the page to settle may take before it counts as a failure. */
const SETTLE_LIMIT_MS = 10_000;

/** One overview row, as its cells show it. */
export interface OverviewRow {
  readonly experiment: string;
  readonly passed: number;
  readonly failed: number;
  readonly errored: number;
  readonly slots: number;
  /** The passRate cell's `data-value`: the raw number, or null when empty. */
  readonly passRate: number | null;
}

/** Evaluates `expression` in the page. */
export async function inPage<T>(page: Page, expression: string): Promise<T> {
  return await page.evaluate(expression) as T;
}

/** The overview table's rows in page order. */
export async function overviewRows(page: Page): Promise<OverviewRow[]> {
  const rows = await inPage<Record<string, string | null>[]>(
    page,
    `[...document.querySelectorAll("#overview-table tbody tr[data-experiment]")].map((tr) => {
      const cell = (col) => tr.querySelector('td[data-col="' + col + '"]');
      const text = (col) => (cell(col)?.textContent ?? "").trim();
      return {
        experiment: tr.getAttribute("data-experiment"),
        passed: text("passed"), failed: text("failed"), errored: text("errored"),
        slots: text("slots"), passRate: cell("passRate")?.getAttribute("data-value") ?? null,
      };
    })`,
  );
  return rows.map((row) => ({
    experiment: row.experiment ?? "",
    passed: integerCell(row.passed, "passed"),
    failed: integerCell(row.failed, "failed"),
    errored: integerCell(row.errored, "errored"),
    slots: integerCell(row.slots, "slots"),
    passRate: row.passRate === null || row.passRate === "" ? null : Number(row.passRate),
  }));
}

function integerCell(text: string | null | undefined, col: string): number {
  assert.match(text ?? "", /^\d+$/, `overview cell ${col} holds an integer, got "${text}"`);
  return Number(text);
}

/** The `data-eval` of the matrix rows in page order. */
export async function matrixEvals(page: Page): Promise<string[]> {
  return await page.$$eval(
    "#matrix-table tbody tr[data-eval]",
    (rows) => rows.map((row) => row.getAttribute("data-eval") ?? ""),
  );
}

/**
 * Waits until the matrix shows exactly `expected` (in any order), then asserts it, so a slow or
 * debounced filter is waited for and a wrong one fails with both lists.
 */
export async function expectMatrixEvals(page: Page, expected: readonly string[]): Promise<void> {
  const want = [...expected].sort();
  await page.waitForFunction(
    `(() => {
      const got = [...document.querySelectorAll("#matrix-table tbody tr[data-eval]")]
        .map((row) => row.getAttribute("data-eval")).sort();
      return JSON.stringify(got) === ${JSON.stringify(JSON.stringify(want))};
    })()`,
    { timeout: SETTLE_LIMIT_MS },
  ).catch(() => undefined);
  assert.deepEqual((await matrixEvals(page)).sort(), want);
}

/** Replaces the text of `#matrix-filter` by typing `text` (each key fires `input`). */
export async function typeFilter(page: Page, text: string): Promise<void> {
  await inPage(
    page,
    `(() => {
      const input = document.getElementById("matrix-filter");
      input.value = "";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    })()`,
  );
  await page.type("#matrix-filter", text);
}

/** The text of every element matching `selector`, trimmed. */
export async function texts(page: Page, selector: string): Promise<string[]> {
  return await page.$$eval(
    selector,
    (elements) => elements.map((element) => (element.textContent ?? "").trim()),
  );
}

/** The value of `attribute` on every element matching `selector`. */
export async function attributes(
  page: Page,
  selector: string,
  attribute: string,
): Promise<string[]> {
  return await page.$$eval(
    selector,
    (elements, name) => elements.map((element) => element.getAttribute(name) ?? ""),
    attribute,
  );
}

/** True when the document is no wider than the viewport (tables scroll inside their wrapper). */
export async function fitsViewport(page: Page): Promise<{ scrollWidth: number; width: number }> {
  return await inPage(
    page,
    `({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })`,
  );
}

/** The tool names of the `operation.started` tool events of an Attempt's turns. */
export function toolNamesOf(turns: readonly Readonly<Record<string, unknown>>[]): string[] {
  const names: string[] = [];
  for (const turn of turns) {
    const events = Array.isArray(turn.events) ? turn.events as Record<string, unknown>[] : [];
    for (const event of events) {
      const operation = event.operation as Record<string, unknown> | undefined;
      if (event.type === "operation.started" && operation?.kind === "tool") {
        names.push(String(operation.name));
      }
    }
  }
  return names;
}

/** A `niceeval.compare` document's parts the compare page shows. */
export interface CompareShown {
  readonly counts: Readonly<Record<string, number>>;
  readonly evals: readonly { readonly evalId: string; readonly state: string }[];
}

/** Asserts that the compare page shows `doc`'s counts, and one row per eval with its state. */
export async function expectComparePage(page: Page, doc: CompareShown): Promise<void> {
  for (const [state, count] of Object.entries(doc.counts)) {
    const shown = await texts(page, `#compare-counts [data-state="${state}"]`);
    assert.deepEqual(shown, [String(count)], state);
  }
  const rows = await inPage<string[]>(
    page,
    `[...document.querySelectorAll("#compare-table tr[data-eval]")]
      .map((tr) => tr.dataset.eval + " " + tr.dataset.state)`,
  );
  assert.deepEqual(rows.sort(), doc.evals.map((e) => `${e.evalId} ${e.state}`).sort());
}
