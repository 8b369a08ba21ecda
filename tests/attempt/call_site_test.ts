import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CallSiteFinder, callSiteOf, captureCallSite } from "../../src/attempt/call_site.ts";

const ROOT = "/home/u/project";
const OWN = "/opt/niceeval/src";

function stack(...frames: string[]): string {
  return ["Error", ...frames.map((f) => `    at ${f}`)].join("\n");
}

Deno.test("callSiteOf() returns the first project frame after niceeval's own frames", () => {
  const s = stack(
    "callSite (file:///opt/niceeval/src/attempt/run_attempt.ts:90:40)",
    "Object.check (file:///opt/niceeval/src/expect/recorder.ts:80:3)",
    "test (file:///home/u/project/evals/tool/weather.eval.ts:12:7)",
    "file:///home/u/project/evals/other.eval.ts:3:1",
  );
  assert.equal(callSiteOf(s, ROOT, OWN), "evals/tool/weather.eval.ts:12");
});

Deno.test("callSiteOf() skips node_modules, runtime internals and files outside the root", () => {
  const s = stack(
    "ext:core/01_core.js:10:2",
    "helper (file:///home/u/project/node_modules/lib/index.js:4:4)",
    "other (file:///home/u/other/x.ts:1:1)",
    "async Promise.all (index 0)",
    "new Promise (<anonymous>)",
  );
  assert.equal(callSiteOf(s, ROOT, OWN), null);
  assert.equal(callSiteOf(undefined, ROOT, OWN), null);
});

Deno.test("callSiteOf() does not mistake a sibling directory for niceeval's own sources", () => {
  const s = stack("test (file:///opt/niceeval/src-evals/a.eval.ts:5:1)");
  assert.equal(callSiteOf(s, "/opt/niceeval", OWN), "src-evals/a.eval.ts:5");
});

Deno.test("callSiteOf() decodes file URLs and keeps parentheses in paths", () => {
  const s = stack("test (file:///home/u/project/evals/my%20dir%20(1)/a.eval.ts:9:3)");
  assert.equal(callSiteOf(s, ROOT, OWN), "evals/my dir (1)/a.eval.ts:9");
});

Deno.test("callSiteOf() accepts frames a loader rewrote to project-relative paths", () => {
  const s = stack(
    "check (file:///opt/niceeval/src/attempt/context.ts:1:1)",
    "eval (eval at run (file:///x.ts:1:2), <anonymous>:1:1)",
    "test (evals/throws.eval.ts:3:5)",
  );
  assert.equal(callSiteOf(s, ROOT, OWN), "evals/throws.eval.ts:3");
  assert.equal(callSiteOf(stack("x (../outside.ts:1:1)"), ROOT, OWN), null);
});

const REPO = fileURLToPath(new URL("../../", import.meta.url)).replace(/\/$/, "");
const V8 = Error as unknown as {
  prepareStackTrace?: (error: Error, sites: unknown[]) => unknown;
  stackTraceLimit: number;
};

Deno.test("captureCallSite() finds the same project frame and line as the formatted stack", () => {
  const own = join(REPO, "src");
  const [fast, text] = [captureCallSite(REPO, own), callSiteOf(new Error().stack, REPO, own)];
  assert.match(fast ?? "", /^tests\/attempt\/call_site_test\.ts:\d+$/);
  assert.equal(fast, text);
});

Deno.test("captureCallSite() skips niceeval's own frames, runtime frames and outside files", () => {
  // With this test file as "niceeval's own", its caller frames are skipped; the next frames are
  // the test runner's (no project file), so nothing is found.
  const testsDir = join(REPO, "tests", "attempt");
  assert.equal(captureCallSite(join(REPO, "tests"), testsDir), null);
  assert.equal(captureCallSite("/nonexistent-root", join(REPO, "src")), null);
  const tests = join(REPO, "tests");
  const site = captureCallSite(tests, join(REPO, "src"));
  const next = callSiteOf(new Error().stack, tests, join(REPO, "src"));
  assert.equal(site, `attempt/call_site_test.ts:${Number(next?.split(":")[1]) - 1}`);
});

Deno.test("captureCallSite() restores Error.prepareStackTrace and Error.stackTraceLimit", () => {
  const limit = V8.stackTraceLimit;
  captureCallSite(REPO, join(REPO, "src"));
  assert.equal(V8.prepareStackTrace, undefined);
  assert.equal(V8.stackTraceLimit, limit);
  assert.match(new Error().stack ?? "", /call_site_test\.ts/);
});

