/**
 * Reads published Runs (REC-10, REC-11): only Runs with a zero-byte `complete` marker exist for
 * readers; every document read is validated, and a bad one is `record-invalid` naming the file.
 */
import { join, relative } from "node:path";
import pLimit from "p-limit";
import { errorMessage, UsageError } from "../_shared/mod.ts";
import { foldVerdict, type SealedAssertion } from "../expect/mod.ts";
import {
  ASSERTIONS_SCHEMA,
  type AssertionsDoc,
  ATTEMPT_SCHEMA,
  type AttemptDoc,
  EVENTS_SCHEMA,
  MEMBER_SCHEMA,
  type MemberDoc,
  RECORD_SCHEMA,
  RUN_SCHEMA,
  type RunDoc,
} from "./schema.ts";
import { SCHEMA_VERSION } from "./documents.ts";
import type { ZodType } from "zod";

/** A published Run. */
export interface PublishedRun {
  readonly runId: string;
  readonly dir: string;
  readonly doc: RunDoc;
  /** `startedAt` as epoch ms, for CARRY-1 ordering. */
  readonly startedAtMs: number;
}

/** An executed Attempt read back, with its recomputed verdict (REC-6). */
export interface StoredAttempt {
  readonly doc: AttemptDoc;
  readonly verdict: "passed" | "failed" | "errored" | "skipped" | "scored" | "interrupted";
  /** Directory of the Attempt inside its origin Run. */
  readonly dir: string;
}

/** What a scan of the root found. */
export interface RecordScan {
  readonly runs: readonly PublishedRun[];
  /** Run directories without a valid `complete` marker. */
  readonly unpublished: readonly string[];
}

/** Reads one Record root; caches what it read. */
export class RecordReader {
  readonly root: string;
  readonly #limit = pLimit(16);
  #scan: Promise<RecordScan> | undefined;
  readonly #attempts = new Map<string, Promise<StoredAttempt>>();

  constructor(root: string) {
    this.root = root;
  }

  /** Lists published Runs (validated `run.json`) and unpublished Run directories. */
  scan(): Promise<RecordScan> {
    this.#scan ??= this.#doScan();
    return this.#scan;
  }

  async #doScan(): Promise<RecordScan> {
    const recordPath = join(this.root, "record.json");
    const record = await readJson(recordPath, this.root, null).catch((error) => {
      if (error instanceof Deno.errors.NotFound) return undefined;
      throw error;
    });
    if (record !== undefined) {
      const parsed = RECORD_SCHEMA.safeParse(record);
      if (!parsed.success) throw invalid(this.root, recordPath, null, "not a niceeval record.json");
      if (parsed.data.schemaVersion > SCHEMA_VERSION) {
        throw new UsageError(
          "record-version-unsupported",
          `${recordPath}: schemaVersion ${parsed.data.schemaVersion} is newer than this niceeval reads (${SCHEMA_VERSION})`,
          "upgrade niceeval, or use another --record root",
        );
      }
    }
    const names: string[] = [];
    try {
      for await (const entry of Deno.readDir(join(this.root, "runs"))) {
        if (entry.isDirectory) names.push(entry.name);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    names.sort();
    const checked = await Promise.all(names.map((name) => this.#limit(() => this.#readRun(name))));
    return {
      runs: checked.filter((r): r is PublishedRun => r !== undefined),
      unpublished: names.filter((_, i) => checked[i] === undefined),
    };
  }

  async #readRun(name: string): Promise<PublishedRun | undefined> {
    const dir = join(this.root, "runs", name);
    try {
      const info = await Deno.lstat(join(dir, "complete"));
      if (!info.isFile || info.size !== 0) return undefined;
    } catch {
      return undefined;
    }
    const doc = await readDoc(join(dir, "run.json"), RUN_SCHEMA, this.root, dir);
    if (doc.runId !== name) {
      throw invalid(
        this.root,
        join(dir, "run.json"),
        dir,
        `runId "${doc.runId}" does not match its directory`,
      );
    }
    const startedAtMs = Date.parse(doc.startedAt);
    if (!Number.isFinite(startedAtMs)) {
      throw invalid(this.root, join(dir, "run.json"), dir, "startedAt is not a date");
    }
    return { runId: name, dir, doc, startedAtMs };
  }

  /** The member of `slotId` in a published Run; a missing member makes the Run invalid. */
  member(run: PublishedRun, slotId: string): Promise<MemberDoc> {
    return this.#limit(() =>
      readDoc(join(run.dir, "members", `${slotId}.json`), MEMBER_SCHEMA, this.root, run.dir)
    );
  }

  /** An executed Attempt of `originRunId`, with its verdict recomputed from its assertions. */
  attempt(originRunId: string, attemptId: string): Promise<StoredAttempt> {
    const key = `${originRunId}/${attemptId}`;
    let found = this.#attempts.get(key);
    if (!found) {
      found = this.#limit(() => this.#readAttempt(originRunId, attemptId));
      this.#attempts.set(key, found);
    }
    return found;
  }

  async #readAttempt(originRunId: string, attemptId: string): Promise<StoredAttempt> {
    const runDir = join(this.root, "runs", originRunId);
    const dir = join(runDir, "attempts", attemptId);
    const doc = await readDoc(join(dir, "attempt.json"), ATTEMPT_SCHEMA, this.root, runDir);
    const assertions = await readDoc(
      join(dir, "assertions.json"),
      ASSERTIONS_SCHEMA,
      this.root,
      runDir,
    );
    return { doc, verdict: verdictOf(doc, assertions), dir };
  }

