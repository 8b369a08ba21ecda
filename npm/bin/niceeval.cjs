#!/usr/bin/env node
// The `niceeval` command of the npm package (toolchain.md §10.3): starts the bundled CLI on the
// Deno binary of the `deno` dependency. Node core modules only; this file is not bundled.
"use strict";

const { spawn } = require("node:child_process");
const { createHash, randomBytes } = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { pathToFileURL } = require("node:url");

/** The package root: the folder above `bin/`. */
const PACKAGE_ROOT = path.resolve(__dirname, "..");
const DIST = path.join(PACKAGE_ROOT, "dist");
/** The four public entries, by the bare name user files import them with. */
const API_FILES = {
  "niceeval": "mod.js",
  "niceeval/expect": "expect.js",
  "niceeval/adapter": "adapter.js",
  "niceeval/sandbox": "sandbox.js",
};
/** Relayed to the Deno child; the launcher keeps running until the child exits (§10.4). */
const RELAYED_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];
/** The hint that the import-map builder appends to its messages. */
const HINT_REGEXP = /\s*\(hint: (.*)\)$/;
/** Exit code of a usage error: nothing could run. */
const EXIT_USAGE = 2;

/** `linux-x64-glibc`, `darwin-arm64`, …: the platform named when Deno cannot start. */
function platformName() {
  if (process.platform !== "linux") {
    return `${process.platform}-${process.arch}`;
  }
  let glibc = false;
  try {
    const report = process.report.getReport();
    glibc = Boolean(
      (typeof report === "string" ? JSON.parse(report) : report).header
        .glibcVersionRuntime,
    );
  } catch {
    // No report: say nothing about the C library rather than guess.
    return `linux-${process.arch}`;
  }
  return `linux-${process.arch}-${glibc ? "glibc" : "musl"}`;
}

/** Prints the one line of §10.3.5 and exits 2. */
function cannotStartDeno(reason) {
  process.stderr.write(
    `niceeval: cannot start Deno on ${platformName()}: ${reason} ` +
      `(hint: use the standalone niceeval binary on this platform)\n`,
  );
  process.exit(EXIT_USAGE);
}

/** The Deno binary, through the `deno` package's install API (works after --ignore-scripts). */
function denoPath() {
  try {
    return require("deno/install_api.cjs").runInstall();
  } catch (error) {
    return cannotStartDeno(
      error instanceof Error ? error.message.split("\n")[0] : String(error),
    );
  }
}

/** Writes `text` under a content-hash name in the OS temp directory, atomically (§8.13). */
function writeImportMap(text) {
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 32);
  const file = path.join(os.tmpdir(), `niceeval-import-map-${hash}.json`);
  try {
    if (fs.readFileSync(file, "utf8") === text) return file;
  } catch {
    // Absent or unreadable: written below.
  }
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    fs.writeFileSync(temp, text, { mode: 0o644 });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
  return file;
}

/** Builds the project's import map (`niceeval*` → `dist/*.js`, the user's imports merged). */
async function importMapFile(cwd) {
  const { buildImportMap, importMapText } = await import(
    pathToFileURL(path.join(DIST, "import_map.mjs")).href
  );
  const apiUrls = {};
  for (const [name, file] of Object.entries(API_FILES)) {
    apiUrls[name] = pathToFileURL(path.join(DIST, file)).href;
  }
  const readText = (file) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch (error) {
      if (error && (error.code === "ENOENT" || error.code === "ENOTDIR")) {
        return undefined;
      }
      throw error;
    }
  };
  return writeImportMap(
    importMapText(buildImportMap({ root: cwd, readText, apiUrls })),
  );
}

/** Runs the child with relayed signals and ends this process the way the child ended (§10.4). */
function runChild(deno, args) {
  const child = spawn(deno, args, {
    stdio: "inherit",
    env: {
      ...process.env,
      DENO_NO_UPDATE_CHECK: "1",
      NICEEVAL_PARENT_PID: String(process.pid),
    },
  });
  const relays = RELAYED_SIGNALS.map((signal) => {
    const relay = () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill(signal);
      }
    };
    process.on(signal, relay);
    return () => process.removeListener(signal, relay);
  });
  child.on("error", (error) => {
    relays.forEach((remove) => remove());
    cannotStartDeno(`${deno}: ${error.code ?? error.message}`);
  });
  child.on("exit", (code, signal) => {
    relays.forEach((remove) => remove());
    if (signal === null) process.exit(code ?? 1);
    // Without listeners the signal takes its default action, so the caller sees the child's
    // signal as this process's own. The timer only covers a signal whose default is to ignore.
    process.kill(process.pid, signal);
    setTimeout(
      () => process.exit(128 + (os.constants.signals[signal] ?? 0)),
      1000,
    );
  });
}

async function launch() {
  const deno = denoPath();
  let map;
  try {
    map = await importMapFile(process.cwd());
  } catch (error) {
    // Worded like the CLI's own `config-invalid` usage error (cli.md ERR-5).
    const text = error instanceof Error ? error.message : String(error);
    const hint = HINT_REGEXP.exec(text);
    process.stderr.write(
      `error: ${text.replace(HINT_REGEXP, "")} [config-invalid]\n` +
        `hint: ${hint === null ? "fix the file named above" : hint[1]}\n`,
    );
    process.exit(EXIT_USAGE);
  }
  runChild(deno, [
    "run",
    "-A",
    "--no-lock",
    "--quiet",
    "--cached-only",
    // Deno reads no module of a literal dynamic import before it runs: the commands and the
    // packages they use load only when a command needs them (docs/start.md).
    "--unstable-lazy-dynamic-imports",
    // The V8 heap settings of the launchers (src/_shared/heap_flags.ts, docs/memory.md).
    "--v8-flags=--max-semi-space-size=2,--heap-growing-percent=30",
    `--import-map=${map}`,
    path.join(DIST, "cli.js"),
    ...process.argv.slice(2),
  ]);
}

launch().catch((error) => {
  process.stderr.write(
    `niceeval launcher: ${error && error.stack ? error.stack : error}\n`,
  );
  process.exit(3);
});