Deno.test("captureCallSite() reads the text of an installed stack formatter (a loader's rewrite)", () => {
  const rewritten = "Error\n    at check (x)\n    at test (evals/rewritten.eval.ts:7:3)";
  V8.prepareStackTrace = () => rewritten;
  try {
    assert.equal(captureCallSite(REPO, join(REPO, "src")), "evals/rewritten.eval.ts:7");
    assert.equal(new Error().stack, rewritten);
  } finally {
    delete V8.prepareStackTrace;
  }
});

Deno.test("CallSiteFinder.find() skips the frames of the marker's call and above", () => {
  const own = join(REPO, "src");
  const finder = new CallSiteFinder(REPO, own);
  const entry = (): string | null => helper();
  const helper = (): string | null => finder.find(entry);
  const here = callSiteOf(new Error().stack, REPO, own);
  const site = entry();
  assert.equal(site, `tests/attempt/call_site_test.ts:${Number(here?.split(":")[1]) + 1}`);
});

Deno.test("CallSiteFinder.find() looks past the narrow window and falls back without the marker", () => {
  // With this file as "niceeval's own", the nearest project frames are the test runner's: none.
  const tests = join(REPO, "tests");
  const finder = new CallSiteFinder(REPO, join(tests, "attempt"));
  const deep = (n: number): string | null => n === 0 ? finder.find(marker) : deep(n - 1);
  const marker = (): string | null => deep(5);
  assert.equal(marker(), null);
  // Not on the stack: the frames of the caller are looked at, as captureCallSite() does.
  const plain = new CallSiteFinder(REPO, join(REPO, "src"));
  const site = plain.find(() => null);
  assert.match(site ?? "", /^tests\/attempt\/call_site_test\.ts:\d+$/);
});

Deno.test("CallSiteFinder.find() answers the same for a repeated frame file (memo)", () => {
  const finder = new CallSiteFinder(REPO, join(REPO, "src"));
  const at = () => finder.find(at);
  const [first, second] = [at(), at()];
  assert.match(first ?? "", /^tests\/attempt\/call_site_test\.ts:\d+$/);
  assert.equal(first, second);
});

Deno.test("CallSiteFinder.find() with an entry reports the entry's caller", () => {
  const own = join(REPO, "src");
  const finder = new CallSiteFinder(REPO, own);
  const marker = (entry?: () => unknown): string | null => finder.find(marker, entry);
  const entry = (): string | null => inner();
  const inner = (): string | null => marker(entry);
  const here = callSiteOf(new Error().stack, REPO, own);
  const withEntry = entry();
  // The frames between the marker and the entry (here the test's own `inner`) are skipped.
  assert.equal(withEntry, `tests/attempt/call_site_test.ts:${Number(here?.split(":")[1]) + 1}`);
  // The same site twice is the same text.
  const [once, twice] = [entry(), entry()];
  assert.equal(once, twice);
  // An entry that is not on the stack changes nothing.
  assert.equal(finder.find(marker, () => null), marker());
});

Deno.test("CallSiteFinder.find() looks on from the marker when the entry's caller is no project frame", () => {
  const finder = new CallSiteFinder(REPO, join(REPO, "src"));
  V8.prepareStackTrace = (_error, sites) =>
    sites.length === 1
      ? "Error\n    at helper (node_modules/lib/helper.js:1:1)"
      : "Error\n    at check (x)\n    at test (evals/rewritten.eval.ts:7:3)";
  try {
    const marker = (): string | null => finder.find(marker, entry);
    const entry = (): string | null => marker();
    assert.equal(entry(), "evals/rewritten.eval.ts:7");
  } finally {
    delete V8.prepareStackTrace;
  }
});

/** The trace of `error` in the project at {@link ROOT}, niceeval's sources at {@link OWN}. */
function traceOf(error: unknown) {
  return new CallSiteFinder(ROOT, OWN).trace(error);
}

/** A TypeError whose stack is `frames` under the usual `TypeError: <message>` header. */
function thrown(message: string, ...frames: string[]): Error {
  const error = new TypeError(message);
  error.stack = [`TypeError: ${message}`, ...frames.map((f) => `    at ${f}`)].join("\n");
  return error;
}

Deno.test("CallSiteFinder.trace() keeps the user frames of a stack mixed with niceeval, runtime and dependency frames", () => {
  const error = thrown(
    "Cannot read properties of undefined (reading 'bar')",
    "helper (file:///home/u/project/evals/throws.eval.ts:4:10)",
    "Object.test (file:///home/u/project/evals/throws.eval.ts:11:5)",
    "async file:///opt/niceeval/src/attempt/run_attempt.ts:327:7",
    "async AttemptState.phase (file:///opt/niceeval/src/attempt/state.ts:129:14)",
    "ext:core/01_core.js:10:2",
    "node:internal/process/task_queues:95:5",
    "lib (file:///home/u/project/node_modules/lib/index.js:4:4)",
    "dep (file:///home/u/.cache/deno/npm/registry.npmjs.org/dep/1.0.0/index.js:1:1)",
    "async Promise.all (index 0)",
    "new Promise (<anonymous>)",
    "async run (evals/rewritten.eval.ts:3:5)",
    "file:///home/u/project/evals/top.eval.ts:1:7",
  );
  assert.deepEqual(traceOf(error), {
    location: "evals/throws.eval.ts:4:10",
    stack: [
      "at helper (evals/throws.eval.ts:4:10)",
      "at Object.test (evals/throws.eval.ts:11:5)",
      "at async run (evals/rewritten.eval.ts:3:5)",
      "at evals/top.eval.ts:1:7",
    ].join("\n"),
  });
});

