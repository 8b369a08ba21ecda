import assert from "node:assert/strict";
import { DefinitionError } from "../../src/_shared/errors.ts";
import {
  completeEvidenceCoverage,
  type EvidenceCoverage,
  evidenceCoverage,
  lowerCoverage,
  worstCoverage,
} from "../../src/agents/mod.ts";

const PARTIAL = { status: "partial", reason: "stdout only" } as const;
const NONE = { status: "unavailable", reason: "no usage API" } as const;

Deno.test("completeEvidenceCoverage has every channel complete and is frozen", () => {
  for (const channel of ["events", "actions", "messages", "usage", "status", "data"] as const) {
    assert.deepEqual(completeEvidenceCoverage[channel], { status: "complete" });
  }
  assert.ok(Object.isFrozen(completeEvidenceCoverage));
});

Deno.test("evidenceCoverage() fills unspecified channels with complete", () => {
  const coverage = evidenceCoverage({ usage: NONE });
  assert.deepEqual(coverage, { ...completeEvidenceCoverage, usage: NONE });
  assert.ok(Object.isFrozen(coverage) && Object.isFrozen(coverage.usage));
});

Deno.test("evidenceCoverage() rejects an unknown channel with its path", () => {
  try {
    evidenceCoverage({ tools: PARTIAL } as Partial<EvidenceCoverage>);
    assert.fail("expected a DefinitionError");
  } catch (error) {
    assert.ok(error instanceof DefinitionError);
    assert.equal(error.path, "tools");
    assert.equal(error.code, "definition.invalid-value");
  }
});

Deno.test("evidenceCoverage() rejects a partial entry without a reason", () => {
  assert.throws(
    () => evidenceCoverage({ events: { status: "partial" } as never }),
    (error: unknown) => error instanceof DefinitionError && error.path === "events.reason",
  );
});

Deno.test("evidenceCoverage() rejects an unknown status", () => {
  assert.throws(
    () => evidenceCoverage({ events: { status: "full" } as never }),
    (error: unknown) => error instanceof DefinitionError && error.path === "events.status",
  );
});

Deno.test("evidenceCoverage() rejects a reason on a complete entry", () => {
  assert.throws(
    () => evidenceCoverage({ data: { status: "complete", reason: "x" } as never }),
    (error: unknown) => error instanceof DefinitionError && error.path === "data.reason",
  );
});

Deno.test("lowerCoverage() lowers a channel the turn reports as worse", () => {
  const declared = evidenceCoverage({ events: PARTIAL });
  const lowered = lowerCoverage(declared, {
    usage: NONE,
    events: { status: "unavailable", reason: "crashed" },
  });
  assert.deepEqual(lowered.usage, NONE);
  assert.deepEqual(lowered.events, { status: "unavailable", reason: "crashed" });
  assert.deepEqual(lowered.actions, { status: "complete" });
});

Deno.test("lowerCoverage() never raises a channel", () => {
  const declared = evidenceCoverage({ usage: NONE, events: PARTIAL });
  const lowered = lowerCoverage(declared, {
    usage: { status: "complete" },
    events: { status: "partial", reason: "other reason" },
  });
  assert.deepEqual(lowered, declared);
});

Deno.test("lowerCoverage() returns the declared coverage without a turn entry", () => {
  assert.deepEqual(lowerCoverage(completeEvidenceCoverage, undefined), completeEvidenceCoverage);
});

Deno.test("worstCoverage() takes the worst entry of each channel", () => {
  const a = evidenceCoverage({ events: PARTIAL });
  const b = evidenceCoverage({ usage: NONE, events: { status: "unavailable", reason: "gone" } });
  const worst = worstCoverage([a, completeEvidenceCoverage, b], completeEvidenceCoverage);
  assert.deepEqual(worst, { ...completeEvidenceCoverage, usage: NONE, events: b.events });
});

Deno.test("worstCoverage() returns the fallback for an empty list", () => {
  const fallback = evidenceCoverage({ data: NONE });
  assert.equal(worstCoverage([], fallback), fallback);
});
