/**
 * The reuse identity of a sandbox layer (REC-4, CARRY-2): provider, options, lifetime, hooks and
 * prepare steps by source, a custom provider's definition, and the fixture's content. Editing any
 * of them makes carried results ineligible; moving the project does not.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { canonicalJson, sha256Hex } from "../_shared/mod.ts";
import { layerState } from "./_layer_state.ts";
import type { SandboxLayer } from "./types.ts";

/** `sha256:<hex>` identity of `layer`, or null for no layer. */
export async function layerIdentity(layer: SandboxLayer | undefined): Promise<string | null> {
  if (layer === undefined) return null;
  const s = layerState(layer);
  const source = (fn: unknown) => sha256Hex(String(fn));
  return `sha256:${
    sha256Hex(canonicalJson({
      provider: s.provider ?? null,
      spec: s.spec,
      lifetimeMs: s.lifetimeMs ?? null,
      hooks: s.hooks.map((hook) => [hook.kind, source(hook.fn)]),
      prepare: s.prepare.map((step) => typeof step === "function" ? `fn:${source(step)}` : step),
      custom: s.custom
        ? {
          name: s.custom.name,
          create: source(s.custom.create),
          recommendedConcurrency: s.custom.recommendedConcurrency,
          exclusive: s.custom.exclusive,
        }
        : null,
      fixture: s.fixture
        ? { declared: s.fixture.declared, content: await treeDigest(s.fixture.path) }
        : null,
    }))
  }`;
}

/** Digest of a directory tree: relative paths, file contents and link targets, sorted. */
async function treeDigest(root: string): Promise<string> {
  const hash = createHash("sha256");
  const walk = async (dir: string, rel: string): Promise<void> => {
    const entries = (await Array.fromAsync(Deno.readDir(dir))).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    );
    for (const entry of entries) {
      if (entry.name === ".niceeval") continue;
      const path = join(dir, entry.name);
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isSymlink) hash.update(`l\u0000${name}\u0000${await Deno.readLink(path)}\u0000`);
      else if (entry.isDirectory) {
        hash.update(`d\u0000${name}\u0000`);
        await walk(path, name);
      } else {
        hash.update(`f\u0000${name}\u0000${sha256Hex(await Deno.readFile(path))}\u0000`);
      }
    }
  };
  try {
    await walk(root, "");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    return "missing";
  }
  return hash.digest("hex");
}
