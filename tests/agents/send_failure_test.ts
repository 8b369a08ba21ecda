import assert from "node:assert/strict";
import {
  classifyRejection,
  completeEvidenceCoverage,
  defineAgent,
  resolveAgent,
  type ResolvedAgent,
  SendRejectedError,
  type Turn,
} from "../../src/agents/mod.ts";

function agent(classifySendFailure?: (error: unknown) => unknown): ResolvedAgent {
  return resolveAgent(defineAgent({
    name: "a",
    evidenceCoverage: completeEvidenceCoverage,
    send: (): Promise<Turn> => Promise.resolve({ status: "completed", events: [] }),
    ...(classifySendFailure ? { classifySendFailure: classifySendFailure as never } : {}),
  }))!;
}

Deno.test("SendRejectedError carries name, reason, retryAfterMs and cause", () => {
  const cause = new Error("429");
  const error = new SendRejectedError("busy", { reason: "rate_limit", retryAfterMs: 1500, cause });
  assert.ok(error instanceof Error);
  assert.equal(error.name, "SendRejectedError");
  assert.equal(error.message, "busy");
  assert.equal(error.reason, "rate_limit");
  assert.equal(error.retryAfterMs, 1500);
  assert.equal(error.cause, cause);
});

Deno.test("SendRejectedError omits retryAfterMs and cause when not given", () => {
  const error = new SendRejectedError("refused", { reason: "network" });
  assert.equal("retryAfterMs" in error, false);
  assert.equal("cause" in error, false);
});

Deno.test("SendRejectedError rejects an invalid reason or delay", () => {
  assert.throws(() => new SendRejectedError("x", { reason: "timeout" as never }), TypeError);
  assert.throws(
    () => new SendRejectedError("x", { reason: "network", retryAfterMs: -1 }),
    RangeError,
  );
});

Deno.test("classifyRejection() recognises a SendRejectedError", () => {
  const error = new SendRejectedError("busy", { reason: "rate_limit", retryAfterMs: 200 });
  assert.deepEqual(classifyRejection(error, agent()), { reason: "rate_limit", retryAfterMs: 200 });
});

Deno.test("classifyRejection() recognises a SendRejectedError from another copy of the API", () => {
  const foreign = { name: "SendRejectedError", message: "x", reason: "network" };
  assert.deepEqual(classifyRejection(foreign, agent()), { reason: "network" });
});

Deno.test("classifyRejection() drops a foreign copy's invalid retryAfterMs", () => {
  const foreign = { name: "SendRejectedError", reason: "rate_limit", retryAfterMs: "soon" };
  assert.deepEqual(classifyRejection(foreign, agent()), { reason: "rate_limit" });
});

Deno.test("classifyRejection() prefers a SendRejectedError over classifySendFailure", () => {
  let asked = false;
  const classifier = () => {
    asked = true;
    return { reason: "rate_limit" };
  };
  const error = new SendRejectedError("x", { reason: "network" });
  assert.deepEqual(classifyRejection(error, agent(classifier)), { reason: "network" });
  assert.equal(asked, false);
});

Deno.test("classifyRejection() falls back to classifySendFailure when the name matches but the reason is invalid", () => {
  const foreign = { name: "SendRejectedError", reason: "timeout" };
  const seen: unknown[] = [];
  const classifier = (error: unknown) => {
    seen.push(error);
    return { reason: "rate_limit", retryAfterMs: 10 };
  };
  assert.deepEqual(classifyRejection(foreign, agent(classifier)), {
    reason: "rate_limit",
    retryAfterMs: 10,
  });
  assert.deepEqual(seen, [foreign]);
});

Deno.test("classifyRejection() uses the agent's classifySendFailure", () => {
  const classifier = (error: unknown) =>
    (error as Error).message === "ECONNREFUSED" ? { reason: "network" } : undefined;
  assert.deepEqual(classifyRejection(new Error("ECONNREFUSED"), agent(classifier)), {
    reason: "network",
  });
  assert.equal(classifyRejection(new Error("HTTP 500"), agent(classifier)), undefined);
});

Deno.test("classifyRejection() returns undefined when classifySendFailure throws", () => {
  const classifier = () => {
    throw new Error("classifier bug");
  };
  assert.equal(classifyRejection(new Error("x"), agent(classifier)), undefined);
});

Deno.test("classifyRejection() returns undefined for an invalid classification", () => {
  for (
    const bad of [
      { reason: "timeout" },
      { reason: "network", retryAfterMs: -5 },
      { reason: "network", retryAfterMs: Infinity },
      "network",
      null,
    ]
  ) {
    assert.equal(classifyRejection(new Error("x"), agent(() => bad)), undefined, String(bad));
  }
});

Deno.test("classifyRejection() returns undefined for an async classifier", async () => {
  const pending = Promise.reject(new Error("async"));
  assert.equal(classifyRejection(new Error("x"), agent(() => pending)), undefined);
  await pending.catch(() => undefined);
});

Deno.test("classifyRejection() returns undefined without a classifier", () => {
  assert.equal(classifyRejection(new Error("x"), agent()), undefined);
  assert.equal(classifyRejection("a string", agent()), undefined);
});
