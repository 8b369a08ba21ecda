/**
 * `niceeval doctor docker [--json]` (sandboxes.md rules 119–120, cli.md CMD-19): reports the
 * daemon and whether its address pools can hold the docker machine budget. Inside a project it
 * reads `maxSandboxes.docker` from the config; it never loads evals or experiments. Exit 0 when
 * the daemon answers and nothing needs fixing, else 1.
 */
import { join } from "node:path";
import { errorMessage } from "../_shared/mod.ts";
import { CONFIG_FILE, loadConfig } from "../config/mod.ts";
import { type DockerDoctorReport, inspectDocker } from "../sandbox/mod.ts";
import type { Io } from "./io.ts";
import { projectLoader } from "./project.ts";

/** Options of `doctor docker`. */
export interface DoctorOptions {
  readonly json: boolean;
}

/** `doctor docker`: exit 0 when the daemon answers and nothing needs fixing, else 1. */
export async function runDoctorDocker(io: Io, o: DoctorOptions): Promise<number> {
  const configured = await configuredDockerBudget(io);
  const endpoint = io.env.DOCKER_HOST || "unix:///var/run/docker.sock";
  let report: DockerDoctorReport;
  let text: string;
  try {
    ({ report, text } = await inspectDocker(io.env, {
      cpus: io.cpus,
      ...(configured !== undefined ? { configuredMaxSandboxes: configured } : {}),
      signal: io.interrupt,
      clock: io.clock,
    }));
  } catch (error) {
    io.interrupt.throwIfAborted();
    const message = errorMessage(error);
    if (o.json) {
      io.stdout.write(
        JSON.stringify(document({ endpoint, reachable: false, error: message })) + "\n",
      );
    } else {
      io.stdout.write(`docker: ${message}\n`);
    }
    return 1;
  }
  io.stdout.write(o.json ? JSON.stringify(document({ reachable: true, ...report })) + "\n" : text);
  return report.fix ? 1 : 0;
}

/** The `--json` document: the report, or the endpoint and error when the daemon did not answer. */
function document(body: Record<string, unknown>) {
  return { format: "niceeval.doctor.docker", schemaVersion: 1, ...body };
}

/** `maxSandboxes.docker` of the project in the current directory, when it has a config. */
async function configuredDockerBudget(io: Io): Promise<number | undefined> {
  try {
    if (!(await Deno.stat(join(io.cwd, CONFIG_FILE))).isFile) return undefined;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  const config = await loadConfig(io.cwd, await projectLoader(io, io.cwd));
  return config.maxSandboxes.docker;
}
