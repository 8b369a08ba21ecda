/** The counters line (OUT-3, OUT-H7) and how it narrows to fit (OUT-H17, issue 18 item 5). */
import { widthOf } from "./_text.ts";
import type { Counters } from "./state.ts";

/** Zero-valued items are dropped in this order until the line fits (OUT-H17). */
const DROP_ORDER = ["skipped", "errored", "failed", "reused", "passed", "queued"] as const;
/** Then non-zero items that other numbers imply or that matter least (docs/progress.md). */
const DROP_NON_ZERO = ["reused", "skipped", "queued"] as const;
/** Then the shorter labels. */
const SHORT: Partial<Record<keyof Counters, string>> = {
  running: "run",
  passed: "pass",
  failed: "fail",
  errored: "err",
};
/** Last, these go in this order; `failed` and `errored` are never dropped when non-zero. */
const DROP_LAST = ["backoff", "running", "total", "passed"] as const;

/** The items of the counters line in display order; `backoff` only when non-zero (RUN-5). */
function counterItems(c: Counters): [name: keyof Counters, value: number][] {
  const items: [keyof Counters, number][] = [
    ["total", c.total],
    ["reused", c.reused],
    ["running", c.running],
  ];
  if (c.backoff > 0) items.push(["backoff", c.backoff]);
  items.push(
    ["queued", c.queued],
    ["passed", c.passed],
    ["failed", c.failed],
    ["errored", c.errored],
    ["skipped", c.skipped],
  );
  return items;
}

/**
 * `<total> total · <reused> reused · …`. With `maxWidth`, the line narrows step by step until it
 * fits: zero-valued items go in the OUT-H17 order; then non-zero `reused`, `skipped` and `queued`;
 * then labels shorten (`run`, `pass`, `fail`, `err`); then `backoff`, `running`, `total` and
 * `passed` go, never the last item. Non-zero `failed` and `errored` always stay, so the result may
 * still be wider than `maxWidth` (the caller cuts it).
 */
export function countersLine(c: Counters, maxWidth = Infinity): string {
  let items = counterItems(c);
  let short = false;
  const text = () =>
    items.map(([name, value]) => `${value} ${short ? SHORT[name] ?? name : name}`).join(" · ");
  const fits = () => widthOf(text()) <= maxWidth;
  const drop = (name: keyof Counters, zeroOnly: boolean) => {
    items = items.filter(([n, value]) => n !== name || (zeroOnly && value !== 0));
  };
  for (const name of DROP_ORDER) {
    if (fits()) return text();
    drop(name, true);
  }
  for (const name of DROP_NON_ZERO) {
    if (fits()) return text();
    drop(name, false);
  }
  if (fits()) return text();
  short = true;
  for (const name of DROP_LAST) {
    if (fits() || items.every(([n]) => n === name)) return text();
    drop(name, false);
  }
  return text();
}

/** True when the RUN-3 invariants hold. */
export function countersBalanced(c: Counters): boolean {
  return c.total === c.reused + c.running + c.queued + c.passed + c.failed + c.errored +
        c.skipped && c.backoff >= 0 && c.backoff <= c.running;
}
