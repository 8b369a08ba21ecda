/** Which thrown codes an Attempt keeps as its own (authoring.md §7.4, §8.3 rules 1 and 4). */
import assert from "node:assert/strict";
import { ownCodeOf } from "../../src/attempt/session_line.ts";

Deno.test("ownCodeOf() keeps agent-config-invalid, agent-invalid-turn and sandbox-* codes only", () => {
  const coded = (code: unknown) => Object.assign(new Error("x"), { code });
  assert.equal(ownCodeOf(coded("agent-config-invalid")), "agent-config-invalid");
  assert.equal(ownCodeOf(coded("agent-invalid-turn")), "agent-invalid-turn");
  assert.equal(ownCodeOf(coded("sandbox-unsupported")), "sandbox-unsupported");
  assert.equal(ownCodeOf(coded("ECONNRESET")), undefined);
  assert.equal(ownCodeOf(coded(429)), undefined);
  assert.equal(ownCodeOf(new Error("plain")), undefined);
  assert.equal(ownCodeOf(null), undefined);
});
