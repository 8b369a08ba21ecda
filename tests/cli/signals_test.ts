import assert from "node:assert/strict";
import { createSignalCounter, SIGNAL_DEDUPE_MS } from "../../src/cli/signals.ts";
import { createFakeClock } from "../_fakes/clock.ts";

function counter(relayed: boolean) {
  const clock = createFakeClock();
  const calls: string[] = [];
  const count = createSignalCounter({
    clock,
    relayed,
    onInterrupt: (name) => calls.push(`interrupt ${name}`),
    onForce: (name) => calls.push(`force ${name}`),
    onExit: () => calls.push("exit"),
  });
  return { clock, calls, count };
}

Deno.test("createSignalCounter() interrupts, forces, then exits on three signals without a launcher", () => {
  const { calls, count } = counter(false);
  count("SIGINT");
  count("SIGINT");
  count("SIGTERM");
  assert.deepEqual(calls, ["interrupt SIGINT", "force SIGINT", "exit"]);
});

Deno.test("createSignalCounter() counts a relayed repeat within the window once", async () => {
  const { clock, calls, count } = counter(true);
  count("SIGINT");
  await clock.tickAsync(SIGNAL_DEDUPE_MS - 1);
  count("SIGINT");
  assert.deepEqual(calls, ["interrupt SIGINT"]);
});

Deno.test("createSignalCounter() counts a repeat at the end of the window as a second signal", async () => {
  const { clock, calls, count } = counter(true);
  count("SIGINT");
  await clock.tickAsync(SIGNAL_DEDUPE_MS);
  count("SIGINT");
  assert.deepEqual(calls, ["interrupt SIGINT", "force SIGINT"]);
});

Deno.test("createSignalCounter() never merges two different signals under a launcher", () => {
  const { calls, count } = counter(true);
  count("SIGINT");
  count("SIGTERM");
  assert.deepEqual(calls, ["interrupt SIGINT", "force SIGTERM"]);
});

Deno.test("createSignalCounter() measures the window from the last counted signal", async () => {
  const { clock, calls, count } = counter(true);
  count("SIGINT");
  await clock.tickAsync(SIGNAL_DEDUPE_MS - 1);
  count("SIGINT"); // the relayed copy: ignored, the window does not restart
  await clock.tickAsync(1);
  count("SIGINT");
  assert.deepEqual(calls, ["interrupt SIGINT", "force SIGINT"]);
});

Deno.test("createSignalCounter() counts every repeat without a launcher, however close", () => {
  const { calls, count } = counter(false);
  count("SIGINT");
  count("SIGINT");
  assert.deepEqual(calls, ["interrupt SIGINT", "force SIGINT"]);
});
