/** File-operation retry on fake time (sandboxes.md rule 33). */
import assert from "node:assert/strict";
import {
  isTransientFileError,
  SandboxFileNotFoundError,
  SandboxPathError,
  SandboxRetiredError,
  withFileRetry,
} from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createScriptedRandom } from "../_fakes/random.ts";

Deno.test("isTransientFileError() accepts only transient transport errors", () => {
  const transient = [
    { status: 429 },
    { status: 502 },
    { statusCode: 500 },
    Object.assign(new Error("x"), { code: "ECONNRESET" }),
    Object.assign(new Error("x"), { code: "EPIPE" }),
    new Error("connect ECONNREFUSED 127.0.0.1:2375"),
    new Error("getaddrinfo EAI_AGAIN host"),
    Object.assign(new Error("x"), { code: "ETIMEDOUT" }),
    new TypeError("fetch failed"),
    new Error("wrapped", { cause: new Error("read ECONNRESET") }),
  ];
  const permanent = [
    { status: 404 },
    { status: 403 },
    new SandboxFileNotFoundError("/a", "missing"),
    new SandboxPathError("/a", "bad"),
    new SandboxRetiredError("gone"),
    new Deno.errors.PermissionDenied("denied"),
    new Deno.errors.NotFound("missing"),
    new DOMException("aborted", "AbortError"),
    new Error("something else"),
    "ECONNRESET",
  ];
  for (const e of transient) assert.equal(isTransientFileError(e), true, String(e));
  for (const e of permanent) assert.equal(isTransientFileError(e), false, String(e));
});

Deno.test("withFileRetry() makes 3 tries with delays 200·2^k·(0.5+U) on the clock", async () => {
  const clock = createFakeClock();
  const start = clock.now();
  const at: number[] = [];
  const result = withFileRetry(() => {
    at.push(clock.now() - start);
    return at.length < 3 ? Promise.reject({ status: 503 }) : Promise.resolve("ok");
  }, { clock, random: createScriptedRandom([0, 1]) });
  await clock.runAllAsync();
  assert.equal(await result, "ok");
  assert.deepEqual(at, [0, 100, 100 + 600]);
});

Deno.test("withFileRetry() rethrows after the third transient failure", async () => {
  const clock = createFakeClock();
  let tries = 0;
  const result = withFileRetry(() => {
    tries++;
    return Promise.reject(Object.assign(new Error("reset"), { code: "ECONNRESET" }));
  }, { clock, random: createScriptedRandom([0.5]) }).then(() => undefined, (e) => e);
  await clock.runAllAsync();
  assert.equal((await result as { code: string }).code, "ECONNRESET");
  assert.equal(tries, 3);
});

Deno.test("withFileRetry() never retries a not-found error", async () => {
  const clock = createFakeClock();
  let tries = 0;
  const error = await withFileRetry(() => {
    tries++;
    return Promise.reject(new SandboxFileNotFoundError("/x", "missing"));
  }, { clock, random: createScriptedRandom([0.5]) }).then(() => undefined, (e) => e);
  assert.equal((error as SandboxFileNotFoundError).code, "sandbox-file-not-found");
  assert.equal(tries, 1);
});

Deno.test("withFileRetry() stops waiting when the signal aborts", async () => {
  const clock = createFakeClock();
  const controller = new AbortController();
  let tries = 0;
  const result = withFileRetry(() => {
    tries++;
    return Promise.reject({ status: 429 });
  }, { clock, random: createScriptedRandom([0.5]), signal: controller.signal })
    .then(() => undefined, (e) => e);
  await clock.tickAsync(50);
  const reason = new Error("stop");
  controller.abort(reason);
  assert.equal(await result, reason);
  assert.equal(tries, 1);
});