Deno.test("CallSiteFinder.trace() gives no trace for non-Error throws and errors without a user frame", () => {
  const none = { location: null, stack: null };
  const userStack = "Error: x\n    at test (file:///home/u/project/evals/a.eval.ts:1:1)";
  assert.deepEqual(traceOf("boom"), none);
  assert.deepEqual(traceOf(undefined), none);
  assert.deepEqual(traceOf({ message: "x", stack: userStack }), none);
  const internal = thrown("x", "check (file:///opt/niceeval/src/expect/recorder.ts:80:3)");
  assert.deepEqual(traceOf(internal), none);
  const noStack = new Error("x");
  Object.defineProperty(noStack, "stack", { value: undefined });
  assert.deepEqual(traceOf(noStack), none);
});

Deno.test("CallSiteFinder.trace() gives no trace, and does not throw, for a hostile thrown value", () => {
  const trap = new Proxy({}, {
    getPrototypeOf() {
      throw new Error("trap");
    },
  });
  const getter = new Error("x");
  Object.defineProperty(getter, "stack", {
    get() {
      throw new Error("getter");
    },
  });
  assert.deepEqual(traceOf(trap), { location: null, stack: null });
  assert.deepEqual(traceOf(getter), { location: null, stack: null });
});

Deno.test("CallSiteFinder.trace() never reads a line of the message as a frame", () => {
  const message = "bad input:\n    at fake (file:///home/u/project/evals/fake.eval.ts:9:9)";
  const error = thrown(message, "test (file:///home/u/project/evals/real.eval.ts:2:3)");
  assert.equal(traceOf(error).location, "evals/real.eval.ts:2:3");
});

Deno.test("CallSiteFinder.trace() bounds the trimmed stack to 10 frames and 4096 characters", () => {
  const deep = Array.from(
    { length: 30 },
    (_, i) => `f${i} (file:///home/u/project/evals/deep.eval.ts:${i + 1}:1)`,
  );
  const frames = traceOf(thrown("x", ...deep)).stack?.split("\n") ?? [];
  assert.equal(frames.length, 10);
  assert.equal(frames[9], "at f9 (evals/deep.eval.ts:10:1)");
  const long = `file:///home/u/project/evals/${"d".repeat(1500)}.eval.ts`;
  const wide = Array.from({ length: 5 }, (_, i) => `w${i} (${long}:${i + 1}:1)`);
  const trace = traceOf(thrown("x", ...wide));
  assert.ok((trace.stack?.length ?? 0) <= 4096, String(trace.stack?.length));
  assert.equal(trace.stack?.split("\n").length, 2);
  assert.equal(trace.location, `evals/${"d".repeat(1500)}.eval.ts:1:1`);
});

Deno.test("CallSiteFinder.trace() looks along the cause chain when the thrown error has no user frame", () => {
  const cause = thrown("no network", "setup (file:///home/u/project/evals/hooks.eval.ts:7:11)");
  const wrapper = thrown("Cannot set up", "run (file:///opt/niceeval/src/sandbox/_steps.ts:90:5)");
  wrapper.cause = cause;
  assert.deepEqual(traceOf(wrapper), {
    location: "evals/hooks.eval.ts:7:11",
    stack: "at setup (evals/hooks.eval.ts:7:11)",
  });
});

Deno.test("CallSiteFinder.trace() locates a real thrown error in this file and drops the runner's frames", () => {
  const own = join(REPO, "src");
  let error: unknown;
  const here = callSiteOf(new Error().stack, REPO, own);
  try {
    (undefined as unknown as { foo: { bar(): void } }).foo.bar();
  } catch (caught) {
    error = caught;
  }
  const trace = new CallSiteFinder(REPO, own).trace(error);
  const line = Number(here?.split(":")[1]) + 2;
  assert.match(
    trace.location ?? "",
    new RegExp(`^tests/attempt/call_site_test\\.ts:${line}:\\d+$`),
  );
  assert.equal(trace.stack, `at ${trace.location}`);
});
