/** The counters line (OUT-3, OUT-H7) and how it narrows to fit (OUT-H17). */
import { widthOf } from "./_text.ts";
import type { Counters } from "./state.ts";

/** Zero-valued items are dropped in this order until the line fits (OUT-H17). */
const DROP_ORDER = ["skipped", "errored", "failed", "reused", "passed", "queued"] as const;

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
 * `<total> total · <reused> reused · …`. With `maxWidth`, zero-valued items are dropped in the
 * OUT-H17 order until the line fits; `total`, `running` and a non-zero `backoff` always stay,
 * so the result may still be wider than `maxWidth` (the caller cuts it).
 */
export function countersLine(c: Counters, maxWidth = Infinity): string {
  let items = counterItems(c);
  const text = () => items.map(([name, value]) => `${value} ${name}`).join(" · ");
  for (const name of DROP_ORDER) {
    if (widthOf(text()) <= maxWidth) break;
    items = items.filter(([n, value]) => n !== name || value !== 0);
  }
  return text();
}

/** True when the RUN-3 invariants hold. */
export function countersBalanced(c: Counters): boolean {
  return c.total === c.reused + c.running + c.queued + c.passed + c.failed + c.errored +
        c.skipped && c.backoff >= 0 && c.backoff <= c.running;
}
