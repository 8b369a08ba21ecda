/**
 * The ramp against a real rate-limited service: a local chat-completions server that admits at
 * most 8 requests at once and answers 429 with Retry-After beyond (RAMP-4 … RAMP-7, RETRY-7).
 * The CLI runs 320 one-send Attempts (50 ms each) with `--ramp 2:32` and 1 s windows; the ramp
 * steps down at the first rejection and sleeps a rejected send for the server's hint
 * (docs/ramp.md "Fast pushback").
 */
import assert from "node:assert/strict";
import { type AuditEvent, ConcurrencyReplay } from "../_fakes/attempt.ts";
import { limitedServer } from "../_fakes/limited_chat_server.ts";
import { ndjson, tempProject } from "../_helpers/cli.ts";

const CAPACITY = 8;
const ATTEMPTS = 320;

Deno.test("RAMP-4 RAMP-5 RETRY-7: --ramp 2:32 climbs, backs off on 429s, settles within one step of the server's capacity, every Attempt passes, under 5% 429s", async () => {
  await using server = limitedServer({ capacity: CAPACITY, latencyMs: 50 });
  await using p = await tempProject("ramp_openai_project");
  const r = await p.run(["exp", "--json", "--ramp", "2:32"], {
    env: {
      OPENAI_FIXTURE_BASE_URL: server.baseUrl,
      OPENAI_API_KEY: "sk-test",
      RAMP_ATTEMPTS: String(ATTEMPTS),
    },
  });
  assert.equal(r.code, 0, r.stderr);
  const lines = ndjson(r.stdout);
  const start = lines[0]!;
  assert.deepEqual(start.ramp, { from: 2, to: 32, step: 6, windowMs: 1000, held: null });
  const ramps = lines.filter((l) => l.type === "ramp");
  const states = ramps.map((l) => l.state);
  const firstClimb = states.indexOf("climbing");
  const firstBackOff = states.indexOf("backing off");
  assert.ok(firstClimb >= 0, `no climb: ${JSON.stringify(ramps)}`);
  assert.ok(firstBackOff > firstClimb, `no back-off after the climb: ${JSON.stringify(ramps)}`);
  const backOff = ramps[firstBackOff]!;
  assert.equal(backOff.cause, "pushback");
  // Settled: from the back-off on, the cap stays within one step of the capacity.
  for (const ramp of ramps.slice(firstBackOff)) {
    assert.ok(Math.abs((ramp.cap as number) - CAPACITY) <= 6, JSON.stringify(ramp));
  }
  // Every Attempt completed and passed; the server never ran more than its capacity.
  const ends = lines.filter((l) => l.type === "attempt_end");
  assert.equal(ends.length, ATTEMPTS);
  assert.ok(ends.every((e) => e.verdict === "passed"));
  assert.equal(server.admitted(), ATTEMPTS);
  assert.ok(server.peak() <= CAPACITY);
  assert.ok(server.rejected() > 0, "the ramp overshot the capacity at least once");
  // Fast pushback: the back-off came before any second climb, and under 5% of requests got 429.
  const requests = server.admitted() + server.rejected();
  assert.ok(server.rejected() < 0.05 * requests, `${server.rejected()} of ${requests} got 429`);
  // OUT-J6 with cap(t).
  const replay = new ConcurrencyReplay({ cap: start.concurrency as number });
  for (const line of lines) replay.apply(line as unknown as AuditEvent);
  assert.deepEqual(replay.violations, []);
});
