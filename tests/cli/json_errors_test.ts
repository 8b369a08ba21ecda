/** Issue 18.8: with `--json` an error is also an NDJSON `error` line on stdout (main()). */
import assert from "node:assert/strict";
import { VERSION } from "../../src/_shared/version.ts";
import { main } from "../../src/cli/main.ts";
import { createCapturedSink, createFakeIo } from "../_fakes/io.ts";

const AT = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

Deno.test("issue 18.8: main() writes a usage error as one error line with --json", async () => {
  const io = createFakeIo();
  assert.equal(await main(["exp", "--json", "--timeout", "5x"], io), 2);
  const { at, ...line } = JSON.parse(io.stdout.text());
  assert.match(at, AT);
  assert.deepEqual(line, {
    type: "error",
    experimentId: null,
    evalId: null,
    ordinal: null,
    locator: null,
    code: "usage",
    phase: null,
    message:
      '--timeout requires a duration: a whole number with ms, s or m (plain numbers are ms), got "5x"',
    hint: "pass for example --timeout 30s, --timeout 2m or --timeout 5000",
    details: [],
  });
  assert.equal(io.stdout.text().split("\n").length, 2, "one line");
  assert.match(io.stderr.text(), /^error: --timeout requires a duration/);
  // After `--`, --json is an argument, not the flag.
  const plain = createFakeIo();
  assert.equal(await main(["exp", "--timeout", "5x", "--", "--json"], plain), 2);
  assert.equal(plain.stdout.text(), "");
});

Deno.test("issue 18.8: main() writes an internal error as an error line once, and survives a dead stdout", async () => {
  const io = createFakeIo();
  let writes = 0;
  const flaky = {
    ...io,
    stdout: {
      ...io.stdout,
      write: (text: string) => {
        if (writes++ === 0) throw new Error("stdout hiccup");
        io.stdout.write(text);
      },
    },
  };
  assert.equal(await main(["--version", "--json"], flaky), 3);
  const line = JSON.parse(io.stdout.text());
  assert.deepEqual([line.type, line.code, line.message], [
    "error",
    "internal-error",
    "stdout hiccup",
  ]);
  assert.equal(
    line.hint,
    `this is a niceeval bug (version ${VERSION}); please report it with the output above`,
  );
  const dead = createFakeIo();
  const broken = {
    ...dead,
    stdout: {
      ...createCapturedSink(),
      write: () => {
        throw new Error("stdout is gone");
      },
    },
  };
  assert.equal(await main(["--version", "--json"], broken), 3);
  assert.match(dead.stderr.text(), /^internal error: stdout is gone\n/);
});
