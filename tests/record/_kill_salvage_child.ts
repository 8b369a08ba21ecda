/**
 * Child of kill_salvage_test.ts: writes one Run through the real `RecordWriter` and never finishes
 * it. Arguments: `<root> <runId> <slots> <seed>`. After `begin` it prints `ready`; then it settles
 * the slots' Attempts in seeded groups, each group followed by `writer.flush()`, and only after a
 * flush resolved prints one `durable <position> <attemptId> <verdict>` line per Attempt of the
 * group. The next Attempt is always started before the group is flushed, so a kill finds one
 * started Attempt with no result. When every slot settled it prints `all` and waits to be killed.
 */
import { RecordWriter } from "../../src/record/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createSeededRandom } from "../_fakes/random.ts";
import { result } from "../_fakes/results.ts";
import { passRunSpec, uuidOf } from "../_fakes/record.ts";

const VERDICTS = ["passed", "failed", "errored"] as const;
/** Attempts settled before a flush at most. */
const GROUP_MAX = 4;

const [root, runId, slotText, seedText] = Deno.args;
if (!root || !runId || !slotText || !seedText) {
  throw new TypeError("Usage: _kill_salvage_child.ts <root> <runId> <slots> <seed>");
}
const slots = Number(slotText);
const seed = Number(seedText);
const encoder = new TextEncoder();

async function say(line: string): Promise<void> {
  const bytes = encoder.encode(`${line}\n`);
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}

const clock = createFakeClock();
const rng = createSeededRandom(seed);
const writer = new RecordWriter(root, { clock, random: createSeededRandom(seed + 1) });
await writer.begin([
  passRunSpec(
    runId,
    Date.UTC(2026, 10, 29, 10, 0, 0),
    Array.from({ length: slots }, (_, i) => `e${i}`),
  ),
]);
if (writer.failure) throw writer.failure;
await say("ready");

const slotOf = (position: number) => ({
  position,
  experimentId: "exp",
  evalId: `e${position}`,
  ordinal: 0,
});
const attemptIdOf = (position: number) => uuidOf(`${runId}-attempt-${position}`);
const start = (position: number) => {
  if (position >= slots) return;
  writer.handle({
    type: "attempt_start",
    at: clock.now(),
    slot: slotOf(position),
    attemptId: attemptIdOf(position),
  });
};

start(0);
let position = 0;
while (position < slots) {
  const group: string[] = [];
  const size = 1 + Math.floor(rng.next() * GROUP_MAX);
  for (let i = 0; i < size && position < slots; i++, position++) {
    const verdict = VERDICTS[Math.floor(rng.next() * VERDICTS.length)]!;
    const attemptId = attemptIdOf(position);
    start(position + 1);
    writer.handle({
      type: "attempt_end",
      at: clock.now(),
      slot: slotOf(position),
      result: result({ attemptId, evalId: `e${position}`, verdict }),
    });
    group.push(`durable ${position} ${attemptId} ${verdict}`);
  }
  await writer.flush();
  if (writer.failure) throw writer.failure;
  for (const line of group) await say(line);
}
await say("all");
// Never finishes the Run: the parent kills this process. Reading stdin blocks until then.
for await (const _ of Deno.stdin.readable) {
  // Nothing is expected on stdin.
}
