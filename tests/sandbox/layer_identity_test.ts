import assert from "node:assert/strict";
import { join } from "node:path";
import { layerIdentity, localSandbox, sandboxLayer } from "../../src/sandbox/mod.ts";

Deno.test("layerIdentity() is stable and changes with options, hooks, prepare steps and fixture content", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "fx"));
    await Deno.writeTextFile(join(dir, "fx", "a.txt"), "one");
    const fixture = join(dir, "fx");
    const base = await layerIdentity(localSandbox({ fixture }));
    assert.match(base!, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await layerIdentity(localSandbox({ fixture })), base, "stable");
    assert.equal(await layerIdentity(undefined), null);
    assert.notEqual(await layerIdentity(localSandbox({ fixture, passEnv: ["X"] })), base);
    assert.notEqual(await layerIdentity(localSandbox({ fixture }).prepare("echo hi")), base);
    assert.notEqual(await layerIdentity(localSandbox({ fixture }).setup(async () => {})), base);
    assert.notEqual(
      await layerIdentity(localSandbox({ fixture }).setup(async () => {})),
      await layerIdentity(
        localSandbox({ fixture }).setup(async (sb) => void await sb.pathExists("x")),
      ),
      "hook source matters",
    );
    assert.notEqual(await layerIdentity(sandboxLayer({ fixture })), base, "template-less differs");
    await Deno.writeTextFile(join(dir, "fx", "a.txt"), "two");
    assert.notEqual(
      await layerIdentity(localSandbox({ fixture })),
      base,
      "fixture content matters",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
