/** A facade over a fake handle, with its evidence and diagnostics, for the facade tests. */
import { createFacade, type FacadeOptions } from "../../src/sandbox/mod.ts";
import type { CommandEvidence, EvalSandbox, SandboxDiagnostic } from "../../src/sandbox/mod.ts";
import { createFakeClock, type FakeClock } from "../_fakes/clock.ts";
import {
  createFakeProvider,
  type FakeHandle,
  type FakeProviderOptions,
} from "../_fakes/provider.ts";
import { createSeededRandom } from "../_fakes/random.ts";

/** A facade and everything around it. */
export interface FacadeBed {
  readonly clock: FakeClock;
  readonly handle: FakeHandle;
  readonly sb: EvalSandbox;
  readonly evidence: CommandEvidence[];
  readonly diagnostics: SandboxDiagnostic[];
  readonly attempt: AbortController;
}

/** Builds a facade over a fresh fake handle. */
export async function facadeBed(
  o: {
    provider?: Omit<FakeProviderOptions, "clock">;
    facade?: Partial<Omit<FacadeOptions, "handle" | "clock" | "random" | "signal">>;
  } = {},
): Promise<FacadeBed> {
  const clock = createFakeClock();
  const provider = createFakeProvider({ clock, ...o.provider });
  const attempt = new AbortController();
  const handle = await provider.create("plan", {
    owner: {
      host: "h",
      pid: 1,
      processStart: "unknown",
      runId: "r",
      provisionToken: "0".repeat(32),
    },
    lifetimeMs: Infinity,
    signal: attempt.signal,
    progress: () => {},
    diagnostic: () => {},
  }) as FakeHandle;
  const evidence: CommandEvidence[] = [];
  const diagnostics: SandboxDiagnostic[] = [];
  const sb = createFacade({
    handle,
    shell: "bash",
    clock,
    random: createSeededRandom(3),
    signal: attempt.signal,
    hostDir: "/nonexistent-host-dir",
    phase: () => "test",
    onEvidence: (e) => evidence.push(e),
    onDiagnostic: (d) => diagnostics.push(d),
    ...o.facade,
  });
  return { clock, handle, sb, evidence, diagnostics, attempt };
}

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
