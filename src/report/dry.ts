/**
 * `exp --dry` output (DRY-2, DRY-3): the plan per (experiment, eval) with carry decisions. The
 * human rows use the user's words (`reuse`, `rerun (was failed)`); the JSON document keeps the codes.
 */
import type { Plan, PlannedSlot } from "../plan/mod.ts";
import { locatorOf } from "../record/mod.ts";

/** Rows of the human dry-run table, columns aligned. */
export function dryLines(plan: Plan): string[] {
  const rows = groupRows(plan).map((slots) => {
    const first = slots[0]!;
    return [
      first.experimentId,
      first.evalId,
      first.groupId ? `group ${first.groupId}` : "",
      decisions(slots),
    ];
  });
  const w0 = Math.max(0, ...rows.map((r) => r[0]!.length));
  const w1 = Math.max(0, ...rows.map((r) => r[1]!.length));
  return rows.map(([exp, evalId, group, text]) =>
    `${exp!.padEnd(w0)}  ${evalId!.padEnd(w1)}  ${group ? `${group}  ` : ""}${text}`
  );
}

/** The `--dry --json` document. */
export function dryDocument(plan: Plan, header: Record<string, unknown>): Record<string, unknown> {
  return {
    format: "niceeval.plan",
    schemaVersion: 1,
    ...header,
    rows: groupRows(plan).map((slots) => {
      const first = slots[0]!;
      const source = slots.map((s) => s.carry.source).find((s) => s !== null) ?? null;
      return {
        experimentId: first.experimentId,
        evalId: first.evalId,
        groupId: first.groupId,
        sourceRunId: source?.runId ?? null,
        ordinals: slots.map((s) => ({
          ordinal: s.ordinal,
          action: s.carry.action,
          reason: s.carry.action === "run" ? s.carry.reason : null,
          detail: s.carry.action === "run" ? s.carry.detail : null,
          locator: s.carry.source ? locatorOf(s.carry.source.attemptId) : null,
          verdict: s.carry.source?.verdict ?? null,
        })),
      };
    }),
  };
}

/** Slots grouped per (experiment, eval): experiment selection order, then eval discovery order. */
function groupRows(plan: Plan): PlannedSlot[][] {
  const rows = new Map<string, PlannedSlot[]>();
  const ordered = [...plan.slots].sort((a, b) =>
    a.experimentIndex - b.experimentIndex || a.evalIndex - b.evalIndex || a.ordinal - b.ordinal
  );
  for (const slot of ordered) {
    const key = `${slot.experimentIndex}\u0000${slot.evalId}`;
    let row = rows.get(key);
    if (!row) rows.set(key, row = []);
    row.push(slot);
  }
  return [...rows.values()];
}

function decisions(slots: readonly PlannedSlot[]): string {
  const parts: string[] = [];
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[i]!;
    const c = slot.carry;
    if (c.action === "carry") {
      parts.push(`#${slot.ordinal} reuse ${locatorOf(c.source.attemptId)} (${c.source.verdict})`);
      continue;
    }
    const reason = runReasonText(slot);
    let j = i;
    while (j + 1 < slots.length && slots[j + 1]!.carry.action === "run") {
      if (runReasonText(slots[j + 1]!) !== reason) break;
      j++;
    }
    parts.push(
      j > i
        ? `#${slot.ordinal}–${slots[j]!.ordinal} run: ${reason}`
        : `#${slot.ordinal} run: ${reason}`,
    );
    i = j;
  }
  return parts.join(" · ");
}

/** What changed, by the `identity-changed` detail (REC-4): config is the experiment's side. */
const CHANGED: Readonly<Record<string, string>> = {
  config: "experiment changed",
  input: "eval changed",
  "config,input": "experiment and eval changed",
};

/**
 * Why an ordinal runs, in the user's words; the `--dry --json` document keeps the CARRY-6 codes
 * (docs/words.md).
 */
function runReasonText(slot: PlannedSlot): string {
  const c = slot.carry;
  if (c.action !== "run") return "";
  const was = c.source ? ` (was ${c.source.verdict})` : "";
  switch (c.reason) {
    case "new":
      return "new";
    case "identity-changed":
      return CHANGED[c.detail ?? ""] ?? "changed since the earlier result";
    case "verdict-not-eligible":
      return c.source ? `earlier result ${c.source.verdict}` : "no reusable earlier result";
    case "rerun-tier":
      return `rerun${was}`;
    case "duration-exceeds-timeout":
      return "earlier result took longer than the timeout";
  }
}
