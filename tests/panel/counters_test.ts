import assert from "node:assert/strict";
import { type Counters, countersLine } from "../../src/panel/mod.ts";

const RAMPED: Counters = {
  total: 120,
  reused: 30,
  running: 9,
  backoff: 0,
  queued: 61,
  passed: 19,
  failed: 1,
  errored: 0,
  skipped: 0,
};

Deno.test("countersLine() lists every item and backoff only when non-zero (OUT-3)", () => {
  assert.equal(
    countersLine(RAMPED),
    "120 total · 30 reused · 9 running · 61 queued · 19 passed · 1 failed · 0 errored · 0 skipped",
  );
  assert.equal(
    countersLine({ ...RAMPED, running: 21, backoff: 2 }),
    "120 total · 30 reused · 21 running · 2 backoff · 61 queued · 19 passed · 1 failed · 0 errored · 0 skipped",
  );
});

Deno.test("countersLine() drops zero-valued skipped and errored first to fit 68 columns (OUT-H17)", () => {
  assert.equal(
    countersLine(RAMPED, 68),
    "120 total · 30 reused · 9 running · 61 queued · 19 passed · 1 failed",
  );
});

Deno.test("countersLine() drops zero items in the order skipped, errored, failed, reused, passed, queued", () => {
  const zero: Counters = {
    total: 5,
    reused: 0,
    running: 0,
    backoff: 0,
    queued: 0,
    passed: 0,
    failed: 0,
    errored: 0,
    skipped: 0,
  };
  const all =
    "5 total · 0 reused · 0 running · 0 queued · 0 passed · 0 failed · 0 errored · 0 skipped";
  const steps = [
    "5 total · 0 reused · 0 running · 0 queued · 0 passed · 0 failed · 0 errored",
    "5 total · 0 reused · 0 running · 0 queued · 0 passed · 0 failed",
    "5 total · 0 reused · 0 running · 0 queued · 0 passed",
    "5 total · 0 running · 0 queued · 0 passed",
    "5 total · 0 running · 0 queued",
    "5 total · 0 running",
  ];
  assert.equal(countersLine(zero, all.length), all);
  for (const expected of steps) assert.equal(countersLine(zero, expected.length), expected);
  assert.equal(countersLine(zero, 3), "5 total", "the last item is never dropped");
  assert.equal(
    countersLine({ ...zero, running: 2, backoff: 1, queued: 3 }, 30),
    "5 total · 2 run · 1 backoff",
    "past the zero items, queued goes, then labels shorten",
  );
});
