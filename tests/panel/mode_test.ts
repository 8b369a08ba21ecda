import assert from "node:assert/strict";
import { humanMode } from "../../src/panel/mod.ts";

const TTY = { stdoutIsTerminal: true, stderrIsTerminal: true, stdoutColumns: 100 };

Deno.test("humanMode() is live only when stderr is a terminal, CI is unset, false or 0, and TERM is not dumb (OUT-H1)", () => {
  assert.equal(humanMode({ ...TTY, env: {} }).live, true);
  for (const CI of ["false", "0", ""]) {
    assert.equal(humanMode({ ...TTY, env: { CI } }).live, true, CI);
  }
  for (const env of [{ CI: "1" }, { CI: "true" }, { TERM: "dumb" }]) {
    assert.equal(humanMode({ ...TTY, env }).live, false, JSON.stringify(env));
  }
  assert.equal(humanMode({ ...TTY, stderrIsTerminal: false, env: {} }).live, false);
});

Deno.test("humanMode() boxes permanent output only on a terminal stdout of 60+ columns without NO_COLOR (OUT-H2)", () => {
  assert.deepEqual(humanMode({ ...TTY, env: {} }), {
    live: true,
    noColor: false,
    boxed: true,
    color: true,
    width: 100,
    wrap: true,
  });
  assert.deepEqual(humanMode({ ...TTY, env: { NO_COLOR: "1" } }), {
    live: true,
    noColor: true,
    boxed: false,
    color: false,
    width: 100,
    wrap: true,
  });
  assert.equal(
    humanMode({ ...TTY, env: { NO_COLOR: "" } }).boxed,
    true,
    "an empty NO_COLOR is unset",
  );
  assert.equal(humanMode({ ...TTY, stdoutColumns: 59, env: {} }).boxed, false);
  assert.equal(humanMode({ ...TTY, stdoutIsTerminal: false, env: {} }).boxed, false);
  assert.equal(
    humanMode({ ...TTY, stdoutColumns: undefined, env: {} }).width,
    80,
    "80 columns when unknown",
  );
});

Deno.test("humanMode() keeps plain mode free of colour even on a terminal (OUT-H16)", () => {
  assert.deepEqual(humanMode({ ...TTY, env: { CI: "1" } }), {
    live: false,
    noColor: false,
    boxed: true,
    color: false,
    width: 100,
    wrap: true,
  });
});

Deno.test("issue 18.5: humanMode() breaks unboxed lines at the width only on a terminal stdout, never in logs", () => {
  assert.equal(humanMode({ ...TTY, stdoutColumns: 50, env: { CI: "1" } }).wrap, true);
  assert.equal(humanMode({ ...TTY, stdoutIsTerminal: false, env: { CI: "1" } }).wrap, false);
});
