/**
 * Reads published Runs (REC-10, REC-11): only Runs with a zero-byte `complete` marker exist for
 * readers; every document read is validated, and a bad one is `record-invalid` naming the file.
 *
 * Nothing read from the Record leaves the root: every identifier that becomes part of a path is
 * checked against its grammar first (REC-1), every directory on the way to a document must be a
 * real directory (no symbolic link), and every document a regular file, checked with `lstat`
 * before it is opened (a FIFO would block the open forever).
 */
import { basename, dirname, join } from "node:path";
import {
  type EntryKind,
  invalid,
  isPublished,
  kindOf,
  listDir,
  NotRegularError,
  problemOf,
  runDirOf,
} from "./_reader_fs.ts";
import pLimit from "p-limit";
import { errorMessage, UsageError } from "../_shared/mod.ts";
import {
  ASSERTIONS_SCHEMA,
  type AssertionsDoc,
  ATTEMPT_SCHEMA,
  type AttemptDoc,
  EVENTS_SCHEMA,
  MEMBER_SCHEMA,
  type MemberDoc,
  RECORD_SCHEMA,
  RUN_HEADER_SCHEMA,
  RUN_SCHEMA,
  type RunDoc,
} from "./schema.ts";
import { LOG_NAME, SCHEMA_VERSION } from "./documents.ts";
import { isRecordUuid, isSlotId, slotIdOf } from "./ids.ts";
import {
  type AttemptRecord,
  indexRunLog,
  LogProblem,
  memberProblem,
  readAttemptRecord,
  type RunIndex,
  type StoredVerdict,
  verdictOf,
} from "./_run_index.ts";
import type { ZodType } from "zod";

/** A published Run. */
export interface PublishedRun {
  readonly runId: string;
  readonly dir: string;
  /** 1: documents in files; 2: a header and one append-only log (docs/record.md). */
  readonly layout: 1 | 2;
  /** Of a v2 Run, completion and diagnostics are known once {@link RecordReader.details} ran. */
  readonly doc: RunDoc;
  /** `startedAt` as epoch ms, for CARRY-1 ordering. */
  readonly startedAtMs: number;
}

/** An executed Attempt read back, with its recomputed verdict (REC-6). */
export interface StoredAttempt {
  readonly doc: AttemptDoc;
  readonly verdict: StoredVerdict;
  /** Directory of the Attempt inside its origin Run (v1), or the origin Run's directory (v2). */
  readonly dir: string;
  /** Of a v2 Attempt: where its record lies in the origin Run's log. */
  readonly log: { readonly path: string; readonly offset: number; readonly length: number } | null;
}

/** What a scan of the root found. */
interface RecordScan {
  readonly runs: readonly PublishedRun[];
  /** Run directories without a valid `complete` marker. */
  readonly unpublished: readonly string[];
}

/** Reads one Record root; caches what it read. */
export class RecordReader {
  readonly root: string;
  readonly #limit = pLimit(16);
  #scan: Promise<RecordScan> | undefined;
  #publishedIds: Promise<ReadonlySet<string>> | undefined;
  readonly #attempts = new Map<string, Promise<StoredAttempt>>();
  /** Indexes of v2 Runs' logs, by RunId. */
  readonly #indexes = new Map<string, Promise<RunIndex>>();
  /** Directories below the root checked to be real directories, by absolute path. */
  readonly #dirs = new Map<string, Promise<void>>();
  /**
   * What each entry of a checked directory is, by the directory's absolute path: one listing per
   * directory tells the kind of every document in it, instead of one `lstat` per document.
   */
  readonly #listings = new Map<string, Promise<ReadonlyMap<string, EntryKind>>>();

  /** Each indexed Attempt keeps its assertions and events ({@link RecordReader.runDocuments}). */
  readonly #keepDocuments: boolean;

  /**
   * @param options.keepDocuments Keep every Attempt's assertions and events while indexing a Run,
   *   for a reader that reports them all: one pass over each log instead of two.
   */
  constructor(root: string, options: { readonly keepDocuments?: boolean } = {}) {
    this.root = root;
    this.#keepDocuments = options.keepDocuments ?? false;
  }

  /** Lists published Runs (validated `run.json`) and unpublished Run directories. */
  scan(): Promise<RecordScan> {
    this.#scan ??= this.#doScan();
    return this.#scan;
  }

