/**
 * The ramp's links to the project's files during an `exp` run: the control file read at each
 * window end (RAMP-9) and the Invocation's live file under its flock (RAMP-11).
 */
import { isoTime } from "../_shared/mod.ts";
import { openLiveRamp, readRampControl } from "../coordination/mod.ts";
import type { RampControlRead, RampOptions } from "../scheduler/mod.ts";
import type { Io } from "./io.ts";
import type { PlannedRun } from "./plan_run.ts";

/** The scheduler's ramp options, and the live file to remove when the run ends. */
export interface RampFiles extends AsyncDisposable {
  readonly options: RampOptions;
}

/** The control file as the window controller reads it. */
export function rampControlReader(projectRoot: string): () => RampControlRead {
  return () => {
    const read = readRampControl(projectRoot);
    if ("invalid" in read) return read;
    return { hold: read.hold ? { reason: read.hold.reason } : null, range: read.range };
  };
}

/**
 * Opens the live file of a ramped run (null when the run does not ramp). A failed write of the
 * live file never fails the run: `ramp status` then shows the previous window's state.
 */
export async function openRampFiles(
  io: Io,
  projectRoot: string,
  invocation: { readonly id: string; readonly planned: PlannedRun },
): Promise<RampFiles | null> {
  const ramp = invocation.planned.ramp;
  if (!ramp) return null;
  const live = await openLiveRamp(projectRoot, { invocationId: invocation.id, pid: io.pid });
  const { from, to, step, windowMs } = ramp;
  return {
    options: {
      settings: { from, to, step, windowMs },
      readControl: rampControlReader(projectRoot),
      publish: (status) => {
        try {
          live.publish({
            cap: status.cap,
            from: status.from,
            to: status.to,
            state: status.state,
            heldReason: status.heldReason,
            updatedAt: isoTime(io.clock.now()),
          });
        } catch {
          // best effort (see above)
        }
      },
    },
    [Symbol.asyncDispose]: () => live.close(),
  };
}