  /** The assertions document of a stored Attempt. */
  assertions(stored: StoredAttempt): Promise<AssertionsDoc> {
    return readDoc(
      join(stored.dir, "assertions.json"),
      ASSERTIONS_SCHEMA,
      this.root,
      join(stored.dir, "..", ".."),
    );
  }

  /** The events document of a stored Attempt. */
  events(stored: StoredAttempt): Promise<Record<string, unknown>> {
    return readDoc(
      join(stored.dir, "events.json"),
      EVENTS_SCHEMA,
      this.root,
      join(stored.dir, "..", ".."),
    ) as Promise<Record<string, unknown>>;
  }
}

/** Recomputes a verdict from a stored Attempt (REC-6). */
export function verdictOf(doc: AttemptDoc, assertions: AssertionsDoc): StoredAttempt["verdict"] {
  if (doc.outcome === "interrupted") return "interrupted";
  if (doc.outcome === "errored") return "errored";
  if (doc.outcome === "cancelled" || doc.skipReason !== null) return "skipped";
  const folded = foldVerdict({
    kind: doc.kind,
    executionError: false,
    skipped: false,
    entries: assertions.entries as unknown as readonly SealedAssertion[],
  });
  return folded.verdict;
}

async function readDoc<T>(
  path: string,
  schema: ZodType<T>,
  root: string,
  runDir: string | null,
): Promise<T> {
  const raw = await readJson(path, root, runDir);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(
      root,
      path,
      runDir,
      `${issue?.path.join(".") || "document"}: ${issue?.message ?? "invalid"}`,
    );
  }
  return parsed.data;
}

async function readJson(path: string, root: string, runDir: string | null): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    if (runDir === null) throw error;
    throw invalid(
      root,
      path,
      runDir,
      error instanceof Deno.errors.NotFound ? "file is missing" : errorMessage(error),
    );
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw invalid(root, path, runDir, `invalid JSON: ${errorMessage(error)}`);
  }
}

function invalid(root: string, path: string, runDir: string | null, detail: string): UsageError {
  return new UsageError(
    "record-invalid",
    `${path}: ${detail}`,
    runDir
      ? `move ${relative(root, runDir) || runDir} out of ${root}, then run the command again`
      : `fix or move ${path}, then run the command again`,
  );
}
