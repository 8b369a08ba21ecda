/** The launchers' V8 heap settings (issue 20, docs/memory.md). */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { LAUNCHER_V8_FLAGS } from "../../src/_shared/heap_flags.ts";
import { REPO_ROOT } from "./_tree.ts";

Deno.test("issue 20: the npm launcher passes the same V8 heap settings as the compiled binary", async () => {
  const launcher = await readFile(join(REPO_ROOT, "npm/bin/niceeval.cjs"), "utf8");
  assert.ok(launcher.includes(`"--v8-flags=${LAUNCHER_V8_FLAGS}"`), launcher);
});

Deno.test("issue 20: V8 accepts every launcher heap setting", async () => {
  // An unknown V8 flag makes Deno exit 1 with "V8 did not recognize flag".
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `--v8-flags=${LAUNCHER_V8_FLAGS}`, "console.log('ok')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stderr), "");
  assert.equal(out.code, 0);
  assert.equal(new TextDecoder().decode(out.stdout), "ok\n");
});
