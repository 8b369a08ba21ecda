/**
 * `niceeval ramp hold|resume|set|reset|status` (CMD-18, RAMP-10 … RAMP-12): steers the adaptive
 * cap of every ramped run of the project through the control file; none needs a live run.
 */
import { formatDuration, isoTime, UsageError } from "../_shared/mod.ts";
import {
  listLiveRamps,
  RAMP_REASON_MAX,
  type RampControlFile,
  readRampControl,
  updateRampControl,
} from "../coordination/mod.ts";
import type { Io } from "./io.ts";
import { requireConfig } from "./project.ts";
import { parseRampRange } from "./ramp_options.ts";

/** What one `ramp` command was asked to do. */
export type RampCommand =
  | { readonly action: "hold"; readonly reason: string | undefined }
  | { readonly action: "resume" | "reset" | "status" }
  | { readonly action: "set"; readonly range: string | undefined };

/** Runs one `ramp` command in the project at the working directory; returns the exit code. */
export async function runRamp(io: Io, command: RampCommand): Promise<number> {
  const root = io.cwd;
  const change = changeOf(command, io); // usage errors come before anything is read
  await requireConfig(root);
  if (change === null) return await status(io, root);
  const next = await updateRampControl(root, change, { clock: io.clock });
  const live = await listLiveRamps(root);
  io.stdout.write(`${controlLine(next)}\n`);
  io.stdout.write(`${live.length} live ramped run(s) will apply this at their next window\n`);
  return 0;
}

/** The change a mutating command makes, or null for `status`. */
function changeOf(
  command: RampCommand,
  io: Io,
): ((current: RampControlFile) => Pick<RampControlFile, "hold" | "range">) | null {
  switch (command.action) {
    case "hold": {
      const reason = command.reason?.trim() ?? "";
      if (reason.length < 1 || reason.length > RAMP_REASON_MAX) {
        throw new UsageError(
          "usage",
          command.reason === undefined
            ? "niceeval ramp hold needs --reason"
            : `--reason must be 1–${RAMP_REASON_MAX} characters, got ${reason.length}`,
          `for example niceeval ramp hold --reason "provider quota"`,
        );
      }
      const hold = { reason, since: isoTime(io.clock.now()), by: `pid ${io.pid}@${io.hostname}` };
      return (current) => ({ hold, range: current.range });
    }
    case "resume":
      return (current) => ({ hold: null, range: current.range });
    case "set": {
      if (command.range === undefined) {
        throw new UsageError(
          "ramp-invalid",
          "niceeval ramp set needs <from>:<to>",
          "for example niceeval ramp set 4:16",
        );
      }
      const range = parseRampRange(command.range, "ramp set <from>:<to>");
      return (current) => ({ hold: current.hold, range });
    }
    case "reset":
      return (current) => ({ hold: current.hold, range: null });
    case "status":
      return null;
  }
}

/** `ramp status`: the control line, then one line per live ramped run (CMD-18). */
async function status(io: Io, root: string): Promise<number> {
  const read = readRampControl(root);
  io.stdout.write(
    "invalid" in read
      ? `control  invalid (${read.invalid}); runs keep their previous settings\n`
      : `${controlLine(read)}\n`,
  );
  const now = io.clock.now();
  for (const entry of await listLiveRamps(root)) {
    const updated = Date.parse(entry.updatedAt);
    const age = Number.isNaN(updated) ? "?" : formatDuration(Math.max(0, now - updated));
    const state = entry.state === "held" ? `held: ${entry.heldReason ?? ""}` : entry.state;
    io.stdout.write(
      `${
        entry.invocationId.slice(0, 8)
      }  pid ${entry.pid}  cap ${entry.cap}  range ${entry.from}–${entry.to}  ${state}  updated ${age} ago\n`,
    );
  }
  return 0;
}

/** `control  seq <n> · hold <reason|none> · range <from>–<to>|configured`. */
function controlLine(control: RampControlFile): string {
  const hold = control.hold ? `held: ${control.hold.reason}` : "not held";
  const range = control.range
    ? `range ${control.range.from}–${control.range.to}`
    : "configured range";
  return `control  seq ${control.seq} · ${hold} · ${range}`;
}
