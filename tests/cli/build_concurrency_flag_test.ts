import assert from "node:assert/strict";
import { UsageError } from "../../src/_shared/errors.ts";
import { expOptions } from "../../src/cli/exp_options.ts";
import { EXP_FLAGS, parseFlags } from "../../src/cli/flags.ts";
import { main } from "../../src/cli/main.ts";
import { createFakeIo } from "../_fakes/io.ts";

function options(...args: string[]) {
  return expOptions(parseFlags(args, EXP_FLAGS, "exp"));
}

Deno.test("expOptions() maps --max-build-concurrency to maxBuildConcurrency", () => {
  assert.equal(options("--max-build-concurrency", "3").maxBuildConcurrency, 3);
  assert.equal(options("--max-build-concurrency=1").maxBuildConcurrency, 1);
  assert.equal(options("--max-build-concurrency", "64").maxBuildConcurrency, 64);
});

Deno.test("expOptions() leaves maxBuildConcurrency unset without the flag", () => {
  assert.ok(!("maxBuildConcurrency" in options("local")));
});

Deno.test("expOptions() rejects --max-build-concurrency out of range or not an integer", () => {
  for (const raw of ["0", "-1", "1.5", "two", "", "65"]) {
    assert.throws(
      () => options(`--max-build-concurrency=${raw}`),
      (error: unknown) =>
        error instanceof UsageError && error.code === "usage" &&
        error.message.startsWith("--max-build-concurrency requires an integer") &&
        /whole number/.test(error.hint),
      raw,
    );
  }
});

for (const raw of ["0", "junk"]) {
  Deno.test(`main() exits 2 with a hint for --max-build-concurrency ${raw}`, async () => {
    const io = createFakeIo();
    const code = await main(["exp", "--max-build-concurrency", raw], io);
    assert.equal(code, 2);
    assert.equal(io.stdout.text(), "");
    assert.equal(
      io.stderr.text(),
      `error: --max-build-concurrency requires an integer ≥ 1, got "${raw}" [usage]\n` +
        "hint: pass a whole number, for example --max-build-concurrency 1\n",
    );
  });
}

Deno.test("main() lists --max-build-concurrency in the help of exp", async () => {
  const io = createFakeIo();
  assert.equal(await main(["exp", "--help"], io), 0);
  assert.match(io.stdout.text(), /--max-build-concurrency <n>\s+image\/template builds at once/);
});
