/** The handle contract (sandboxes.md rules 17–19), run against the local provider and the fake. */
import assert from "node:assert/strict";
import { hasSandboxCode, type SandboxHandle } from "../../src/sandbox/mod.ts";
import { createFakeClock } from "../_fakes/clock.ts";
import { createFakeProvider } from "../_fakes/provider.ts";
import { localTestBed, testOwner } from "./_local.ts";

type Make = () => Promise<{ handle: SandboxHandle } & AsyncDisposable>;

const makers: Record<string, Make> = {
  local: async () => {
    const bed = await localTestBed();
    return { handle: await bed.create(), [Symbol.asyncDispose]: () => bed[Symbol.asyncDispose]() };
  },
  fake: async () => {
    const provider = createFakeProvider({ clock: createFakeClock() });
    const handle = await provider.create("plan", {
      owner: testOwner(),
      lifetimeMs: Infinity,
      signal: new AbortController().signal,
      progress: () => {},
      diagnostic: () => {},
    });
    return { handle, [Symbol.asyncDispose]: () => handle.stop() };
  },
};

for (const [name, make] of Object.entries(makers)) {
  Deno.test(`${name} handle: writeFile() then readFile() and exists() round-trip`, async () => {
    await using bed = await make();
    const { handle } = bed;
    await handle.writeFile("dir/f.bin", new Uint8Array([0, 1, 255]));
    assert.deepEqual(
      await handle.readFile(`${handle.workdir}/dir/f.bin`),
      new Uint8Array([0, 1, 255]),
    );
    assert.equal(await handle.exists("dir"), true);
    assert.equal(await handle.exists("dir/none"), false);
  });

  Deno.test(`${name} handle: readFile() rejects missing paths and directories by code`, async () => {
    await using bed = await make();
    const { handle } = bed;
    await handle.writeFile("dir/f", new Uint8Array());
    await assert.rejects(
      () => handle.readFile("nope"),
      (e) => hasSandboxCode(e, "sandbox-file-not-found"),
    );
    await assert.rejects(
      () => handle.readFile("dir"),
      (e) => hasSandboxCode(e, "sandbox-path-invalid"),
    );
  });

  Deno.test(`${name} handle: stop() is idempotent and later calls reject as retired`, async () => {
    await using bed = await make();
    const { handle } = bed;
    assert.deepEqual(await handle.ensureLifetime?.(1000), { ready: true });
    await handle.stop();
    await handle.stop();
    await assert.rejects(
      () => handle.exec({ argv: ["true"] }),
      (e) => hasSandboxCode(e, "sandbox-retired"),
    );
    await assert.rejects(
      () => handle.writeFile("x", new Uint8Array()),
      (e) => hasSandboxCode(e, "sandbox-retired"),
    );
  });
}
