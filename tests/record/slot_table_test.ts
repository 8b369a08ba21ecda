/** The writer's compact slots (issue 20): every field comes back as it was stored. */
import assert from "node:assert/strict";
import { SlotTable } from "../../src/record/_slot_table.ts";
import type { WriterSlot } from "../../src/record/documents.ts";
import { slotIdOf } from "../../src/record/mod.ts";

const DIGEST = `sha256:${"0123456789abcdef".repeat(4)}`;

function slot(position: number, over: Partial<WriterSlot> = {}): WriterSlot {
  return {
    position,
    slotId: `slot-${position}`,
    evalId: `e${position}`,
    ordinal: position % 3,
    kind: position % 2 === 0 ? "pass" : "score",
    executionIdentityDigest: DIGEST.replace("0123", String(1000 + position)),
    carried: null,
    ...over,
  };
}

Deno.test("issue 20: SlotTable rebuilds each slot exactly, digests of any form included", () => {
  const slots = [
    slot(0),
    slot(1, { carried: { originRunId: "run-0", attemptId: "att-0" } }),
    slot(3, { executionIdentityDigest: "d-not-sha" }),
  ];
  const table = new SlotTable(5);
  for (const s of slots) table.set(s, s.position === 3 ? 1 : 0);
  for (const s of slots) assert.deepEqual(table.slot(s.position), s);
  assert.equal(table.slot(2), undefined);
  assert.equal(table.slot(7), undefined);
  assert.deepEqual([0, 1, 2, 3, 4].map((p) => table.runOf(p)), [0, 0, -1, 1, -1]);
  assert.deepEqual(table.memberFields(1), { slotId: "slot-1", evalId: "e1", ordinal: 1 });
});

Deno.test("issue 20: SlotTable stores a sha256 digest as 32 bytes and gives every one back", () => {
  const size = 300;
  const table = new SlotTable(size);
  const digests: string[] = [];
  for (let p = 0; p < size; p++) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    if (p === 0) bytes.fill(0);
    if (p === 1) bytes.fill(255);
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    digests.push(`sha256:${hex}`);
    table.set(slot(p, { executionIdentityDigest: digests[p]! }), 0);
  }
  for (let p = 0; p < size; p++) {
    assert.equal(table.slot(p)!.executionIdentityDigest, digests[p]);
  }
});

Deno.test("issue 20: SlotTable keeps a SlotId as 8 bytes and the ordinal, and any other form as given", () => {
  const table = new SlotTable(6);
  const slots = [
    slot(0, { slotId: slotIdOf("greet/hello", 0), evalId: "greet/hello", ordinal: 0 }),
    slot(1, { slotId: slotIdOf("x", 12345), evalId: "x", ordinal: 12345 }),
    slot(2, { slotId: "00ff00ff00ff00ff-0007", ordinal: 3 }),
    slot(3, { slotId: "00FF00FF00FF00FF-0003", ordinal: 3 }),
    slot(4, { slotId: "00ff00ff00ff00f-00003", ordinal: 3 }),
    slot(5, { slotId: "ffffffffffffffff-0001", ordinal: 1 }),
  ];
  for (const s of slots) table.set(s, 0);
  for (const s of slots) {
    assert.deepEqual(table.slot(s.position), s);
    assert.equal(table.memberFields(s.position)!.slotId, s.slotId);
  }
});

Deno.test("issue 20: SlotTable claims a member once per slot", () => {
  const table = new SlotTable(2);
  table.set(slot(0), 0);
  assert.equal(table.claimMember(0), true);
  assert.equal(table.claimMember(0), false);
  assert.equal(table.claimMember(1), true);
});
