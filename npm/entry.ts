/**
 * The CLI entry of the npm package (toolchain.md §10.7), bundled into `dist/cli.js`. The four
 * public namespaces come through the `niceeval*` bare names, which stay external: the launcher's
 * import map points them at `dist/*.js`, so the CLI installs the very objects that user files
 * import.
 *
 * @module
 */
import * as root from "niceeval";
import * as expect from "niceeval/expect";
import * as adapter from "niceeval/adapter";
import * as sandbox from "niceeval/sandbox";
import { runProcess } from "../src/cli/process.ts";

// Not awaited, like mod.ts: `runProcess` ends the process itself.
runProcess({
  api: { root, expect, adapter, sandbox },
  apiUrls: {
    "niceeval": import.meta.resolve("niceeval"),
    "niceeval/expect": import.meta.resolve("niceeval/expect"),
    "niceeval/adapter": import.meta.resolve("niceeval/adapter"),
    "niceeval/sandbox": import.meta.resolve("niceeval/sandbox"),
  },
});