  /**
   * The Run directories by their `complete` marker alone, reading no Run document: what `clean`
   * needs, so that a damaged published Run never stops the removal of unpublished ones.
   */
  async markers(): Promise<{ readonly published: string[]; readonly unpublished: string[] }> {
    const names = await this.#runNames();
    const marked = await Promise.all(
      names.map((name) => this.#limit(() => isPublished(join(this.root, "runs", name)))),
    );
    const published = names.filter((_, i) => marked[i]);
    // A published-looking directory whose name is no RunId is damage, never a Run to read.
    const misnamed = published.find((name) => !isRecordUuid(name));
    if (misnamed !== undefined) {
      const dir = join(this.root, "runs", misnamed);
      throw invalid(this.root, dir, dir, "the directory name is not a RunId (a lowercase UUID v4)");
    }
    return { published, unpublished: names.filter((_, i) => !marked[i]) };
  }

  async #doScan(): Promise<RecordScan> {
    const { published, unpublished } = await this.markers();
    const runs = await Promise.all(published.map((name) => this.#limit(() => this.#readRun(name))));
    return { runs, unpublished };
  }

  /** Checks `record.json` (REC-2, REC-11), then lists the Run directories, sorted. */
  async #runNames(): Promise<string[]> {
    const recordPath = join(this.root, "record.json");
    const record = await this.#readJson(recordPath, null).catch((error) => {
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
    const runs = join(this.root, "runs");
    const names: string[] = [];
    try {
      await this.#realDir(runs);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return names;
      throw error;
    }
    for (const entry of await listDir(this.root, runs)) {
      if (entry.isSymlink) {
        const path = join(runs, entry.name);
        throw invalid(this.root, path, path, "is a symbolic link, not a Run directory");
      }
      if (entry.isDirectory) names.push(entry.name);
    }
    return names.sort();
  }

  async #readRun(name: string): Promise<PublishedRun> {
    const dir = join(this.root, "runs", name);
    const raw = await this.#readJson(join(dir, "run.json"), dir);
    const version = (raw as { schemaVersion?: unknown } | null)?.schemaVersion;
    if (typeof version === "number" && version > SCHEMA_VERSION) {
      throw new UsageError(
        "record-version-unsupported",
        `${
          join(dir, "run.json")
        }: schemaVersion ${version} is newer than this niceeval reads (${SCHEMA_VERSION})`,
        "upgrade niceeval, or move the Run out of the root",
      );
    }
    const layout = version === 2 ? 2 : 1;
    const doc: RunDoc = layout === 1 ? this.#parse(join(dir, "run.json"), RUN_SCHEMA, dir, raw) : {
      ...this.#parse(join(dir, "run.json"), RUN_HEADER_SCHEMA, dir, raw),
      completedAt: null,
      completion: null,
      diagnostics: [],
    };
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
    const wrong = doc.expectedSlots.findIndex((s) => s.slotId !== slotIdOf(s.evalId, s.ordinal));
    if (wrong >= 0) {
      throw invalid(
        this.root,
        join(dir, "run.json"),
        dir,
        `expectedSlots.${wrong}.slotId does not match its evalId and ordinal`,
      );
    }
    return { runId: name, dir, layout, doc, startedAtMs };
  }

  /** How a published Run ended and its diagnostics; of a v2 Run, read from its log. */
  async details(
    run: PublishedRun,
  ): Promise<Pick<RunDoc, "completedAt" | "completion" | "diagnostics">> {
    if (run.layout === 1) return run.doc;
    const index = await this.#index(run);
    return {
      completedAt: index.end?.completedAt ?? null,
      completion: index.end?.completion ?? null,
      diagnostics: index.diagnostics,
    };
  }

  /** The index of a published v2 Run's log, read in one pass and kept. */
  #index(run: PublishedRun): Promise<RunIndex> {
    let index = this.#indexes.get(run.runId);
    if (!index) {
      const path = join(run.dir, LOG_NAME);
      index = this.#limit(async () => {
        const bytes = await this.#readBytes(path, run.dir);
        try {
          return indexRunLog(bytes, run.runId, true, this.#keepDocuments);
        } catch (error) {
          if (error instanceof LogProblem) throw invalid(this.root, path, run.dir, error.message);
          throw error;
        }
      });
      this.#indexes.set(run.runId, index);
    }
    return index;
  }

  /** The member of `slotId` in a published Run; a missing member makes the Run invalid. */
  async member(run: PublishedRun, slotId: string): Promise<MemberDoc> {
    if (!isSlotId(slotId)) {
      throw invalid(this.root, join(run.dir, "run.json"), run.dir, `"${slotId}" is not a SlotId`);
    }
    if (run.layout === 2) {
      const member = (await this.#index(run)).members.get(slotId);
      if (member) return member;
      throw invalid(this.root, join(run.dir, LOG_NAME), run.dir, `has no member of slot ${slotId}`);
    }
    return await this.#limit(async () => {
      const path = join(run.dir, "members", `${slotId}.json`);
      const doc = await this.#readDoc(path, MEMBER_SCHEMA, run.dir);
      const problem = memberProblem(doc, slotId, run.runId);
      if (problem) throw invalid(this.root, path, run.dir, problem);
      return doc;
    });
  }

  /**
   * The member of one expected slot of a published Run and the Attempt it references, checked
   * against each other: the member belongs to the slot, a reference points into a published Run,
   * and the Attempt is the slot's (experiment, eval, ordinal). Anything else makes the Run invalid,
   * naming the member file.
   */
  async slot(
    run: PublishedRun,
    slot: { readonly slotId: string; readonly evalId: string; readonly ordinal: number },
  ): Promise<{ readonly member: MemberDoc; readonly stored: StoredAttempt | null }> {
    const member = await this.member(run, slot.slotId);
    const path = run.layout === 1
      ? join(run.dir, "members", `${slot.slotId}.json`)
      : join(run.dir, LOG_NAME);
    if (member.evalId !== slot.evalId || member.ordinal !== slot.ordinal) {
      throw invalid(
        this.root,
        path,
        run.dir,
        `names ${member.evalId}#${member.ordinal}, but run.json expects ${slot.evalId}#${slot.ordinal}`,
      );
    }
    const ref = member.attempt;
    if (!ref) return { member, stored: null };
    this.#publishedIds ??= this.scan().then(({ runs }) => new Set(runs.map((r) => r.runId)));
    if (ref.originRunId !== run.runId && !(await this.#publishedIds).has(ref.originRunId)) {
      throw invalid(
        this.root,
        path,
        run.dir,
        `references Attempt ${ref.attemptId} of run ${ref.originRunId}, which is not a published Run`,
      );
    }
    const stored = await this.attempt(ref.originRunId, ref.attemptId);
    const d = stored.doc;
    if (
      d.experimentId !== run.doc.experimentId || d.evalId !== slot.evalId ||
      d.ordinal !== slot.ordinal
    ) {
      throw invalid(
        this.root,
        path,
        run.dir,
        `references Attempt ${ref.attemptId} of ${d.experimentId} · ${d.evalId}#${d.ordinal}, not of this slot`,
      );
    }
    return { member, stored };
  }

  /**
   * The AttemptIds of a published Run's `attempts/` directory; a Run that executed nothing may
   * have none. An entry that is a symbolic link or a directory not named by an AttemptId makes the
   * Run invalid.
   */
  async attemptIds(run: PublishedRun): Promise<string[]> {
    if (run.layout === 2) return [...(await this.#index(run)).attempts.keys()].sort();
    const dir = join(run.dir, "attempts");
    try {
      await this.#realDir(dir);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      throw error;
    }
    const ids: string[] = [];
    for (const entry of await listDir(this.root, dir, run.dir)) {
      const path = join(dir, entry.name);
      if (entry.isSymlink) throw invalid(this.root, path, run.dir, "is a symbolic link");
      if (!entry.isDirectory) continue;
      if (!isRecordUuid(entry.name)) {
        throw invalid(this.root, path, run.dir, "the directory name is not an AttemptId");
      }
      ids.push(entry.name);
    }
    return ids.sort();
  }

  /** An executed Attempt of `originRunId`, with its verdict recomputed from its assertions. */
  attempt(originRunId: string, attemptId: string): Promise<StoredAttempt> {
    if (!isRecordUuid(originRunId) || !isRecordUuid(attemptId)) {
      // Checked before either becomes part of a path: `../..` must never leave the root.
      return Promise.reject(
        invalid(
          this.root,
          this.root,
          null,
          `Attempt "${attemptId}" of run "${originRunId}" is not named by UUIDs`,
        ),
      );
    }
    const key = `${originRunId}/${attemptId}`;
    let found = this.#attempts.get(key);
    if (!found) {
      found = this.#findAttempt(originRunId, attemptId);
      this.#attempts.set(key, found);
    }
    return found;
  }

  /** An Attempt of a v2 origin Run from its index, else (v1) from its files. */
  async #findAttempt(originRunId: string, attemptId: string): Promise<StoredAttempt> {
    const { runs } = await this.scan();
    const origin = runs.find((r) => r.runId === originRunId);
    if (origin?.layout !== 2) {
      return await this.#limit(() => this.#readAttempt(originRunId, attemptId));
    }
    const found = (await this.#index(origin)).attempts.get(attemptId);
    const path = join(origin.dir, LOG_NAME);
    if (!found) throw invalid(this.root, path, origin.dir, `has no Attempt ${attemptId}`);
    return {
      doc: found.doc,
      verdict: found.verdict,
      dir: origin.dir,
      log: { path, offset: found.offset, length: found.length },
    };
  }

  /** The three documents of a v2 Attempt, read again from its record in the log. */
  async #attemptRecord(stored: StoredAttempt): Promise<AttemptRecord> {
    const { path, offset, length } = stored.log!;
    try {
      return await readAttemptRecord(path, offset, length, stored.doc.originRunId);
    } catch (error) {
      const problem = error instanceof LogProblem ? error.message : problemOf(error);
      throw invalid(this.root, path, stored.dir, problem);
    }
  }

  async #readAttempt(originRunId: string, attemptId: string): Promise<StoredAttempt> {
    const runDir = join(this.root, "runs", originRunId);
    const dir = join(runDir, "attempts", attemptId);
    const path = join(dir, "attempt.json");
    const doc = await this.#readDoc(path, ATTEMPT_SCHEMA, runDir);
    if (doc.attemptId !== attemptId || doc.originRunId !== originRunId) {
      throw invalid(
        this.root,
        path,
        runDir,
        `names Attempt ${doc.attemptId} of run ${doc.originRunId}, not its own directory`,
      );
    }
    if (doc.slotId !== slotIdOf(doc.evalId, doc.ordinal)) {
      throw invalid(this.root, path, runDir, "slotId does not match its evalId and ordinal");
    }
    const assertions = await this.#readDoc(join(dir, "assertions.json"), ASSERTIONS_SCHEMA, runDir);
    // Nothing in a verdict comes from events.json, but an Attempt that is reused or reported must
    // be whole: a damaged transcript fails here, not later in `show @<locator>`.
    await this.#readDoc(join(dir, "events.json"), EVENTS_SCHEMA, runDir);
    return { doc, verdict: verdictOf(doc, assertions), dir, log: null };
  }

  /** The assertions document of a stored Attempt. */
  async assertions(stored: StoredAttempt): Promise<AssertionsDoc> {
    if (stored.log) return (await this.#attemptRecord(stored)).assertions;
    return await this.#readDoc(
      join(stored.dir, "assertions.json"),
      ASSERTIONS_SCHEMA,
      join(stored.dir, "..", ".."),
    );
  }

  /** The events document of a stored Attempt. */
  async events(stored: StoredAttempt): Promise<Record<string, unknown>> {
    if (stored.log) return (await this.#attemptRecord(stored)).events;
    return await this.#readDoc(
      join(stored.dir, "events.json"),
      EVENTS_SCHEMA,
      join(stored.dir, "..", ".."),
    ) as Record<string, unknown>;
  }

  /** The assertions and events documents of a stored Attempt, read once (a v2 record). */
  async documents(
    stored: StoredAttempt,
  ): Promise<{ assertions: AssertionsDoc; events: Record<string, unknown> }> {
    if (!stored.log) {
      return { assertions: await this.assertions(stored), events: await this.events(stored) };
    }
    const { assertions, events } = await this.#attemptRecord(stored);
    return { assertions, events };
  }

  /**
   * The assertions and events documents of every Attempt a v2 Run executed, by AttemptId, from
   * the one pass that indexes its log (a reader made with `keepDocuments`); null for a v1 Run,
   * whose Attempts are read one by one, or without `keepDocuments`.
   */
  async runDocuments(
    run: PublishedRun,
  ): Promise<Map<string, { assertions: AssertionsDoc; events: Record<string, unknown> }> | null> {
    if (run.layout === 1 || !this.#keepDocuments) return null;
    const documents = new Map<
      string,
      { assertions: AssertionsDoc; events: Record<string, unknown> }
    >();
    for (const [attemptId, found] of (await this.#index(run)).attempts) {
      if (found.documents) documents.set(attemptId, found.documents);
    }
    return documents;
  }

  /** `attempt.json` of a stored Attempt as written, every key kept (`show --json`). */
  async attemptJson(stored: StoredAttempt): Promise<unknown> {
    if (stored.log) return (await this.#attemptRecord(stored)).attempt;
    return await this.#readJson(join(stored.dir, "attempt.json"), join(stored.dir, "..", ".."));
  }

  async #readDoc<T>(path: string, schema: ZodType<T>, runDir: string | null): Promise<T> {
    return this.#parse(path, schema, runDir, await this.#readJson(path, runDir));
  }

  #parse<T>(path: string, schema: ZodType<T>, runDir: string | null, raw: unknown): T {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalid(
        this.root,
        path,
        runDir,
        `${issue?.path.join(".") || "document"}: ${issue?.message ?? "invalid"}`,
      );
    }
    return parsed.data;
  }

  /** Parses one JSON document read by {@link RecordReader.#readBytes}. */
  async #readJson(path: string, runDir: string | null): Promise<unknown> {
    const text = new TextDecoder().decode(await this.#readBytes(path, runDir));
    try {
      return JSON.parse(text);
    } catch (error) {
      throw invalid(this.root, path, runDir, `invalid JSON: ${errorMessage(error)}`);
    }
  }

  /**
   * Reads one file whose directory is a real directory inside the root and which is a regular
   * file; both are checked (by listing the directories) before the file is opened. A missing
   * `record.json` (`runDir` null) rejects with `NotFound`; everything else is `record-invalid`.
   */
  async #readBytes(path: string, runDir: string | null): Promise<Uint8Array> {
    try {
      const kind = (await this.#listing(dirname(path))).get(basename(path));
      if (kind === undefined) throw new Deno.errors.NotFound(path);
      if (kind !== "regular file") throw new NotRegularError(kind);
      return await Deno.readFile(path);
    } catch (error) {
      if (runDir === null && error instanceof Deno.errors.NotFound) throw error;
      if (error instanceof UsageError) throw error;
      throw invalid(this.root, path, runDir, problemOf(error));
    }
  }

  /**
   * Resolves when `dir` and every directory between the root and it are real directories, not
   * symbolic links; rejects with `NotFound` when one is missing, else with `record-invalid`.
   */
  #realDir(dir: string): Promise<void> {
    if (dir === this.root) return Promise.resolve();
    let checked = this.#dirs.get(dir);
    if (!checked) {
      checked = this.#listing(dirname(dir)).then((entries) => {
        const kind = entries.get(basename(dir));
        if (kind === undefined) throw new Deno.errors.NotFound(dir);
        if (kind !== "directory") {
          throw invalid(this.root, dir, runDirOf(this.root, dir), `is a ${kind}, not a directory`);
        }
      });
      this.#dirs.set(dir, checked);
    }
    return checked;
  }

  /** The kinds of the entries of `dir`, once `dir` is known to be a real directory. */
  #listing(dir: string): Promise<ReadonlyMap<string, EntryKind>> {
    let listed = this.#listings.get(dir);
    if (!listed) {
      listed = this.#realDir(dir).then(async () => {
        const kinds = new Map<string, EntryKind>();
        try {
          for await (const entry of Deno.readDir(dir)) kinds.set(entry.name, kindOf(entry));
        } catch (error) {
          // A missing directory (no Record yet, no `runs/`) is for the caller to judge.
          if (error instanceof Deno.errors.NotFound) throw error;
          throw invalid(
            this.root,
            dir,
            runDirOf(this.root, dir),
            `cannot list: ${errorMessage(error)}`,
          );
        }
        return kinds;
      });
      this.#listings.set(dir, listed);
    }
    return listed;
  }
}
